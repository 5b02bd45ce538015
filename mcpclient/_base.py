"""What every part of ``Client`` may rely on: its state and its core helpers.

``Client`` is assembled from mixins, one per feature area (calls, notifications, tasks,
skills, elicitation). Each inherits this declaration so the type checker knows what the
assembled class provides; at run time it adds nothing.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable

from . import types as t

if TYPE_CHECKING:
    from ._cache import ResultCache
    from ._handlers import Handlers
    from ._logging import LogRouter
    from ._rpc.cancel import CancelToken
    from ._rpc.engine import ProgressCallback
    from ._session import Session
    from ._structured import OutputValidator
    from ._subscriptions import Listener
    from .transports.base import Transport

__all__ = ["ClientBase"]


class ClientBase:
    # The state Client.__init__ sets up.
    transport: Transport
    _session: Session
    _handlers: Handlers
    _cache: ResultCache | None
    _outputs: OutputValidator
    _logs: LogRouter
    _listener: Listener
    _resource_updated: Callable[[str], None] | None
    _list_changed: Callable[[str], None] | None
    _subscribed: set[str]
    _state: str

    if TYPE_CHECKING:

        @property
        def server_capabilities(self) -> dict[str, Any]: ...

        @property
        def server_info(self) -> t.Implementation | None: ...

        def _timeout(self, timeout: float | None) -> float | None: ...

        def _require_open(self) -> None: ...

        def _require(self, capability: str, method: str) -> None: ...

        def _call(
            self,
            method: str,
            params: dict[str, Any] | None,
            timeout: float | None,
            *,
            on_progress: ProgressCallback | None = None,
            max_total: float | None = None,
            cancel: CancelToken | threading.Event | None = None,
        ) -> dict[str, Any]: ...

        def list_tools(self, *, timeout: float | None = ...) -> list[t.ToolDef]: ...

        def read_resource(
            self,
            uri: str,
            *,
            timeout: float | None = ...,
            on_progress: ProgressCallback | None = None,
            cancel: CancelToken | threading.Event | None = None,
        ) -> list[t.ResourceContents]: ...

        def _on_task_status(self, params: dict[str, Any]) -> None: ...

        def _on_elicitation_complete(self, params: dict[str, Any]) -> None: ...
