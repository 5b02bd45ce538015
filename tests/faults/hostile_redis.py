"""A hostile Redis (standard library only) for the cache-store fault tests.

It speaks RESP well enough for redis-py to talk to it, and misbehaves as asked:

* ``garbage``: every command is answered with a well-formed reply of the wrong type (an array
  where a status or a string is due), which redis-py does not turn into a ``RedisError``;
* ``endless-scan``: ``SCAN`` always answers "cursor 1, no keys", so a key scan never ends;
  each such answer waits ``delay`` seconds first. ``GET`` misses, ``SET`` and the rest say OK.

A real ``redis-server`` cannot be made to do either on demand. ``HostileRedis`` runs in a
thread of the test's process on a free loopback port and counts the commands it gets.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter

#: An array where a status or a bulk string is due (redis-py raises AttributeError on it).
WRONG_TYPE = b"*2\r\n$1\r\n0\r\n*1\r\n:5\r\n"


class HostileRedis:
    """A RESP server on 127.0.0.1 misbehaving as ``mode`` says; ``url`` to connect, ``counts``."""

    def __init__(self, mode: str, *, delay: float = 0.0) -> None:
        if mode not in ("garbage", "endless-scan"):
            raise ValueError(mode)
        self.mode, self.delay = mode, delay
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"redis://127.0.0.1:{self._listener.getsockname()[1]}/0"
        self._stopped = False
        threading.Thread(target=self._accept, name="hostile-redis", daemon=True).start()

    def count(self, command: str) -> int:
        with self._lock:
            return self.counts[command]

    def close(self) -> None:
        self._stopped = True
        self._listener.close()

    def __enter__(self) -> HostileRedis:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._stopped:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), name="hostile-redis-conn", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        resp3 = False  # what this connection asked to speak (HELLO 3): its null differs
        try:
            while not self._stopped:
                command = _read_command(reader)
                if command is None:
                    return
                with self._lock:
                    self.counts[command[0].upper()] += 1
                if command[0].upper() == "HELLO" and command[1:2] == ["3"]:
                    resp3 = True
                conn.sendall(self._answer(command, resp3))
        except OSError:
            return
        finally:
            conn.close()

    def _answer(self, command: list[str], resp3: bool) -> bytes:
        if self.mode == "garbage":
            return WRONG_TYPE
        name = command[0].upper()
        if name == "SCAN":
            if self.delay:
                time.sleep(self.delay)
            return b"*2\r\n$1\r\n1\r\n*0\r\n"
        if name == "HELLO":  # what redis-py asks first: a Redis 7 that speaks what was asked
            proto = command[1].encode() if len(command) > 1 else b"2"
            return b"%3\r\n+server\r\n+redis\r\n+version\r\n+7.2.0\r\n+proto\r\n:" + proto + b"\r\n"
        if name == "GET":
            return b"_\r\n" if resp3 else b"$-1\r\n"
        if name == "DEL":
            return b":0\r\n"
        return b"+OK\r\n"


def _read_command(reader: object) -> list[str] | None:
    """One command (an array of bulk strings); None at the end of the connection."""
    line = reader.readline()  # type: ignore[attr-defined]
    if not line:
        return None
    if not line.startswith(b"*"):
        return [line.strip().decode(errors="replace") or "?"]  # an inline command
    parts = []
    for _ in range(int(line[1:])):
        size = int(reader.readline()[1:])  # type: ignore[attr-defined]
        parts.append(reader.read(size + 2)[:-2].decode(errors="replace"))  # type: ignore[attr-defined]
    return parts
