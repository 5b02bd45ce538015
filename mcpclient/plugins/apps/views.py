"""MCP Apps' data: the views, their policy, the visibility rule (kept in ``mcpclient._app_views``,
below the client core, since ``Client.read_ui_resource`` returns a ``UIResource``)."""

from ..._app_views import (
    CSP_KEYS,
    EXTENSION,
    MIME_TYPE,
    PERMISSIONS,
    AppCall,
    AppHost,
    UIResource,
    allow_attribute,
    content_security_policy,
    visible_to_app,
    visible_to_model,
)

__all__ = [
    "CSP_KEYS",
    "EXTENSION",
    "MIME_TYPE",
    "PERMISSIONS",
    "AppCall",
    "AppHost",
    "UIResource",
    "allow_attribute",
    "content_security_policy",
    "visible_to_app",
    "visible_to_model",
]
