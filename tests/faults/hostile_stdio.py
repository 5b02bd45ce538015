"""A hostile stdio MCP server (standard library only) for the fault suite.

Usage::

    python tests/faults/hostile_stdio.py [--die-at-pending N] [--die-how exit|sigkill]
                                         [--stderr-flood] [--no-read] [--ignore-eof]
                                         [--ignore-sigterm] [--modern] [--close-stdin-at-initialize]

It answers ``initialize`` (legacy era, tools capability), ``ping`` and ``tools/call``; with
``--modern`` also ``server/discover`` (the 2026-07-28 era; without it that is -32601).
Every message it receives is reported on stderr as ``GOT <method> <id> <params as JSON>``
(a reply from the client is reported as ``GOT <reply> <id> ...``), so a test can see what
reached the server through the client's stderr sink.

Tools (``tools/call`` by name):

* ``echo`` ``{"text": s}`` -> one text block ``s``.
* ``hang`` -> never answered (reported on stderr as ``PENDING <count>``).
* ``garbage`` ``{"kind": k}`` -> writes the garbage named ``k`` (see ``GARBAGE``), then
  answers normally unless the kind itself is the answer.
* ``flood`` ``{"count": n, "method": m}`` -> answers at once, while a writer thread sends
  ``n`` notifications ``m`` interleaved with the replies to later calls.
* ``ask`` ``{"count": n}`` -> sends ``n`` server requests (``ping``), then answers.
* ``trickle`` ``{"text": s, "pause": p}`` -> the answer ``s`` in two writes ``p`` seconds
  apart, cut inside the line.
* ``later`` ``{"delay": d}`` -> answers at once, then sends ``notifications/later`` after
  ``d`` seconds, when no call is waiting.
* ``helper`` ``{"session": b}`` -> starts a helper process that inherits the server's stdin,
  stdout and stderr and sleeps for a minute (in its own session when ``b`` is true, as
  ``setsid`` would put it), and answers with the helper's pid.
* ``die`` ``{"code": n, "answer": b}`` -> exits with code ``n`` (after writing this call's
  answer when ``b`` is true, the server's last words).
* ``stop_reading`` -> answers, then never reads stdin again (sleeps until killed).
* ``close_stdin`` -> closes its stdin, answers, then runs on (sleeps until killed): every
  later write to it fails, and closing it tells the server nothing.
* ``huge`` ``{"size": n, "start": s}`` -> writes one line of ``n`` bytes that begins with
  ``s`` (``{`` by default: it looks like JSON until its end), then answers.

Fault knobs:

``--die-at-pending N``   when N ``hang`` calls are pending, die (see ``--die-how``).
``--die-how``            ``exit`` (code 3, the default) or ``sigkill`` (kills itself).
``--stderr-flood``       write to stderr without end from a thread (1 KB lines).
``--no-read``            never read stdin (and flood stderr if asked); sleep until killed.
``--modern``             answer ``server/discover`` as a 2026-07-28 server.
``--ignore-eof``         on EOF of stdin keep running (until killed); SIGTERM is ignored too.
``--ignore-sigterm``     ignore SIGTERM (only SIGKILL ends the server).
``--close-stdin-at-initialize``  close stdin on ``initialize``, answer it, then sleep until
                         killed: ``notifications/initialized`` cannot be written.
``--slow-list D``        answer each ``tools/list`` after ``D`` seconds (from a thread, so other
                         requests are answered meanwhile), a page of one tool (``echo``) and a
                         ``nextCursor``: the listing never ends.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

SERVER_INFO = {"name": "hostile", "version": "1.0"}
NEST = 100_000

# Each kind: (bytes written before the answer, whether the normal answer follows).
GARBAGE = {
    "not_json": (b"this is not json\n", True),
    "not_jsonrpc": (b'{"hello": "world"}\n[1, 2, 3]\n"a string"\n42\nnull\n{}\n', True),
    "binary": (b"\x00\x01\x02\x7f\n", True),
    "invalid_utf8": (b"\xff\xfe\xfd not utf-8\n", True),
    "invalid_utf8_in_json": (b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"s": "\xff"}}\n', True),
    "deep_arrays": (b"[" * NEST + b"]" * NEST + b"\n", True),
    "deep_objects": (b'{"a":' * NEST + b"1" + b"}" * NEST + b"\n", True),
    "deep_params": (
        b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"p": ' + b"[" * NEST + b"]" * NEST + b"}}\n",
        True,
    ),
    # 50 MB on one line, never closed: built when asked for (see below).
    "huge_line": (None, True),
    "bad_ids": (
        b"".join(
            json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}).encode() + b"\n"
            for rid in (987654, "987654", [1], {"a": 1}, True, None, 1.5, "\u00b2", "\u0661", "1" * 5000, 1e308, -1)
        ),
        True,
    ),
    "bad_requests": (
        b'{"jsonrpc": "2.0", "id": "s1", "method": "ping", "params": [1, 2]}\n'
        b'{"jsonrpc": "2.0", "id": "s2", "method": "no/such/method"}\n'
        b'{"jsonrpc": "2.0", "id": ["s3"], "method": "ping"}\n'
        b'{"jsonrpc": "2.0", "method": 42}\n'
        b'{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1e999}}\n'
        b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {"x": 1}}}\n',
        True,
    ),
    "blank_lines": (b"\n\r\n   \n\t\n", True),
    # The answers themselves are broken: these fail only the call concerned.
    "duplicate_reply": (b"", "twice"),
    "result_and_error": (b"", "both"),
    "unknown_id_only": (b"", "unknown"),
    "error_not_object": (b"", "error_str"),
    "result_not_object": (b"", "result_list"),
}


def main() -> int:
    argv = sys.argv[1:]
    die_at = int(argv[argv.index("--die-at-pending") + 1]) if "--die-at-pending" in argv else None
    die_how = argv[argv.index("--die-how") + 1] if "--die-how" in argv else "exit"
    ignore_eof = "--ignore-eof" in argv
    modern = "--modern" in argv
    close_stdin = "--close-stdin-at-initialize" in argv
    slow_list = float(argv[argv.index("--slow-list") + 1]) if "--slow-list" in argv else None
    if ignore_eof or "--ignore-sigterm" in argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if "--stderr-flood" in argv:
        threading.Thread(target=flood_stderr, daemon=True).start()
    if "--no-read" in argv:
        print(f"READY {os.getpid()}", file=sys.stderr, flush=True)
        while True:
            time.sleep(1)

    out = sys.stdout.buffer
    err = sys.stderr
    out_lock = threading.Lock()

    def write(data: bytes) -> None:
        with out_lock:
            out.write(data)
            out.flush()

    def send(msg: dict) -> None:
        write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")

    def answer(msg_id, text: str) -> None:
        send({"jsonrpc": "2.0", "id": msg_id, "result": {"content": [{"type": "text", "text": text}]}})

    pending = 0
    for line in iter(sys.stdin.buffer.readline, b""):
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict):
            continue
        method = msg.get("method", "<reply>")
        msg_id = msg.get("id")
        params = msg.get("params") or {}
        err.write(f"GOT {method} {json.dumps(msg_id)} {json.dumps(params)}\n")
        err.flush()
        if method == "<reply>" or msg_id is None:
            continue
        if method == "initialize":
            if close_stdin:  # before the answer: the client's next write (initialized) fails
                os.close(sys.stdin.fileno())
            send({"jsonrpc": "2.0", "id": msg_id, "result": {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {}}, "serverInfo": SERVER_INFO}})
            if close_stdin:
                while True:
                    time.sleep(1)
        elif method == "server/discover" and modern:
            send({"jsonrpc": "2.0", "id": msg_id, "result": {
                "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "serverInfo": SERVER_INFO}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {}})
        elif method == "tools/list" and slow_list is not None:
            page = {"jsonrpc": "2.0", "id": msg_id, "result": {
                "tools": [{"name": "echo", "inputSchema": {"type": "object"}}], "nextCursor": "more"}}
            timer = threading.Timer(slow_list, send, args=(page,))
            timer.daemon = True
            timer.start()
        elif method == "tools/call":
            name = params.get("name")
            args = params.get("arguments") or {}
            if name == "echo":
                answer(msg_id, args.get("text", ""))
            elif name == "hang":
                pending += 1
                err.write(f"PENDING {pending}\n")
                err.flush()
                if die_at is not None and pending >= die_at:
                    if die_how == "sigkill":
                        os.kill(os.getpid(), signal.SIGKILL)
                    os._exit(3)
            elif name == "garbage":
                data, then = GARBAGE[args["kind"]]
                if data is None:
                    data = b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"s": "' + b"x" * 50_000_000 + b"\n"
                if data:
                    write(data)
                if then is True:
                    answer(msg_id, "after garbage")
                elif then == "twice":
                    answer(msg_id, "first")
                    answer(msg_id, "second")
                elif then == "both":
                    send({"jsonrpc": "2.0", "id": msg_id, "result": {}, "error": {"code": 1, "message": "x"}})
                elif then == "unknown":
                    send({"jsonrpc": "2.0", "id": 10**9, "result": {}})
                elif then == "error_str":
                    send({"jsonrpc": "2.0", "id": msg_id, "error": "boom"})
                elif then == "result_list":
                    send({"jsonrpc": "2.0", "id": msg_id, "result": [1, 2]})
            elif name == "flood":
                count = int(args.get("count", 100_000))
                notif = json.dumps({"jsonrpc": "2.0", "method": args.get("method", "notifications/flood"),
                                    "params": {"n": 0}}, separators=(",", ":")).encode() + b"\n"
                answer(msg_id, "flooding")
                threading.Thread(target=flood, args=(write, notif, count), daemon=True).start()
            elif name == "ask":
                for i in range(int(args.get("count", 1))):
                    send({"jsonrpc": "2.0", "id": f"ask-{i}", "method": "ping"})
                answer(msg_id, "asked")
            elif name == "trickle":
                text = args.get("text", "")
                data = json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": {
                    "content": [{"type": "text", "text": text}]}}, separators=(",", ":")).encode() + b"\n"
                half = len(data) // 2
                write(data[:half])
                time.sleep(float(args.get("pause", 0.1)))
                write(data[half:])
            elif name == "later":
                answer(msg_id, "later")
                notif = {"jsonrpc": "2.0", "method": "notifications/later", "params": {}}
                timer = threading.Timer(float(args.get("delay", 0.1)), send, args=(notif,))
                timer.daemon = True
                timer.start()
            elif name == "helper":
                helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                          start_new_session=bool(args.get("session")))
                answer(msg_id, str(helper.pid))
            elif name == "die":
                if args.get("answer"):
                    answer(msg_id, "last words")
                os._exit(int(args.get("code", 3)))
            elif name == "stop_reading":
                answer(msg_id, "not reading any more")
                while True:
                    time.sleep(1)
            elif name == "close_stdin":
                os.close(sys.stdin.fileno())
                answer(msg_id, "stdin closed")
                while True:
                    time.sleep(1)
            elif name == "huge":
                size, start = int(args.get("size", 1_000_000)), args.get("start", "{").encode()
                block = b"x" * (1 << 20)
                with out_lock:
                    out.write(start)
                    left = size - len(start) - 1
                    while left > 0:
                        out.write(block[:left])
                        left -= len(block)
                    out.write(b"\n")
                    out.flush()
                answer(msg_id, "after huge")
            else:
                send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32602, "message": f"no tool {name}"}})
        else:
            send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": f"no {method}"}})
    if ignore_eof:
        while True:
            time.sleep(1)
    return 0


def flood(write, notif: bytes, count: int) -> None:
    batch = 1000
    sent = 0
    while sent < count:
        n = min(batch, count - sent)
        write(notif * n)
        sent += n
    sys.stderr.write(f"FLOODED {sent}\n")
    sys.stderr.flush()


def flood_stderr() -> None:
    line = b"e" * 1023 + b"\n"
    err = sys.stderr.buffer
    while True:
        err.write(line * 64)
        err.flush()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(0)
