"""The interfaces through which ``Client``'s feature methods reach a built-in extension.

A ``Client`` method that belongs to a feature (``read_ui_resource`` is MCP Apps') stays on
``Client`` for compatibility and delegates: it asks its ``Seam`` for the extension that
implements the feature's interface (``Seam.feature(UIViews)``) and calls it, or says how to
turn the feature on. The interfaces are declared here, with the data types they return, so
the client core knows the interface of a feature and never the module that implements it.
"""

from __future__ import annotations

import abc

from ._app_views import UIResource

__all__ = ["UIResource", "UIViews"]


class UIViews(abc.ABC):
    """MCP Apps: the views of tools (``Client.read_ui_resource``)."""

    #: What the Client says when no extension implements the interface.
    missing = "MCP Apps are off for this client: create it with apps=True"

    @abc.abstractmethod
    def read_ui_resource(self, uri: str, timeout: float | None) -> UIResource:
        """The view at ``uri`` with its ``_meta.ui``, read once per connection."""
