"""Every blocking wait in mcpclient goes through the one primitive (``mcpclient._core.waiting``).

The test parses every module under ``mcpclient/`` with ``ast`` and finds the waits that would
block a thread on a clock or a flag of their own: ``time.sleep``; ``.wait(...)`` and
``.wait_for(...)`` (``Event``, ``Condition``, ``Popen``, a ``CancelToken``); a blocking
``.acquire(...)`` (anything but ``acquire(False)``/``blocking=False``); ``input()``; a queue's
``.get(...)`` (a name assigned a ``Queue``/``SimpleQueue`` in the module, or any
``.get(timeout=...)``); a thread's ``.join(...)`` (a name assigned a ``Thread``, or named
``*thread*``); ``select.select`` and a poll object's ``.poll(timeout)``; and ``.wait``,
``.wait_for``, ``.acquire``, ``.sleep`` taken as a value (``wait = event.wait``), called later. A wait that is
awaited (asyncio, on a loop's own thread) blocks no thread and is not one; a wait on an
``Until`` (a name ending in ``until``: ``request.until.wait(...)``) is the primitive's.

Outside ``mcpclient/_core/waiting.py`` each must be in ``ALLOWED``, which says per function why
that wait stays: the engine's own, the reader thread, the transports' socket and process
waits, threads that wait for work and are ended by close... An entry that no longer matches a
wait fails the test too, so the list only shrinks as sites move to the primitive.

Known blind spots (said so, not hidden): a positional ``.join(x)`` on a name that is neither
assigned a ``Thread`` nor named like one is taken for ``str.join``; a lock taken as a block
(``with lock:``) is not seen (critical sections are short: a lock held across a wait is a
``WaitLock``, taken with ``until.hold``); a blocking call of a
foreign library (``requests``, ``redis``) is not seen: those go through ``Until.call`` where a
caller waits for them, and the stores' own case (issue 45) is watched by its tests.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, NamedTuple

ROOT = Path(__file__).resolve().parent.parent / "mcpclient"
PRIMITIVE = "_core/waiting.py"

#: (module path under mcpclient/, qualified name of the enclosing function) -> why it stays.
ALLOWED: dict[tuple[str, str], str] = {
    # -- the engine's own: what the primitive's lifetimes stand on ---------------------------
    ("_rpc/engine.py", "Engine._wait"):
        "the call's own slot wait: bounded by its deadline, woken by its cancel's callback, by "
        "close() and the connection's death (they set the slot's event); it is what ends a call",
    ("_rpc/engine.py", "Engine._send"):
        "the write lock, within the request's deadline; the holder's write ends at close (the "
        "transport is closed under it)",
    ("_rpc/engine.py", "Engine.close"):
        "close() joins the reader thread, at most READER_JOIN_TIMEOUT, after closing the transport",
    ("_rpc/engine.py", "_wait_for_progress"):
        "a reply's own progress callbacks drained before the call returns, at most PROGRESS_DRAIN_TIMEOUT",
    ("_rpc/dispatch.py", "Dispatcher.wait_idle"):
        "close()'s grace for running handlers (DISPATCH_GRACE), after their tokens were cancelled",
    ("_rpc/pool.py", "DispatchPool._next"):
        "an idle dispatch worker waiting for work; shutdown() at close wakes it",
    ("_rpc/reader.py", "read_loop"):
        "the reader thread takes the read token back from an inline reader (released within "
        "INLINE_READ_BUDGET); the thread lives as long as the connection",
    ("_rpc/reader.py", "_lend"):
        "the reader thread, while it lends the pipe out: INLINE_LEND at a time, woken at close",
    # -- the core's own ------------------------------------------------------------------------
    ("_core/cancel.py", "CancelToken.wait"):
        "the handler's own token, which close() and the peer's notifications/cancelled set: what "
        "a sampling or elicitation handler waits on (the token is one of the primitive's cancels)",
    ("_core/cancel.py", "_watch_events"):
        "the one watcher thread of plain Events given as cancel= (EVENT_POLL_INTERVAL): it is "
        "how the primitive and the engine hear a plain Event",
    ("_core/race.py", "Race.next"):
        "the era probe: two engine requests raced, each ending at its timeout, its cancel, "
        "close() and the connection's death, which end this wait too",
    # -- the transports: sockets, pipes, processes; each woken by close() and its exchange's
    #    abort (the engine's cancel and deadline) -------------------------------------------
    ("transports/_exchange.py", "Exchange.wait"):
        "an HTTP exchange's own wait, woken by its abort: the engine's cancel, close(), the deadline watchdog",
    ("transports/_exchange.py", "Exchange.wait_for"):
        "the same, for a background step (a token fetch) of the exchange",
    ("transports/_exchange.py", "Exchanges._watch"):
        "the deadline watchdog thread: idle until an exchange has a deadline, ends at IDLE_EXIT",
    ("transports/_requester.py", "Requester._pause"):
        "an HTTP retry's pause, on the request's exchange: woken by close, cancel and its deadline",
    ("transports/_stdio_portable.py", "ThreadedPipes._read_stdout"):
        "the portable pipes' reader thread, woken by close",
    ("transports/_stdio_portable.py", "ThreadedPipes.wait"):
        "the portable pipes' wait for output, within the reader's time, woken by close",
    ("transports/_stdio_portable.py", "ThreadedPipes._write_stdin"):
        "the portable pipes' writer thread, woken by close",
    ("transports/_stdio_portable.py", "ThreadedPipes.write"):
        "a write waits for the writer thread within the send's deadline, woken by close and the server's exit",
    ("transports/_stdio_posix.py", "PosixPipes.read"):
        "poll(0): a look, not a wait",
    ("transports/_stdio_posix.py", "PosixPipes.unread"):
        "poll(0) on stdin at close(): a look whether the server closed it, not a wait",
    ("transports/_stdio_posix.py", "_wait_writable"):
        "a pipe write waiting for room, in WRITE_WAIT_SLICE slices that look at close()",
    ("transports/_stdio_process.py", "wait"):
        "reaping the server process after it was ended, bounded by the caller's timeout",
    ("transports/_stdio_process.py", "_pump"):
        "the stderr thread's poll on stderr, the pidfd and the wake descriptor close() sets",
    ("transports/_stdio_process.py", "stderr_drained"):
        "at the server's exit, its last stderr lines read for the error, at most SIDE_DRAIN_TIMEOUT",
    ("transports/_threads.py", "ThreadPool._work"):
        "an idle transport worker waiting for work, ending after its idle timeout",
    ("transports/_token.py", "TokenFetcher._fetch_aside"):
        "a token fetched for a request, waited for on its exchange (woken by its abort: cancel, "
        "close, deadline), else within the request's deadline",
    ("transports/_watchdog.py", "_reap_at_exit"):
        "at interpreter exit, the watchdog process reaped, at most EXIT_REAP_TIMEOUT",
    ("transports/http.py", "StreamableHTTPTransport._drain_streams"):
        "a stream's pause on its exchange, woken by close, cancel and the deadline",
    ("transports/http.py", "StreamableHTTPTransport._listen_loop"):
        "the GET stream's reconnect pause, on the transport's closed Event (close() sets it)",
    ("transports/http.py", "StreamableHTTPTransport.receive"):
        "the reader thread's receive: close() puts the end in the inbox",
    ("transports/http.py", "StreamableHTTPTransport.close"):
        "close() waits for the session's DELETE at most DELETE_WAIT",
    ("transports/sse.py", "SSETransport.__init__"):
        "connecting: the endpoint event, within the connect timeout (no caller can close it yet)",
    ("transports/sse.py", "SSETransport.receive"):
        "the reader thread's receive: close() puts the end in the inbox",
    ("transports/stdio.py", "StdioTransport._receive"):
        "the pipe's wait (poll on stdout, the pidfd and the close() wake descriptor)",
    ("transports/stdio.py", "StdioTransport._exit_error"):
        "at the server's exit, its exit status and last stderr lines, at most EXIT_REPORT_TIMEOUT",
    ("transports/stdio.py", "StdioTransport.close"):
        "a torn write's closer thread, joined at most TORN_TERMINATE_TIMEOUT + KILL_REAP_TIMEOUT",
    # -- the test transports of mcpclient.testing: the same roles as the transports' -----------
    ("testing/_connection.py", "FakeConnection.receive"):
        "the fake's receive (the reader thread's), ended by close",
    ("testing/_connection.py", "FakeConnection._answer"):
        "a fake handler's simulated delay, ended by close and the request's cancel",
    ("testing/_connection.py", "FakeConnection.request"):
        "the fake server asking the client (a test's own call), within the test's timeout",
    ("testing/_in_process.py", "_ServerLoop.__init__"):
        "the in-process server's loop starting, at most START_WAIT",
    ("testing/_in_process.py", "_ServerLoop.stop"):
        "the in-process server's loop thread joined at close, at most CLOSE_WAIT",
    ("testing/_in_process.py", "InProcessTransport.receive"):
        "the in-process transport's receive (the reader thread's), ended by close",
    ("testing/_recording.py", "RecordingTransport.send"):
        "serialised sends to a transport that is not an ExchangeTransport, within the send's timeout",
    ("testing/_replay.py", "ReplayTransport.receive"):
        "the replay transport's receive (the reader thread's), ended by close",
    # -- the client's own threads, ended by close() -------------------------------------------
    ("_client/subscriptions.py", "Listener.stop"):
        "close() joins the listen thread, at most 2 s, after cancelling its stream",
    # -- the extras: joins bounded by their own promise ---------------------------------------
    ("group.py", "ClientGroup.open"):
        "the servers opened in parallel, joined within open_timeout (late ones are recorded and closed)",
    ("group.py", "ClientGroup.close"):
        "each client's close() in parallel; Client.close() returns within a few seconds",
    ("notebook/explorer.py", "_widget_class.Explorer.wait"):
        "the explorer's own wait for its call, with the user's timeout (Thread.join's contract)",
    ("prompting.py", "_input"):
        "the prompts' default reader; every question runs it on a Job through its Until "
        "(Prompter._read), so a stop abandons the read, never a waiting caller",
    ("cli/_ask.py", "TerminalIO._next_chunk"):
        "the CLI's terminal read, POLL at a time, interruptible (Ctrl-C); a waiting call reads "
        "it through Until.call, which abandons it at a stop",
}


class Wait(NamedTuple):
    path: str
    function: str
    kind: str
    line: int


QUEUE_MAKERS = {"Queue", "SimpleQueue", "LifoQueue", "PriorityQueue"}
#: Waits also found when taken as a value, to be called later under another name.
ALIASED = {"wait", "wait_for", "acquire", "sleep"}


def _name(node: ast.AST) -> str | None:
    """The last name of ``x``, ``a.b.x``, ``self._x``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _made_by(value: ast.AST | None, makers: set[str]) -> bool:
    return isinstance(value, ast.Call) and _name(value.func) in makers


