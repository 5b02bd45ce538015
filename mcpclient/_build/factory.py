"""Building a Client: the one place that turns a transport and options into a Client.

``connect``, ``open_target`` (so config entries and ``ClientGroup`` too) all build their
clients here, so an option given to any of them reaches the Client: the option names come
from ``Client.__init__`` itself, not from a list that could fall behind it.
"""

from __future__ import annotations

import inspect
from typing import Any, Mapping

from .._client.client import Client
from ..transports.base import Transport

__all__ = ["CLIENT_OPTIONS", "FACTORY_OPTIONS", "HANDLER_OPTIONS", "make_client", "pick_options"]

#: The keyword options of ``Client`` (everything but the transport).
CLIENT_OPTIONS: tuple[str, ...] = tuple(
    name for name in inspect.signature(Client.__init__).parameters if name not in ("self", "transport")
)
#: What is installed on the client before the handshake, so its capabilities are declared.
#: ``elicitation_modes`` are the modes the elicitation handler takes (default: form only).
HANDLER_OPTIONS: tuple[str, ...] = (
    "sampling_handler", "elicitation_handler", "elicitation_modes", "notification_handler", "roots",
)
#: Everything ``make_client`` takes.
FACTORY_OPTIONS: frozenset[str] = frozenset(CLIENT_OPTIONS + HANDLER_OPTIONS)


def pick_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options in ``options`` that ``make_client`` takes (the rest configure transports)."""
    return {name: value for name, value in options.items() if name in FACTORY_OPTIONS}


def make_client(transport: Transport, **options: Any) -> Client:
    """A Client on ``transport`` with ``options`` (Client options and handlers), not initialized.

    Raises ``TypeError`` for an option it does not know, rather than dropping it.
    """
    unknown = sorted(set(options) - FACTORY_OPTIONS)
    if unknown:
        raise TypeError(f"unknown Client option(s): {', '.join(unknown)}")
    client = Client(transport, **{name: options[name] for name in CLIENT_OPTIONS if name in options})
    if options.get("sampling_handler") is not None:
        client.set_sampling_handler(options["sampling_handler"])
    if options.get("elicitation_handler") is not None:
        client.set_elicitation_handler(options["elicitation_handler"],
                                       modes=options.get("elicitation_modes") or ("form",))
    if options.get("notification_handler") is not None:
        client.set_notification_handler(options["notification_handler"])
    if options.get("roots") is not None:
        client.set_roots(options["roots"])
    return client
