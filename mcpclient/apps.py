"""MCP Apps (SEP-1865, extension ``io.modelcontextprotocol/ui``): a tool's interactive view.

A server links a tool to an HTML view (a ``ui://`` resource of type
``text/html;profile=mcp-app``) in the tool's ``_meta.ui``. With ``Plugins(apps=True)`` (or
``connect(..., plugins=Plugins(apps=True))``, or ``Client(extensions=[Apps()])``: the same built-in extension)
mcpclient declares the extension, reads each tool's link into ``ToolDef.ui``, and fetches a
view once per connection (``Client.read_ui_resource``). In a live Jupyter front end with the
``apps`` extra installed, a tool result then renders as the view; everywhere else it shows as
any other result.

The visibility rule holds with or without ``apps=True``: a tool whose ``_meta.ui.visibility``
lacks ``"model"`` is never offered to a model (``visible_to_model``), and only a tool whose
visibility includes ``"app"`` may be called by a view (``visible_to_app``). Calling any tool
from Python yourself still works.

The code lives in ``mcpclient.plugins.apps``; this module is its public face.
"""

from __future__ import annotations

from ._client.app_views import EXTENSION, MIME_TYPE, AppCall, AppHost, UIResource, visible_to_app, visible_to_model
from .plugins.apps.extension import Apps
from .plugins.apps.result import AppResult

__all__ = [
    "EXTENSION",
    "MIME_TYPE",
    "AppCall",
    "AppHost",
    "AppResult",
    "Apps",
    "UIResource",
    "visible_to_app",
    "visible_to_model",
]
