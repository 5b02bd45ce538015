"""A person answers the server: elicitation forms, URL consent and sampling, typed at a prompt.

    >>> import mcpclient.prompting
    >>> client = mcpclient.connect(["python", "server.py"], protocol="legacy")  # doctest: +SKIP
    >>> mcpclient.prompting.install(client)  # before initialize(): declares the capabilities

``install`` (or ``client.set_elicitation_handler(mcpclient.prompting.elicit, modes=("form",
"url"))`` and ``client.set_sampling_handler(mcpclient.prompting.sample)``) asks through
``input()`` and ``print()``, looked up when each question is asked, so the same prompts work in
a terminal and in a Jupyter notebook while a cell runs (the front end serves ``input()``).

What the person types:

* a form is asked field by field; Enter takes the default, or skips an optional field; a value
  that does not fit the schema is refused with the reason and asked again;
* ``!decline`` (or Ctrl-D, end of input) declines, ``!cancel`` (or Ctrl-C) cancels;
* a URL is shown with the host a browser will go to (judged by a WHATWG URL parser, the
  ``prompting`` extra; see ``_link.judge``), never opened unless the person answers ``o``; a
  link that is not plain http(s), carries user info, or that parsers read differently is
  refused and declined without asking;
* a sampling request is shown; the person types the reply sent back as the model's answer, or
  declines (the server then gets the error the spec names for a refused sampling request).

Each question names the server that asks (``The server "acme" asks: ...``), by the name its
``serverInfo`` gave (``request.server``), as the spec wants: with several servers connected,
the person knows which one wants the answer.

Questions are asked one at a time: handlers run on several threads, the person has one screen.
A question waits through its call's ``Until`` (``mcpclient.extensions.Until``: an approval's
``request.until``; a handler's, from the token it is given, which the server's cancel and the
client's ``close()`` set): the wait for its turn and each read end there, and the question is
denied or cancelled. A read already waiting for a line (``input()`` cannot be woken) is left
running on its thread, and the next question takes up the line it brings, so two reads never
compete for the person's keyboard.
Everything shown, and every prompt, is one line cleaned by ``_text.clean``: server text cannot
send escape sequences, forge a line with a newline, or reorder itself with bidi controls.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import logging
import select
import sys
import webbrowser
from typing import Any, Callable, Iterator

from . import types as t
from ._client.form_fields import Field, Invalid
from ._client.link import LinkRefused, judge
from ._core.cancel import CancelToken
from ._core.exceptions import MCPError, RPCError
from ._core.text import clean
from .extensions import Job, Until, WaitLock
from .plugins.policy import ApprovalRequest

__all__ = ["Prompter", "approve_tool", "elicit", "install", "sample"]

#: The spec's error code for a sampling request the user refused.
USER_REJECTED = -1
#: The model name reported for a reply a person typed.
PERSON_MODEL = "person"
log = logging.getLogger("mcpclient.policy")
HELP = "Enter takes the default or skips an optional field; !decline (or Ctrl-D) declines, !cancel (or Ctrl-C) cancels."


class _Stop(Exception):
    """The person ended the exchange: ``action`` is "decline" or "cancel"."""

    def __init__(self, action: str) -> None:
        super().__init__(action)
        self.action = action


_BUILTIN_INPUT = builtins.input


def _input(prompt: str) -> str:
    """``input(prompt)``. At a terminal it first waits until a line is there (``select``), so a
    read a stopped question left waiting holds no lock of ``sys.stdin``: a thread blocked inside
    ``input()`` would make the interpreter's exit fail (it cannot close stdin under it)."""
    fd = _terminal_fd()
    if fd is None:
        return builtins.input(prompt)  # a front end's input() (Jupyter), a pipe, Windows
    sys.stdout.write(prompt)
    sys.stdout.flush()
    select.select([fd], [], [])
    return builtins.input()


def _terminal_fd() -> int | None:
    """Standard input's descriptor when it is a terminal read by the built-in ``input()``."""
    if builtins.input is not _BUILTIN_INPUT or sys.platform == "win32":
        return None
    try:
        return sys.stdin.fileno() if sys.stdin.isatty() else None
    except (AttributeError, OSError, ValueError):
        return None


def _print(text: str) -> None:
    print(text, file=sys.stdout, flush=True)


