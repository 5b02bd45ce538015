"""The ``Session`` an extension is given: one connection's requests, notices and facts.

``BoundSession`` wraps the ``Conversation`` of one wiring of a Client (a restart gives a new
one) and the client's ``Seam`` (for ``run`` and ``on_close``). It asks the Client nothing but
its state, through a callable, and its ``Timeouts`` (the default timeout, which
``Client.timeout`` changes), so an extension never holds the Client.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Collection, Mapping

from .._core.cancel import CancelToken
from .._core.credentials import Credentials
from .._core.exceptions import ClientClosedError, ConnectionClosed, MCPError
from .._core.timeouts import Timeouts
from .._core.waiting import Until
from ..extensions import Extension, Options, Session, until_of
from .conversation import CLOSED, OPEN, Conversation, identity
from .notifications import Notifications
from .seam import Seam, call_options, check_custom

__all__ = ["BoundSession"]


class BoundSession(Session):
    """The Session of one connection (see ``mcpclient.extensions.Session``)."""

    def __init__(
        self, conversation: Conversation, seam: Seam, state: Callable[[], str], timeouts: Timeouts,
        notices: Notifications,
    ) -> None:
        self._conversation = conversation
        self._notices = notices  # the listen stream's holder (Session.listen)
        self._seam = seam
        self._state = state  # the client's: unopened, open or closed
        self._timeouts = timeouts  # the client's, which Client.timeout changes

    def _check(self, method: str) -> None:
        check_custom(method)
        state = self._state()
        if state == CLOSED:
            raise ClientClosedError()
        if state != OPEN:
            raise MCPError("the client is not open yet: send requests from opened(), not bind()")

    def request(self, method: str, params: dict[str, Any] | None = None, *, options: Options) -> dict[str, Any]:
        self._check(method)
        return self._conversation.call(method, params, call_options(options))

    def notify(self, method: str, params: dict[str, Any] | None = None, *, options: Options) -> None:
        self._check(method)
        self._conversation.notify(method, params, call_options(options))

    @property
    def server_capabilities(self) -> Mapping[str, Any]:
        return self._conversation.capabilities

    @property
    def server_info(self) -> Any:
        state = self._conversation.state
        return state.server_info if state is not None else None

    @property
    def protocol_version(self) -> str:
        return self._conversation.version

    @property
    def era(self) -> str | None:
        return self._conversation.era

    @property
    def server_identity(self) -> str | None:
        return identity(self._conversation.server_key)

    @property
    def server_directory(self) -> str | None:
        return self._conversation.transport.about.directory

    @property
    def credentials(self) -> Credentials:
        return self._conversation.transport.about.credentials

    @property
    def peer(self) -> Any:
        return self._conversation.transport.about.peer

    @property
    def ended(self) -> BaseException | None:
        return self._conversation.engine.dead

    @property
    def is_open(self) -> bool:
        return self._state() == OPEN

    def until(self, options: Options | None = None, *, what: str = "the wait") -> Until:
        # The engine's lifetime ends at close() and at the connection's death; read afresh
        # (a forked child's engine replaces it).
        return until_of(options, (self._conversation.engine.lifetime,), what=what)

    @property
    def timeout(self) -> float | None:
        return self._timeouts.default

    def want_results(self, extension: Extension, methods: Collection[str]) -> None:
        self._seam.want_results(extension, methods)

    def answer_inputs(
        self, requests: Mapping[str, Any], cancel: CancelToken | threading.Event | None = None, *,
        asker: str, advice: str = "",
    ) -> dict[str, Any]:
        return self._conversation.handlers.answer_inputs(requests, cancel, asker, advice)

    def listen(self, key: str, value: Any) -> None:
        self._notices.listen(key, value)

    def listening(self, key: str) -> Any:
        return self._notices.listening(key)

    def run(self, work: Callable[[], None]) -> None:
        self._seam.run(work)

    def on_close(self, fn: Callable[[], None]) -> None:
        self._seam.on_close(fn)

    def abort(self, reason: str) -> None:
        self._conversation.engine.abort(ConnectionClosed(reason))
