"""``SharedClient``'s copy of ``Client``'s surface, made when the class is made, never by hand.

``delegating(Client, ...)`` is a class decorator. For each public member of ``Client`` that
the decorated class does not write by hand it adds a delegate with the member's signature,
annotations and docstring, of one of four kinds:

- a *call* (a method with a ``timeout`` parameter: it talks to the server) runs on the open
  client through ``_run``, given its keyword arguments (its ``timeout`` and ``cancel`` bound
  a wait for the open, and what is left of its time goes on to the call), retried once on a
  new server when its name is among ``retried``
  (the requests that change nothing); a *tool call* (``tool_calls``: the method, and the
  parameter that names the tool) runs through ``_run_tool``, which asks the tool's annotations;
- a *setting* (a method without ``timeout``: a handler or the roots) goes through
  ``_remember`` as a ``travel.Setting``, so that it is applied to the open client and to
  every client opened later, and travels with the class's pickle;
- a *composed* method (``composed``: one written over ``Client``'s public methods only, like
  ``map_tool``) is ``Client``'s own function, so its inner calls are the delegates;
- a *property* reads the open client's.

Which members exist is read once, from the class (``public_members``), never probed at call
time; what the class writes by hand is declared (``hand_written``) and checked against its
body, so a forgotten entry fails at import rather than being silently overwritten.
"""

from __future__ import annotations

import functools
import inspect
from operator import attrgetter, methodcaller
from typing import Any, Callable, Collection, Mapping, TypeVar

from .travel import Setting

__all__ = ["delegating", "public_members", "sends"]

C = TypeVar("C", bound=type)


def public_members(source: type) -> dict[str, Any]:
    """The public functions and properties ``source`` declares, itself or its bases (not
    ``object``), as written in the class bodies (``inspect.getattr_static``)."""
    names = {name for klass in source.__mro__[:-1] for name in vars(klass) if not name.startswith("_")}
    members = {name: inspect.getattr_static(source, name) for name in sorted(names)}
    return {name: member for name, member in members.items() if inspect.isfunction(member) or isinstance(member, property)}


def sends(function: Callable[..., Any]) -> bool:
    """Whether a method talks to the server: every request method takes a ``timeout``; a
    setting (a handler, the roots) sends nothing and takes none."""
    return "timeout" in inspect.signature(function).parameters


def delegating(
    source: type, *, hand_written: Collection[str], retried: Collection[str], composed: Collection[str] = (),
    tool_calls: Mapping[str, str] | None = None, seen: Mapping[str, Callable[[Any, Any], Any]] | None = None,
) -> Callable[[C], C]:
    """Give the decorated class a delegate for each public member of ``source`` (see the module).

    The class must define ``_run(call, kwargs, *, safe)`` and ``_run_tool(tool, call, kwargs)``
    (``call(client, kwargs)`` makes the call with ``kwargs``, the caller's keyword arguments
    or what the class makes of them), ``_remember(key, apply)`` and ``get()``.
    ``seen[name](self, result)`` sees what the call ``name`` returned before the caller does.
    Raises ``TypeError`` when ``hand_written`` and the class body disagree, when a name given
    is not one of ``source``'s members, or when one in ``retried``, ``tool_calls`` or ``seen``
    is not a request.
    """

    def decorate(cls: C) -> C:
        members = public_members(source)
        after, tools = dict(seen or {}), dict(tool_calls or {})
        unknown = sorted((set(hand_written) | set(retried) | set(composed) | set(after) | set(tools)) - set(members))
        if unknown:
            raise TypeError(f"{cls.__name__}: {', '.join(unknown)} {_not_members(unknown)} of {source.__name__}")
        calls = {name for name, member in members.items() if inspect.isfunction(member) and sends(member)}
        not_calls = sorted((set(retried) | set(after) | set(tools)) - calls)
        if not_calls:
            takes = "takes" if len(not_calls) == 1 else "take"
            raise TypeError(f"{cls.__name__}: {', '.join(not_calls)} {takes} no timeout: sends nothing, so nothing to retry")
        undeclared = sorted(set(vars(cls)) & set(members) - set(hand_written))
        missing = sorted(name for name in hand_written if not any(name in vars(klass) for klass in cls.__mro__[:-1]))
        if undeclared or missing:
            raise TypeError(
                f"{cls.__name__}: declare what it writes by hand in hand_written "
                f"(written but not declared: {', '.join(undeclared) or 'none'}; "
                f"declared but not written: {', '.join(missing) or 'none'})"
            )
        for name, member in members.items():
            if name in hand_written:
                continue
            if isinstance(member, property):
                made: Any = _property(name, member)
            elif name in composed:
                made = member
            elif name in tools:
                made = _described(_tool_call(name, member, tools[name]), member, cls)
            elif sends(member):
                made = _described(_call(name, name in retried, after.get(name)), member, cls)
            else:
                made = _described(_setting(name, member), member, cls)
            setattr(cls, name, made)
        return cls

    return decorate


def _call(name: str, retried: bool, seen: Callable[[Any, Any], Any] | None) -> Callable[..., Any]:
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = self._run(_caller(name, args), kwargs, safe=retried)
        return result if seen is None else seen(self, result)

    return call


def _caller(name: str, args: tuple[Any, ...]) -> Callable[[Any, Mapping[str, Any]], Any]:
    """``call(client, kwargs)``: the method ``name`` of ``client`` with ``args`` and ``kwargs``."""
    def call(client: Any, kwargs: Mapping[str, Any]) -> Any:
        return methodcaller(name, *args, **kwargs)(client)

    return call


def _tool_call(name: str, member: Callable[..., Any], parameter: str) -> Callable[..., Any]:
    position = list(inspect.signature(member).parameters).index(parameter) - 1  # after self

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        tool = args[position] if len(args) > position else kwargs.get(parameter)
        return self._run_tool(tool, _caller(name, args), kwargs)

    return call


def _setting(name: str, member: Callable[..., Any]) -> Callable[..., None]:
    key = name.removeprefix("set_").removesuffix("_handler")  # "set_roots": "roots", as __reduce__ names it
    signature = inspect.signature(member)

    def setting(self: Any, *args: Any, **kwargs: Any) -> None:
        signature.bind(self, *args, **kwargs)  # a TypeError now: a setting kept would fail every open
        self._remember(key, Setting(name, *args, **kwargs))  # a Setting travels in the pickle

    return setting


def _property(name: str, member: property) -> property:
    read = attrgetter(name)

    def get(self: Any) -> Any:
        return read(self.get())

    if member.fget is not None:
        functools.update_wrapper(get, member.fget)
    return property(get, doc=member.__doc__)


def _described(delegate: Callable[..., Any], member: Callable[..., Any], cls: type) -> Callable[..., Any]:
    """``delegate`` with ``member``'s name, docstring, annotations and signature; ``__wrapped__``
    is ``member``, so ``typing.get_type_hints`` reads the annotations where they were written."""
    functools.update_wrapper(delegate, member)
    delegate.__signature__ = inspect.signature(member)  # type: ignore[attr-defined]
    delegate.__module__ = cls.__module__
    delegate.__qualname__ = f"{cls.__qualname__}.{member.__name__}"
    return delegate


def _not_members(names: Collection[str]) -> str:
    return "is not a public member" if len(names) == 1 else "are not public members"