class Prompter:
    """Asks a person through ``read(prompt) -> line`` and ``write(text)``.

    ``read`` raises ``EOFError`` at the end of input (taken as decline) and
    ``KeyboardInterrupt`` when interrupted (taken as cancel); ``NotImplementedError`` (what
    ``input()`` raises in a Jupyter kernel whose front end allows no input) declines too. ``open_url`` opens a URL the person
    asked to open (default ``webbrowser.open``). The defaults are ``input()`` and ``print()``.
    """

    def __init__(
        self,
        read: Callable[[str], str] | None = None,
        write: Callable[[str], None] | None = None,
        *,
        open_url: Callable[[str], Any] | None = None,
    ) -> None:
        self._reader = read or _input
        self._writer = write or _print
        self._open_url = open_url or webbrowser.open
        self._turn = WaitLock()  # one question at a time; a stop frees who waits for it
        self._until = Until()  # the question's (set while it holds the turn)
        self._reading: Job[str] | None = None  # a read a stopped question left waiting for its line

    @contextlib.contextmanager
    def _question(self, until: Until) -> Iterator[None]:
        """Hold the turn for one question, waited for through ``until``."""
        with until.hold(self._turn):
            self._until = until
            try:
                yield
            finally:
                self._until = Until()

    def _read(self, prompt: str) -> str:
        """One line, read on a thread of its own and waited for through the question's Until.

        At a stop the read is left waiting for its line, which the next question takes up
        (``input()`` cannot be woken, and a second read would compete for the keyboard).
        """
        shown = clean(prompt, None)
        job = self._reading
        if job is None:
            job = Job(self._reader, shown, name="mcpclient-prompt")
        else:
            self._writer(shown)  # the read running shows an earlier question's prompt
        self._reading = job
        try:
            return self._until.finish(job)
        finally:
            if job.done.is_set():
                self._reading = None

    def _write(self, text: str) -> None:
        # The one way out to the person: whatever a line holds, it is shown inert.
        self._writer(clean(text, None))

    # -- the handlers ----------------------------------------------------------------------

    def elicit(self, request: t.ElicitationRequest, token: CancelToken | None = None) -> t.ElicitationResult:
        """An elicitation handler: the person fills the form, or consents to the URL.

        ``token`` (the client gives it) ends the question: cancelled."""
        try:
            with self._question(Until(cancel=token, what="the elicitation")):
                try:
                    if request.mode == "url":
                        return self._url(request)
                    return self._form(request)
                except _Stop as stop:
                    self._write(f"({stop.action}d)" if stop.action == "decline" else "(cancelled)")
                    return t.ElicitationResult(action="decline" if stop.action == "decline" else "cancel")
        except MCPError:  # cancelled while waiting for its turn
            return t.ElicitationResult(action="cancel")

    def sample(self, request: t.CreateMessageRequest, token: CancelToken | None = None) -> t.CreateMessageResult:
        """A sampling handler: the person reads the request and types the reply, or declines.

        ``token`` (the client gives it) ends the question: cancelled."""
        try:
            with self._question(Until(cancel=token, what="the sampling request")):
                try:
                    return self._sample(request)
                except _Stop as stop:
                    self._write("(declined)" if stop.action == "decline" else "(cancelled)")
                    raise RPCError(USER_REJECTED, f"the user {stop.action}d the sampling request") from None
        except RPCError:
            raise
        except MCPError:  # cancelled while waiting for its turn
            raise RPCError(USER_REJECTED, "the sampling request was cancelled before it was asked") from None

    def approve_tool(self, request: ApprovalRequest) -> bool:
        """A policy approver (``mcpclient.policy``): the person reads the call and says yes or no.

        Everything shown is the server's text made inert; end of input, an interrupt, or a
        front end that takes no input says no. The question waits through ``request.until``:
        the call's deadline, cancel, close or death ends it, denied.
        """
        try:
            with self._question(request.until):
                return self._approve(request)
        except MCPError as stop:  # the call ended while this waited for its turn
            log.info("the approval of %s ended before it was asked (%s): denied", clean(request.tool, 120), stop)
            return False

    def _approve(self, request: ApprovalRequest) -> bool:
        self._write("")
        for line in request.lines():
            self._write(line)
        while True:
            try:
                answer = self.ask("Allow this call? [y/N] ").strip().lower()
            except _Stop:
                self._write("(denied)")
                return False
            if answer in ("y", "yes"):
                return True
            if answer in ("", "n", "no"):
                self._write("(denied)")
                return False

    def install(self, client: Any) -> None:
        """Answer ``client``'s elicitations (form and URL) and sampling requests by asking."""
        client.set_elicitation_handler(self.elicit, modes=("form", "url"))
        client.set_sampling_handler(self.sample)

    # -- asking ----------------------------------------------------------------------------

    def ask(self, prompt: str) -> str:
        """One line from the person; the ``!`` commands, end of input, interrupts and the end
        of the question's wait (its call's deadline, cancel, close) end it."""
        try:
            line = self._read(prompt)
        except MCPError as stop:
            self._write("")
            self._write(f"(no longer asked: {stop})")
            raise _Stop("cancel") from None
        except EOFError:
            self._write("")
            raise _Stop("decline") from None
        except KeyboardInterrupt:
            self._write("")
            raise _Stop("cancel") from None
        except NotImplementedError:  # a kernel whose front end takes no input (nbconvert --execute)
            self._write("(no one can answer here: declined)")
            raise _Stop("decline") from None
        word = line.strip().lower()
        if word in ("!decline", "!d"):
            raise _Stop("decline")
        if word in ("!cancel", "!c"):
            raise _Stop("cancel")
        return line

    def _form(self, request: t.ElicitationRequest) -> t.ElicitationResult:
        schema = request.requested_schema or {}
        properties: dict[str, Any] = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
        required: list[Any] = schema["required"] if isinstance(schema.get("required"), list) else []
        fields = [Field(name, prop if isinstance(prop, dict) else {}, name in required)
                  for name, prop in properties.items()]
        self._write("")
        self._write(f"{_asker(request.server)} asks: {clean(request.message)}")
        self._write(HELP)
        content: dict[str, Any] = {}
        for field in fields:
            self._write("")
            for line in field.describe():
                self._write(line)
            while True:
                text = self.ask(f"{clean(field.name, 80)}> ")
                if not text.strip():
                    if field.has_default:
                        content[field.name] = field.prop["default"]
                        break
                    if not field.required:
                        break
                    self._write("  this field is required (or type !decline / !cancel)")
                    continue
                try:
                    content[field.name] = field.parse(text)
                    break
                except Invalid as exc:
                    self._write(f"  invalid: {exc}; try again")
        self._write("")
        self._write("Your answer:")
        for field in fields:
            if field.name in content:
                self._write(f"  {field.title}: {field.show(content[field.name])}")
        if not content:
            self._write("  (nothing)")
        while True:
            answer = self.ask("Send it? [Y/n] ").strip().lower()
            if answer in ("", "y", "yes"):
                return t.ElicitationResult(action="accept", content=content)
            if answer in ("n", "no"):
                raise _Stop("decline")

    def _url(self, request: t.ElicitationRequest) -> t.ElicitationResult:
        self._write("")
        self._write(f"{_asker(request.server)} asks you to open a link: {clean(request.message)}")
        try:
            link = judge(request.url)
        except LinkRefused as refused:
            self._write(f"  {clean(request.url or '', 300)}")
            self._write(f"  refused: {refused}")
            raise _Stop("decline") from None
        self._write(f"  {link.href}")
        note = ", an international name shown as the browser encodes it" if link.international else ""
        note += "" if link.scheme == "https" else ", not encrypted (http)"
        self._write(f"  (it goes to {link.authority}{note})")
        self._write("  o = open it in your browser, y = I will open it myself, n = no; !cancel cancels")
        while True:
            answer = self.ask("Open the link? [o/y/n] ").strip().lower()
            if answer in ("o", "open"):
                self._open_url(link.href)
                return t.ElicitationResult(action="accept")
            if answer in ("y", "yes"):
                return t.ElicitationResult(action="accept")
            if answer in ("n", "no"):
                raise _Stop("decline")

    def _sample(self, request: t.CreateMessageRequest) -> t.CreateMessageResult:
        self._write("")
        self._write(f"{_asker(request.server)} asks for an LLM reply (sampling). No model is set up: you answer.")
        if request.system_prompt:
            self._write(f"  system: {clean(request.system_prompt)}")
        for message in request.messages:
            self._write(f"  {clean(message.role, 20)}: {_content_text(message.content)}")
        if request.max_tokens:
            self._write(f"  (at most {request.max_tokens} tokens)")
        self._write("Type the reply to send as the model's answer; !decline (or Ctrl-D) refuses.")
        while True:
            reply = self.ask("reply> ")
            if reply.strip():
                return t.CreateMessageResult.from_text(reply.strip(), model=PERSON_MODEL)


