"""Client methods for change notifications and server logs, in either protocol era."""

from __future__ import annotations

from typing import Any, Callable

from ._base import ClientBase
from ._exceptions import CapabilityError
from ._logging import LOG_LEVELS
from ._session import LEGACY, MODERN, OPEN
from ._task import STATUS_NOTIFICATIONS
from ._timeouts import DEFAULT

__all__ = ["NotificationsMixin"]

_LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}


class NotificationsMixin(ClientBase):
    """Log levels, resource subscriptions and list-change callbacks (part of ``Client``)."""

    def set_log_level(self, level: str, *, timeout: float | None = DEFAULT) -> None:
        """Ask the server for log messages at ``level`` and above ("debug" ... "emergency").

        Legacy servers get ``logging/setLevel``; modern ones get the level in every request's
        ``_meta``. Messages go to the ``mcpclient.server`` logger unless ``set_log_handler``
        installed a callback.
        """
        if level not in LOG_LEVELS:
            raise ValueError(f"level must be one of {LOG_LEVELS}, got {level!r}")
        if self._session.era == MODERN:
            self._session.log_level = level
            return
        self._require("logging", "logging/setLevel")
        self._call("logging/setLevel", {"level": level}, timeout)

    def set_log_handler(self, handler: Callable[[str, Any, str | None], None] | None) -> None:
        """Send server log messages to ``handler(level, data, logger)`` instead of logging."""
        self._logs.handler = handler

    def set_resource_updated_handler(self, handler: Callable[[str], None] | None) -> None:
        """Call ``handler(uri)`` when a subscribed resource changes."""
        self._resource_updated = handler

    def set_list_changed_handler(self, handler: Callable[[str], None] | None) -> None:
        """Call ``handler(kind)`` ("tools", "prompts" or "resources") when a list changes."""
        self._list_changed = handler
        self._update_listener()

    def subscribe_resource(self, uri: str, *, timeout: float | None = DEFAULT) -> None:
        """Get ``resources/updated`` notifications for ``uri`` (see set_resource_updated_handler)."""
        self._require_open()
        if self._session.era == LEGACY:
            self._require_subscribe()
            self._call("resources/subscribe", {"uri": uri}, timeout)
        self._subscribed.add(uri)
        self._update_listener()

    def unsubscribe_resource(self, uri: str, *, timeout: float | None = DEFAULT) -> None:
        """Stop notifications for ``uri``."""
        self._require_open()
        if self._session.era == LEGACY:
            self._require_subscribe()
            self._call("resources/unsubscribe", {"uri": uri}, timeout)
        self._subscribed.discard(uri)
        self._update_listener()

    def _require_subscribe(self) -> None:
        resources = self.server_capabilities.get("resources")
        if not (isinstance(resources, dict) and resources.get("subscribe")):
            raise CapabilityError("resources.subscribe", "resources/subscribe")

    def _update_listener(self) -> None:
        if self._state != OPEN or self._session.era != MODERN:
            return
        caps = self.server_capabilities
        wants_lists = self._list_changed is not None or self._cache is not None
        self._listener.update(
            toolsListChanged=wants_lists and "tools" in caps,
            promptsListChanged=wants_lists and "prompts" in caps,
            resourcesListChanged=wants_lists and "resources" in caps,
            resourceSubscriptions=sorted(self._subscribed),
        )

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/message":
            self._logs.route(params, self.server_info)
        elif method in _LIST_CHANGED:
            kind = _LIST_CHANGED[method]
            if self._cache is not None:
                self._cache.drop(kind)
            if self._list_changed is not None:
                self._list_changed(kind)
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            if isinstance(uri, str):
                if self._cache is not None:
                    self._cache.drop("read", uri)
                if self._resource_updated is not None:
                    self._resource_updated(uri)
        elif method in STATUS_NOTIFICATIONS:
            self._on_task_status(params)
        elif method == "notifications/elicitation/complete":
            self._on_elicitation_complete(params)
        handler = self._handlers.notification
        if handler is not None:
            handler(method, params)

