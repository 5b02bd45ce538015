"""Change notifications and server logs: what the server tells the client unasked.

``Notifications`` routes every notification (to the log router, the user's
callbacks, the elicitations, and what an extension claimed: the tasks' status notices are
the built-in tasks extension's) and keeps what the client listens for. How a
subscription or a log level reaches the server is the era's (``Era.subscribe``,
``Era.set_log_level``, ``Era.listen_filter``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable

from .._core.exceptions import SubscriptionError
from .._core.options import CallOptions
from .elicitation import Elicitation
from .handlers import Handlers
from .server_logging import LOG_LEVELS, LogRouter
from .subscriptions import ACKNOWLEDGED, Listener

if TYPE_CHECKING:
    from .conversation import Conversation

__all__ = ["ROUTED_NOTIFICATIONS", "Notifications"]

log = logging.getLogger("mcpclient")

#: The ``subscriptions/listen`` keys the client fills itself (``Era.listen_filter``).
BUILTIN_LISTEN_KEYS = frozenset({"toolsListChanged", "promptsListChanged", "resourcesListChanged",
                                 "resourceSubscriptions"})

_LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}
#: The notifications the client routes itself: no custom handler may claim them.
ROUTED_NOTIFICATIONS = frozenset({
    "notifications/message", "notifications/resources/updated", "notifications/elicitation/complete",
    "notifications/progress", "notifications/cancelled", ACKNOWLEDGED, *_LIST_CHANGED,
})


class Notifications:
    """Log levels, resource subscriptions, list-change callbacks, and notification routing."""

    def __init__(
        self,
        conversation: Conversation,
        handlers: Handlers,
        keeps_lists: bool,
        elicitation: Elicitation,
    ) -> None:
        self._conversation = conversation
        self._handlers = handlers
        self._keeps_lists = keeps_lists  # a result cache wants list changes (it drops on them)
        self._elicitation = elicitation
        self.logs = LogRouter()
        self.listener = Listener(conversation)
        self._resource_updated: Callable[[str], None] | None = None
        self._list_changed: Callable[[str], None] | None = None
        self._subscribed: set[str] = set()
        self._asked: dict[str, Any] = {}  # what extensions ask of the listen stream (Session.listen)

    def listen(self, key: str, value: Any) -> None:
        """Ask the listen stream for ``key: value`` beside the client's own keys (an empty value
        withdraws it); nothing in an era without one (``Session.listen``)."""
        if key in BUILTIN_LISTEN_KEYS:
            raise ValueError(f"{key!r} is the client's own subscriptions/listen key")
        if value:
            self._asked[key] = value
        else:
            self._asked.pop(key, None)
        self.update_listener()

    def listening(self, key: str) -> Any:
        """What the server acknowledged for ``key`` on the stream open now; None when it has not
        (or the stream is being reopened, or the era has none)."""
        honoured = self.listener.honoured()
        return None if honoured is None else honoured.get(key)

    def set_log_level(self, level: str, options: CallOptions) -> None:
        if level not in LOG_LEVELS:
            raise ValueError(f"level must be one of {LOG_LEVELS}, got {level!r}")
        self._conversation.strategy.set_log_level(self._conversation, level, options)

    def set_resource_updated_handler(self, handler: Callable[[str], None] | None) -> None:
        self._resource_updated = handler

    def set_list_changed_handler(self, handler: Callable[[str], None] | None) -> None:
        self._list_changed = handler
        self.update_listener()

    def subscribe(self, uri: str, options: CallOptions) -> None:
        self._conversation.strategy.subscribe(self._conversation, uri, options)
        timeout = options.timeout
        self._subscribed.add(uri)
        if not self.update_listener():
            return  # legacy: resources/subscribe was the server's answer
        honoured = self.listener.acknowledged(timeout)
        if honoured is not None and uri in (honoured.get("resourceSubscriptions") or ()):
            return
        self._subscribed.discard(uri)
        self.update_listener()
        if honoured is None:
            raise SubscriptionError(
                f"the server did not acknowledge the subscription to {uri!r} within {timeout:g}s"
                if timeout is not None else f"the subscription to {uri!r} ended before the server acknowledged it",
                uri=uri,
            )
        raise SubscriptionError(
            f"the server does not agree to send updates of {uri!r}: its acknowledgement leaves it out", uri=uri
        )

    def unsubscribe(self, uri: str, options: CallOptions) -> None:
        self._conversation.strategy.unsubscribe(self._conversation, uri, options)
        self._subscribed.discard(uri)
        self.update_listener()

    def update_listener(self) -> bool:
        """Hold the listen stream the era wants for what is asked now (nothing before opening);
        whether the era uses one."""
        era = self._conversation.era_strategy
        if era is None:
            return False
        wants_lists = self._list_changed is not None or self._keeps_lists
        wanted = era.listen_filter(self._conversation.capabilities, wants_lists, self._subscribed)
        if wanted is None:
            return False
        changes: dict[str, Any] = {key: None for key in self.listener.asked() if key not in BUILTIN_LISTEN_KEYS}
        changes.update(self._asked)  # an extension's keys, and the client's own, which win
        changes.update(wanted)
        self.listener.update(**changes)
        return True

    def on_notification(self, method: str, params: dict[str, Any]) -> None:
        """Route one notification from the server; runs on a dispatch thread."""
        if method == "notifications/message":
            state = self._conversation.state
            self.logs.route(params, state.server_info if state else None)
        elif method in _LIST_CHANGED:
            kind = _LIST_CHANGED[method]
            if self._list_changed is not None:
                self._list_changed(kind)
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            if isinstance(uri, str):
                if self._resource_updated is not None:
                    self._resource_updated(uri)
        elif method == "notifications/elicitation/complete":
            self._elicitation.on_complete(params)
        elif method == ACKNOWLEDGED:
            self.listener.on_acknowledged(params)
        elif (custom := self._handlers.seam.notification_handler(method)) is not None:
            try:
                custom(params)
            except Exception:  # the catch-all handler below still sees it
                log.exception("the handler of notification %r raised", method)
        handler = self._handlers.notification
        if handler is not None:
            handler(method, params)
