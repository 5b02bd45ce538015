"""The notebook approver: an Allow and a Deny button under the cell, which waits for one of them.

    >>> approvals = NotebookApprovals(timeout=120)
    >>> client = mcpclient.connect(["python", "server.py"],
    ...                            plugins=mcpclient.Plugins(policy=Policy(rules, approver=approvals)))
    >>> client.call_tool("write_file", {...})    # the cell shows the call and two buttons, and waits

The calling cell blocks until a button is clicked, or until the first of these ends the wait,
denied: ``timeout`` seconds (the approver's own limit), the call's deadline, its cancel, its
client's ``close()``, the connection's death (it waits through the call's ``request.until``). The buttons are then disabled and the outcome shown beside them.

What is shown is the request's ``lines()`` (escapes, newlines and bidi controls already made
inert), HTML-escaped, then passed through the notebook sanitiser (``_display.sanitize.clean``,
nh3), as every server string mcpclient puts in a notebook.

A blocked cell holds the kernel's main shell, where the buttons' messages would wait behind
it. In ipykernel 7.3 and later the buttons' messages are routed to a kernel subshell of this
module's own (a thread of the kernel: the JEP 91 subshells), which takes the click while the
cell waits. This uses two internals of ipykernel 7 (the subshell manager and a comm's reply
routing); where they are missing, or outside a kernel, the call is denied (and the log says
why), unless a ``fallback`` approver is given: ``fallback=mcpclient.prompting.approve_tool``
asks through ``input()``, which a front end serves while a cell runs. Needs ``ipywidgets``
(the ``notebook`` extra).
"""

from __future__ import annotations

import html
import logging
from typing import Any, Callable

from .._display.sanitize import clean
from .._core.exceptions import MCPError
from ..extensions import Signal, Until, WaitLock
from .policy import ApprovalRequest, why_ended

__all__ = ["NotebookApprovals"]

log = logging.getLogger("mcpclient.policy")

#: How long the kernel's shell channel thread may take to start the subshell.
SUBSHELL_START = 10.0


class _Subshell:
    """The kernel subshell the buttons' messages are routed to, made once per kernel."""

    _lock = WaitLock()  # held while the subshell is made: a second approval waits through its call
    _id: str | None = None
    _kernel: Any = None

    @classmethod
    def get(cls, kernel: Any, until: Until) -> str | None:
        """The subshell's id, or None when this kernel cannot route a comm to one; waits for it
        through the call's ``until`` (raises at its stop)."""
        thread = getattr(kernel, "shell_channel_thread", None)
        manager = getattr(thread, "manager", None)
        create = getattr(manager, "_create_subshell", None)
        loop = getattr(manager, "_shell_channel_io_loop", None)
        if create is None or loop is None:
            return None
        with until.hold(cls._lock):
            if cls._kernel is kernel and cls._id is not None:
                return cls._id
            made: dict[str, Any] = {}
            done = Signal()

            def make() -> None:  # subshells are made on the shell channel thread
                try:
                    made["id"] = create()
                except Exception as exc:  # noqa: BLE001 - reported below
                    made["error"] = exc
                done.set()

            loop.add_callback(make)
            if not until.wait(done, timeout=SUBSHELL_START) or "id" not in made:
                log.warning("policy: could not start a kernel subshell for the approval buttons: %s",
                            made.get("error", "timed out"))
                return None
            cls._id, cls._kernel = str(made["id"]), kernel
            return cls._id


def _kernel() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return getattr(shell, "kernel", None)


def _route(widget: Any, subshell: str) -> bool:
    """Send the front end's messages for ``widget`` to ``subshell``; False when the comm cannot."""
    comm = getattr(widget, "comm", None)
    if comm is None or not hasattr(comm, "_reply_subshell_for"):
        return False
    comm._reply_subshell_for = lambda _data, _default: subshell
    return True


