"""The client side of a real-server conversation, shared by every interop test module.

``Peer`` answers what a server may ask (sampling, elicitation, roots) and records it, plus
every notification; ``Connections`` opens clients on fresh transports and closes them all at
the end of a test. Neither knows which transport is used: a test module passes a function
that builds a new ``Transport``.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Sequence

from mcpclient import (
    Client,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitationRequest,
    ElicitationResult,
    Plugins,
    Root,
    Transport,
)

#: How long a test waits for something the server sends on its own (a notification, a request).
WAIT = 10.0
#: The model name the sampling handler reports.
MODEL = "interop-model"


class Peer:
    """Handlers for everything a server may ask, recording what they were given.

    ``reply`` is the text the fake model answers sampling requests with; ``elicitation`` is
    the answer to every elicitation request (or a function of the request). ``roots`` are
    exposed to ``roots/list``. Call ``install(client)`` before ``initialize()`` so the
    capabilities are declared.
    """

    def __init__(
        self,
        *,
        reply: str = "Hello from the fake model",
        elicitation: ElicitationResult | Callable[[ElicitationRequest], ElicitationResult] | None = None,
        roots: Sequence[Root | str] = (Root(uri="file:///srv/project", name="project"),),
        elicitation_modes: Sequence[str] = ("form",),
    ) -> None:
        self.reply = reply
        self.default_elicitation = elicitation or ElicitationResult(action="accept", content={"name": "Ann"})
        self.elicitation = self.default_elicitation
        self.roots = list(roots)
        self.elicitation_modes = tuple(elicitation_modes)
        self.sampling_requests: list[CreateMessageRequest] = []
        self.elicitation_requests: list[ElicitationRequest] = []
        self.notifications: list[tuple[str, dict[str, Any]]] = []
        self._cond = threading.Condition()

    def install(
        self,
        client: Client,
        *,
        sampling: bool = True,
        elicitation: bool = True,
        roots: bool = True,
        notifications: bool = True,
    ) -> Client:
        if sampling:
            client.set_sampling_handler(self.sample)
        if elicitation:
            client.set_elicitation_handler(self.elicit, modes=self.elicitation_modes)
        if roots:
            client.set_roots(self.roots)
        if notifications:
            client.set_notification_handler(self.notify)
        return client

    def reset(self) -> None:
        """Forget what was recorded and answer elicitations as at creation (between tests)."""
        with self._cond:
            self.sampling_requests.clear()
            self.elicitation_requests.clear()
            self.notifications.clear()
            self.elicitation = self.default_elicitation

    # -- the handlers -------------------------------------------------------------------------

    def sample(self, request: CreateMessageRequest) -> CreateMessageResult:
        with self._cond:
            self.sampling_requests.append(request)
            self._cond.notify_all()
        return CreateMessageResult.from_text(self.reply, model=MODEL)

    def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        with self._cond:
            self.elicitation_requests.append(request)
            self._cond.notify_all()
        answer = self.elicitation
        return answer(request) if callable(answer) else answer

    def notify(self, method: str, params: dict[str, Any]) -> None:
        with self._cond:
            self.notifications.append((method, params))
            self._cond.notify_all()

    # -- waiting --------------------------------------------------------------------------------

    def received(self, method: str, where: Callable[[dict[str, Any]], bool] = lambda p: True) -> list[dict]:
        """The params of every ``method`` notification so far that satisfy ``where``."""
        with self._cond:
            return [p for m, p in self.notifications if m == method and where(p)]

    def wait_for(
        self,
        method: str,
        where: Callable[[dict[str, Any]], bool] = lambda p: True,
        *,
        count: int = 1,
        timeout: float = WAIT,
    ) -> list[dict[str, Any]]:
        """Block until ``count`` matching notifications arrived; fail the test after ``timeout``."""
        end = time.monotonic() + timeout
        with self._cond:
            while True:
                found = [p for m, p in self.notifications if m == method and where(p)]
                if len(found) >= count:
                    return found
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"expected {count} {method!r} notification(s) within {timeout}s, got "
                        f"{len(found)}; everything received: {self.notifications!r}"
                    )
                self._cond.wait(left)


class Connections:
    """Opens initialized clients on fresh transports; ``close_all()`` closes every one."""

    def __init__(self, make_transport: Callable[[], Transport], *, timeout: float = 15.0) -> None:
        self.make_transport = make_transport
        self.timeout = timeout
        self.clients: list[Client] = []

    def open(
        self,
        peer: Peer | None = None,
        *,
        initialize: bool = True,
        max_dispatch: int = 16,
        cache: bool = False,
        **install: bool,
    ) -> Client:
        """A client whose handlers (``peer``, installed with ``install`` flags) are set before
        ``initialize()``."""
        client = Client(self.make_transport(), timeout=self.timeout, max_dispatch=max_dispatch,
                        plugins=Plugins(cache=cache))
        self.clients.append(client)
        if peer is not None:
            peer.install(client, **install)
        if initialize:
            client.initialize()
        return client

    def close_all(self) -> None:
        for client in self.clients:
            client.close()