def _assigned(tree: ast.AST, makers: set[str]) -> set[str]:
    """Names (variables, attributes) the module assigns a call of one of ``makers`` to."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _made_by(node.value, makers):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and _made_by(node.value, makers):
            targets = [node.target]
        else:
            continue
        for target in targets:
            for part in ast.walk(target):
                name = _name(part)
                if name and isinstance(part, (ast.Name, ast.Attribute)):
                    names.add(name)
    return names


def _false(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _kind(call: ast.Call, queues: set[str], threads: set[str]) -> str | None:
    """What wait ``call`` is, or None."""
    func = call.func
    keywords = {keyword.arg for keyword in call.keywords}
    if isinstance(func, ast.Name):
        if func.id == "input":
            return "input()"
        if func.id == "sleep":
            return "sleep"
        return None
    if not isinstance(func, ast.Attribute):
        return None
    owner = _name(func.value) or ""
    attr = func.attr
    if owner.lower().endswith("until"):
        return None  # the primitive's own waits (request.until.wait, self._until.finish)
    if attr == "sleep" and owner == "time":
        return "time.sleep"
    if attr == "input" and owner == "builtins":
        return "input()"
    if attr in ("wait", "wait_for"):
        return f".{attr}()"
    if attr == "acquire":
        nonblocking = (call.args and _false(call.args[0])) or any(
            k.arg == "blocking" and _false(k.value) for k in call.keywords)
        return None if nonblocking else ".acquire()"
    if attr == "get":
        if "timeout" in keywords or "block" in keywords:
            return "queue .get()"
        if owner in queues:
            return "queue .get()"
        return None
    if attr == "join":
        if owner in threads or "thread" in owner.lower() or (not call.args and not call.keywords) or "timeout" in keywords:
            return "thread .join()"
        return None
    if attr == "select" and owner == "select":
        return "select.select"
    if attr == "poll" and (call.args or call.keywords):
        return ".poll(timeout)"
    return None


def waits_in(path: Path) -> Iterator[Wait]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    queues = _assigned(tree, QUEUE_MAKERS)
    threads = _assigned(tree, {"Thread", "Timer"})
    relative = path.relative_to(ROOT).as_posix()
    awaited = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Await)}
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}

    def visit(node: ast.AST, scope: list[str]) -> Iterator[Wait]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield from visit(child, [*scope, child.name])
                continue
            if isinstance(child, ast.Lambda):
                yield from visit(child, [*scope, "<lambda>"])
                continue
            if isinstance(child, ast.Call) and id(child) not in awaited:
                kind = _kind(child, queues, threads)
                if kind is not None:
                    yield Wait(relative, ".".join(scope) or "<module>", kind, child.lineno)
            elif (isinstance(child, ast.Attribute) and child.attr in ALIASED and id(child) not in called
                  and isinstance(child.ctx, ast.Load)):
                # ``wait = event.wait`` then ``wait(t)``: the wait, under another name
                yield Wait(relative, ".".join(scope) or "<module>", f".{child.attr} (referenced)", child.lineno)
            yield from visit(child, scope)

    yield from visit(tree, [])


def all_waits() -> list[Wait]:
    found: list[Wait] = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.relative_to(ROOT).as_posix() != PRIMITIVE:
            found += waits_in(path)
    return found


def test_every_wait_outside_the_primitive_is_allowed_and_says_why() -> None:
    bare = [w for w in all_waits() if (w.path, w.function) not in ALLOWED]
    assert not bare, "waits that bypass mcpclient._core.waiting (use the Until a plug-in gets from " \
        "Session.until, or allow-list the function with the reason it stays):\n" + "\n".join(
            f"  mcpclient/{w.path}:{w.line} {w.function}: {w.kind}" for w in bare)


def test_the_allow_list_names_only_waits_that_exist() -> None:
    present = {(w.path, w.function) for w in all_waits()}
    stale = sorted(set(ALLOWED) - present)
    assert not stale, f"allow-list entries with no wait left (remove them): {stale}"
    assert all(reason.strip() for reason in ALLOWED.values())


def test_the_finder_sees_each_kind_of_wait() -> None:
    source = '''
import queue, select, threading, time, builtins
inbox = queue.SimpleQueue()
worker = threading.Thread(target=print)
def f(event, lock, cond, proc, poller):
    time.sleep(1); event.wait(1); cond.wait_for(bool, 1); lock.acquire(timeout=2); lock.acquire()
    input("?"); builtins.input("?"); inbox.get(); other.get(timeout=1); worker.join(); proc.wait()
    select.select([], [], [], 1); poller.poll(100)
    lock.acquire(False); lock.acquire(blocking=False); ",".join(["a"]); {}.get("k"); proc.poll()
    waiting = event.wait
    request.until.wait(signal, timeout=3); until.sleep(1); self._until.wait(signal)
async def g(event):
    await event.wait()
'''
    path = ROOT / "_sample_for_the_finder.py"
    tree_waits = _waits_of(source, path)
    kinds = [w.kind for w in tree_waits]
    assert kinds == ["time.sleep", ".wait()", ".wait_for()", ".acquire()", ".acquire()", "input()", "input()",
                     "queue .get()", "queue .get()", "thread .join()", ".wait()", "select.select", ".poll(timeout)",
                     ".wait (referenced)"]
    assert {w.function for w in tree_waits} == {"f"}


def _waits_of(source: str, path: Path) -> list[Wait]:
    path.write_text(source, encoding="utf-8")
    try:
        return list(waits_in(path))
    finally:
        path.unlink()