def _seconds(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def request_html(request: ApprovalRequest) -> str:
    """The request as sanitised HTML: its cleaned lines, escaped, in a ``<pre>``, through nh3."""
    lines = "\n".join(html.escape(line, quote=True) for line in request.lines())
    return clean(f'<div class="mcpclient"><b>Approve this tool call?</b><pre>{lines}</pre></div>')


class NotebookApprovals:
    """A policy approver that asks with two buttons in the running cell (see the module docstring).

    ``timeout`` is the longest a call waits (seconds); ``fallback`` answers where the buttons
    cannot (None: such calls are denied). Thread-safe: calls made at once from several threads
    each get their own buttons.
    """

    def __init__(self, *, timeout: float = 300.0, fallback: Callable[[ApprovalRequest], bool] | None = None) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be positive seconds, got {timeout!r}")
        self.timeout = timeout
        self._fallback = fallback
        self._told = False

    def _ask_elsewhere(self, request: ApprovalRequest, why: str) -> bool:
        if self._fallback is not None:
            if not self._told:
                log.info("policy: %s: approvals go to the fallback approver", why)
                self._told = True
            return self._fallback(request)
        log.warning("policy: %s: no buttons can be shown, and no fallback was given: denied", why)
        return False

    def __call__(self, request: ApprovalRequest) -> bool:
        """Show ``request`` with Allow and Deny buttons and wait; False when the wait ends first."""
        kernel = _kernel()
        if kernel is None:
            return self._ask_elsewhere(request, "not in a Jupyter kernel")
        try:
            import ipywidgets
            from IPython.display import display
        except ImportError:
            return self._ask_elsewhere(request, "ipywidgets is not installed")
        try:
            subshell = _Subshell.get(kernel, request.until)
        except MCPError as stop:  # the call ended while the subshell was being made
            log.info("policy: the notebook approval ended before it was shown (%s): denied", stop)
            return False
        if subshell is None:
            return self._ask_elsewhere(request, "this kernel cannot take a click while a cell runs (ipykernel < 7.3)")
        return self._ask(request, ipywidgets, display, subshell)

    def _ask(self, request: ApprovalRequest, widgets: Any, display: Callable[[Any], None], subshell: str) -> bool:
        left = request.until.remaining()
        timeout = self.timeout if left is None else min(self.timeout, left)  # (what the label says)
        answered = Signal()
        answer: dict[str, bool] = {}
        stopped: MCPError | None = None

        def choose(allow: bool) -> Callable[[Any], None]:
            def clicked(_button: Any) -> None:  # on the subshell's thread
                answer.setdefault("allow", allow)
                answered.set()
            return clicked

        allow = widgets.Button(description="Allow", button_style="warning", icon="check")
        deny = widgets.Button(description="Deny", button_style="", icon="times")
        allow.on_click(choose(True))
        deny.on_click(choose(False))
        status = widgets.Label(value=f"waiting (denied in {_seconds(timeout)} s)")
        box = widgets.VBox([widgets.HTML(value=request_html(request)), widgets.HBox([allow, deny, status])])
        if not (_route(allow, subshell) and _route(deny, subshell)):
            box.close()
            return self._ask_elsewhere(request, "the widget comm cannot be routed to a subshell")
        request.ended.add_callback(answered.set)  # the call ended: stop waiting, denied
        try:
            display(box)
            request.until.wait(answered, timeout=self.timeout)
        except MCPError as stop:  # the call's deadline, cancel, close, death
            stopped = stop
        finally:
            request.ended.remove_callback(answered.set)
            allow.disabled = deny.disabled = True
        allowed = answer.get("allow") is True and not request.ended.cancelled and stopped is None
        if "allow" in answer:
            status.value = "allowed" if allowed else "denied"
        elif request.ended.cancelled:
            status.value = f"denied: {request.ended.reason}"
        elif stopped is not None:
            status.value = f"denied: {why_ended(stopped)}"
        else:
            status.value = f"denied: nobody answered within {_seconds(timeout)} s"
        log.info("policy: the notebook approval of %r ended: %s", request.tool[:120], status.value)
        return allowed
