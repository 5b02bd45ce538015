"""Tools for the people who write code against MCP servers (the ``mcpclient stubs`` and
``mcpclient doctor`` commands are thin wrappers of these).

* ``mcpclient.devtools.stubs``: a typed Python module for a server's tools (``generate``,
  ``stubs_for``), and ``Stub``, the base class the generated module's class runs on;
* ``mcpclient.devtools.doctor``: checks a server from the client side and reports what it
  breaks (``diagnose``).
"""

from __future__ import annotations

from .._core.exceptions import StubOutOfDate

__all__ = ["StubOutOfDate"]
