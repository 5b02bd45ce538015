"""What every protocol era provides: the result of opening, and the ``Era`` strategy.

A session is opened once (``Conversation.open``: the ``initialize`` handshake, or
``server/discover``); what it found is a ``HandshakeResult`` and one ``Era`` object, chosen
there and never changed. After that, everything that differs between the eras is a method of
that object, so the client's features ask the era instead of testing which one it is:

======================  ============================  ==================================
                        legacy (2024-11-05..2025-11)  modern (2026-07-28)
======================  ============================  ==================================
each request            sent as given                 ``_meta``: version, client, level
``ping``                ``ping``                      ``server/discover``
log level               ``logging/setLevel``          ``_meta`` of every request
resource subscriptions  ``resources/subscribe``       the ``subscriptions/listen`` filter
list changes            pushed by the server          the ``subscriptions/listen`` filter
roots changed           ``roots/list_changed``        nothing (asked for on demand)
late handlers           not declared: warn            declared with the next request
tasks                   ``task`` field, tasks/result  extension, tasks/get + tasks/update
======================  ============================  ==================================
"""

from __future__ import annotations

import abc
import logging
from typing import Any, ClassVar, Mapping, Protocol

from attrs import frozen

from ... import types as t
from ..._core.options import CallOptions
from ..wire import structure

__all__ = ["Era", "HandshakeResult", "Messenger", "handshake_result", "read_capabilities"]

log = logging.getLogger(__name__)

@frozen(kw_only=True)
class HandshakeResult:
    """What opening a session learned of the server, in either era."""

    protocol_version: str
    server_info: t.Implementation
    capabilities: dict[str, Any]
    instructions: str | None


def read_capabilities(result: dict[str, Any], answer: str) -> dict[str, Any]:
    """The server's capabilities in its ``answer`` (``initialize``, ``server/discover``): a
    result without a capabilities object is taken to declare none, with a warning (be liberal
    in what you accept: the session opens, and a call of a feature it did not declare raises
    ``CapabilityError`` as it would with an empty object)."""
    capabilities = result.get("capabilities")
    if isinstance(capabilities, dict):
        return capabilities
    log.warning(
        "the server's %s result has no capabilities object (%s): taking it to declare none",
        answer, "missing" if capabilities is None else f"a {type(capabilities).__name__}",
    )
    return {}


def handshake_result(result: dict[str, Any], version: str, answer: str, info: Any) -> HandshakeResult:
    """What the server's ``answer`` (``initialize``, ``server/discover``) told of it: ``info``
    is its ``Implementation`` as sent (anything but an object reads as a nameless one)."""
    instructions = result.get("instructions")
    return HandshakeResult(
        protocol_version=version,
        server_info=structure(info, t.Implementation) if isinstance(info, dict) else t.Implementation(name=""),
        capabilities=read_capabilities(result, answer),
        instructions=instructions if isinstance(instructions, str) else None,
    )


class Messenger(Protocol):
    """What an era needs of its session: send one logical request or a notification.

    ``Conversation`` is the one implementation; the protocol keeps the eras below the session.
    """

    @property
    def capabilities(self) -> dict[str, Any]: ...

    def call(self, method: str, params: dict[str, Any] | None, options: CallOptions) -> dict[str, Any]: ...

    def notify(self, method: str, params: dict[str, Any] | None, options: CallOptions) -> None: ...


class Era(abc.ABC):
    """One protocol era's rules for a session already open (see the table above)."""

    #: "legacy" or "modern", as ``Conversation.era`` names it.
    name: ClassVar[str]
    #: Whether a task's outcome comes from the blocking ``tasks/result`` (which also carries
    #: the server's input requests), rather than inline from ``tasks/get`` with input
    #: answered by ``tasks/update``.
    blocking_task_result: ClassVar[bool]
    #: Whether a tool must allow tasks (``execution.taskSupport``) before it is called as one
    #: (2025-11-25); in the 2026 tasks extension the server alone decides.
    tools_declare_task_support: ClassVar[bool]

    @property
    @abc.abstractmethod
    def version(self) -> str:
        """The protocol version the session speaks."""

    @abc.abstractmethod
    def decorate(self, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` as this era sends them (a copy when anything is added)."""

    @abc.abstractmethod
    def ping(self, messenger: Messenger, options: CallOptions) -> None:
        """Check that the server answers."""

    @abc.abstractmethod
    def set_log_level(self, messenger: Messenger, level: str, options: CallOptions) -> None:
        """Ask for server log messages at ``level`` and above."""

    @abc.abstractmethod
    def subscribe(self, messenger: Messenger, uri: str, options: CallOptions) -> None:
        """Start ``resources/updated`` notices for ``uri`` (or let the listen filter do it)."""

    @abc.abstractmethod
    def unsubscribe(self, messenger: Messenger, uri: str, options: CallOptions) -> None:
        """Stop them."""

    @abc.abstractmethod
    def listen_filter(
        self, capabilities: dict[str, Any], wants_lists: bool, subscribed: set[str]
    ) -> dict[str, Any] | None:
        """The ``subscriptions/listen`` filter to hold open, or None when the server pushes unasked."""

    @abc.abstractmethod
    def roots_changed(self, messenger: Messenger, options: CallOptions) -> None:
        """Tell the server that the client's roots changed, where the era has a way."""

    @abc.abstractmethod
    def handler_set_late(self, what: str) -> None:
        """A handler was installed after opening: say so where the server cannot learn of it."""

    # The task rules are static: the tasks plug-in reads them from the era's class, picked by
    # the name a ``Session`` gives (``mcpclient._protocol.eras.named.era_named``).

    @staticmethod
    @abc.abstractmethod
    def require_tasks(capabilities: Mapping[str, Any], action: str) -> None:
        """Raise ``CapabilityError`` unless the server supports task ``action``: ``"start"`` (a
        tool as a task), ``"get"``, ``"list"`` or ``"cancel"``."""

    @staticmethod
    @abc.abstractmethod
    def task_params(params: dict[str, Any], ttl: float | None) -> dict[str, Any]:
        """The ``tools/call`` params that ask for a task."""

    @staticmethod
    @abc.abstractmethod
    def task_state(result: dict[str, Any]) -> dict[str, Any] | None:
        """The task a ``tools/call`` result stands for, or None when it is the tool's result."""