def _asker(server: t.Implementation | None) -> str:
    """Who asks: ``The server "NAME"`` (its serverInfo name, quoted as JSON so a quote in it
    cannot end it, and cleaned), or ``The server`` when it gave none."""
    name = server.name if server is not None else ""
    return f"The server {clean(json.dumps(name, ensure_ascii=False), 80)}" if name.strip() else "The server"


def _content_text(content: Any) -> str:
    """A sampling message's content as one line: its text, other parts in brackets."""
    parts = content if isinstance(content, list) else [content]
    out = []
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            out.append(clean(part.get("text", "")))
        else:
            out.append(f"[{clean(kind or 'unknown', 40)} content]")
    return " ".join(out)


_DEFAULT = Prompter()


def elicit(request: t.ElicitationRequest, token: CancelToken | None = None) -> t.ElicitationResult:
    """Elicitation handler asking through ``input()``/``print()`` (form and URL mode)."""
    return _DEFAULT.elicit(request, token)


def sample(request: t.CreateMessageRequest, token: CancelToken | None = None) -> t.CreateMessageResult:
    """Sampling handler asking through ``input()``/``print()``: the person is the model."""
    return _DEFAULT.sample(request, token)


def approve_tool(request: ApprovalRequest) -> bool:
    """Policy approver asking through ``input()``/``print()``: ``Policy(..., approver=approve_tool)``."""
    return _DEFAULT.approve_tool(request)


def install(client: Any) -> None:
    """Let a person answer ``client``'s elicitations and sampling requests (before initialize)."""
    _DEFAULT.install(client)
