"""The ``mcpclient`` command line (also ``python -m mcpclient``); see ``mcpclient --help``.

``main(argv)`` runs one command and returns its exit code, for use from Python and tests.
"""

from ._main import EXIT_CODES, main

__all__ = ["EXIT_CODES", "main"]
