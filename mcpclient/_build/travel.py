"""How a shared client travels to another process: as what it connects to, never as a connection.

Engines ship work by pickling its arguments (``ProcessPoolExecutor`` with ``spawn``, joblib,
Dask, Ray). ``SharedClient`` and ``SharedGroup`` pickle as their spec (the target, the options,
the retry mode), checked here so that an option that cannot travel is named in the error
rather than found deep in a pickler's traceback. Nothing live is in the spec: the open client,
its session id, its tokens and its server stay in the process that opened them.

One per process: an engine unpickles a task's arguments for every task, so a spec received
again in the same process must give the same object back (or each task would start a server).
Every shared client gets an identity when it is made; the first time a process receives one,
it is built and kept for the life of the process; the next times, that one is returned. In
the process that made it, the original is returned.
"""

from __future__ import annotations

import inspect
import os
import pickle
import threading
import uuid
import weakref
from typing import Any, Callable, Iterable, Mapping, TypeVar

import attrs

__all__ = ["Setting", "check_travels", "made", "option_items", "received"]

T = TypeVar("T")

_lock = threading.RLock()  # received() builds under it, and building registers
#: Every shared client made or received in this process, by identity (the originals weakly:
#: they belong to whoever made them).
_known: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
#: The ones this process received, kept for its life: a worker reuses them for every task.
_kept: dict[str, Any] = {}

#: What to do about an option that cannot be pickled (the end of every such error).
ADVICE = (
    "give a module-level function or a picklable object instead, or create the shared client "
    "in the worker (at import of the module its tasks live in)"
)


def made(value: object) -> str:
    """Register a new shared client; returns its identity (carried by its pickle)."""
    ident = uuid.uuid4().hex
    with _lock:
        _known[ident] = value
    return ident


def received(ident: str, build: Callable[[], T]) -> T:
    """The shared client ``ident`` of this process: the one made or received here, or
    ``build()`` (then kept) the first time this process sees it."""
    with _lock:
        found: T | None = _known.get(ident)
        if found is None:
            found = _kept[ident] = _known[ident] = build()
        return found


def check_travels(what: str, items: Iterable[tuple[str, Any]]) -> None:
    """Raise ``TypeError`` naming the first ``(name, value)`` that the standard pickler refuses
    (an item of a list or tuple is named with its index), with what to do about it.

    Checked with ``pickle`` itself: what passes here pickles the same way inside any engine.
    """
    for name, value in items:
        parts = list(enumerate(value)) if isinstance(value, (list, tuple)) and not _plain(value) else None
        for label, item in ((f"{name}[{i}]", v) for i, v in parts) if parts is not None else [(name, value)]:
            try:
                pickle.dumps(item)
            except Exception as exc:
                raise TypeError(
                    f"{what} cannot be pickled: {label} ({_describe(item)}) cannot be ({type(exc).__name__}: "
                    f"{(str(exc).splitlines() or [''])[0]}); {ADVICE}"
                ) from exc


def option_items(options: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """What ``check_travels`` checks of a shared client's options: each option, and each field
    of a group (``handlers=Handlers(sampling=...)``), so that the error names the very field."""
    items: list[tuple[str, Any]] = []
    for key, value in options.items():
        if attrs.has(type(value)):
            kind = type(value).__name__
            items += [(f"the option {key}={kind}({name}=...)", field)
                      for name, field in attrs.asdict(value, recurse=False).items()]
        else:
            items.append((f"the option {key}", value))
    return items


class Setting:
    """A setting made on a shared client after it was made (``set_roots([...])``,
    ``on_request(method, handler)``): the ``Client`` method to call on every client it opens,
    and its arguments. It pickles as that, so it travels with the shared client."""

    __slots__ = ("args", "kwargs", "name")

    def __init__(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.name = name
        self.args = args
        self.kwargs = kwargs

    def __call__(self, client: Any) -> None:
        getattr(client, self.name)(*self.args, **self.kwargs)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_setting, (self.name, self.args, self.kwargs))

    def arguments(self) -> list[tuple[str, Any]]:
        """Its arguments as ``check_travels`` names them (``set_roots(), called after construction, argument 1``)."""
        label = f"{self.name}(), called after construction,"
        named = [(f"{label} argument {i + 1}", value) for i, value in enumerate(self.args)]
        return named + [(f"{label} argument {key}", value) for key, value in self.kwargs.items()]


def _setting(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Setting:
    return Setting(name, *args, **kwargs)


def _plain(value: list[Any] | tuple[Any, ...]) -> bool:
    """A list of strings (a command) is checked whole: naming an argv item helps nobody."""
    return all(isinstance(item, (str, bytes, os.PathLike)) for item in value)


def _describe(value: Any) -> str:
    """The kind of a value, and a function's or class's name (never a repr: an object may
    carry a credential)."""
    if inspect.isroutine(value) or inspect.isclass(value):
        return f"{type(value).__name__} {value.__qualname__}"
    return f"a {type(value).__name__}"


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
