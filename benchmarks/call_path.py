"""How deep one ``call_tool`` goes: mcpclient's frames from the caller to the wire and back.

Usage::

    python benchmarks/call_path.py

For stdio (``tests/servers/fast_server.py``) and Streamable HTTP (``benchmarks/fast_http_server.py``,
JSON and SSE replies), it makes a few warm-up calls, then watches one ``call_tool`` on the
calling thread (``sys.setprofile``). It prints how many of mcpclient's functions the call
enters on that thread ("walk": each function once, and the files they are in), and two
stacks, counted in mcpclient's own frames ("hops") and their files:

* out: the stack when the request's bytes are written (the first ``socket.send``/``sendall`` or
  ``os.write`` of the call);
* back: the stack when the reply is handed over (``Engine._take_reply`` or ``Engine._pop_reply``,
  where the caller's own thread takes it; over stdio the caller often reads its own reply).

``--show`` prints the frames themselves. Frames outside ``mcpclient/`` (requests, urllib3,
http.client) are counted apart. A measurement of the code's shape, not of its speed.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from pathlib import Path
from types import FrameType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mcpclient import Client, StdioTransport  # noqa: E402
from mcpclient.transports.http import StreamableHTTPTransport  # noqa: E402

PACKAGE = str(REPO / "mcpclient") + os.sep
TAKES = {"_take_reply", "_pop_reply"}


def stack(frame: FrameType | None) -> list[tuple[str, str]]:
    """(file, function) of every frame from ``frame`` out, innermost last."""
    found = []
    while frame is not None:
        found.append((frame.f_code.co_filename, frame.f_code.co_qualname))
        frame = frame.f_back
    return found[::-1]


def writes(function: Any) -> bool:
    """Whether ``function`` (a C function the profiler saw called) writes to the wire."""
    if function is os.write:
        return True
    return getattr(function, "__name__", "") in ("send", "sendall") and isinstance(
        getattr(function, "__self__", None), socket.socket)


def watch(client: Client) -> dict[str, list[tuple[str, str]]]:
    """The stacks of one call_tool (see the module's docstring)."""
    seen: dict[str, list[tuple[str, str]]] = {"walk": []}
    walked: set[tuple[str, str]] = set()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(PACKAGE):
            key = (frame.f_code.co_filename, frame.f_code.co_qualname)
            if key not in walked:
                walked.add(key)
                seen["walk"].append(key)
        if event == "c_call" and "out" not in seen and writes(arg):
            seen["out"] = stack(frame)
        elif event == "call" and frame.f_code.co_name in TAKES and "back" not in seen:
            seen["back"] = stack(frame)

    sys.setprofile(profile)
    try:
        assert client.call_tool("echo", {"text": "x"}).text == "x"
    finally:
        sys.setprofile(None)
    return seen


def count(frames: list[tuple[str, str]]) -> tuple[int, int, int]:
    """(mcpclient frames from Client.call_tool in, their files, other frames below it)."""
    start = next(i for i, (path, name) in enumerate(frames) if name == "Client.call_tool")
    below = frames[start:]
    own = [(path, name) for path, name in below if path.startswith(PACKAGE)]
    return len(own), len({path for path, _ in own}), len(below) - len(own)


def report(label: str, client: Client, show: bool) -> None:
    for _ in range(20):
        client.call_tool("echo", {"text": "warm"})
    seen = watch(client)
    walk = seen["walk"]
    print(f"{label:<22} walk  {len(walk):3d} functions in {len({path for path, _ in walk}):2d} files")
    if show:
        for path, name in walk:
            print(f"    {os.path.relpath(path, REPO)}: {name}")
    for way in ("out", "back"):
        frames = seen.get(way)
        if frames is None:
            print(f"{label:<22} {way:<5} (not on the calling thread)")
            continue
        hops, files, other = count(frames)
        print(f"{label:<22} {way:<5} {hops:3d} hops in {files:2d} files (+{other} frames of other packages)")
        if show:
            start = next(i for i, (_, name) in enumerate(frames) if name == "Client.call_tool")
            for path, name in frames[start:]:
                where = os.path.relpath(path, REPO) if path.startswith(str(REPO)) else os.path.basename(path)
                print(f"    {where}: {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print the frames")
    args = parser.parse_args()
    server = [sys.executable, str(REPO / "tests" / "servers" / "fast_server.py")]
    with Client(StdioTransport(server), timeout=30, protocol="legacy") as client:
        report("stdio", client, args.show)
    for mode in ("--json", "--sse"):
        proc = subprocess.Popen([sys.executable, str(REPO / "benchmarks" / "fast_http_server.py"), mode,
                                 "--exit-on-eof"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            transport = StreamableHTTPTransport(url, listen=False)
            with Client(transport, timeout=30, protocol="legacy") as client:
                report(f"streamable http {mode[2:]}", client, args.show)
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(10)


if __name__ == "__main__":
    main()
