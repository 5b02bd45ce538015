"""A script whose calls wait for ``mcpclient.prompting.approve_tool``, blocked in ``input()``
at a terminal nobody types at (the test runs it on a pseudo-terminal): a person away from the
keyboard. It prints, for each call, what ended it and when, measured from the event that should
end it (a line ``ENDED <what> <seconds> <error>``), then ``DONE``, and exits normally (a read
left waiting must not break the interpreter's exit).

``timeout``: one call with ``timeout=2``, nobody answering.
``close``: one call asking, a second one waiting for its turn, then ``close()`` at 1 s.
``cancel``: one call with ``cancel=`` a plain ``threading.Event`` set at 0.5 s.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import mcpclient  # noqa: E402
import mcpclient.prompting  # noqa: E402
from mcpclient.policy import Policy  # noqa: E402

SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "sdk_policy_server.py")]
WRITE = {"path": "p", "content": ""}


_printing = threading.Lock()


def report(what: str, since: float, error: BaseException | None) -> None:
    line = f"ENDED {what} {time.monotonic() - since:.2f} {type(error).__name__ if error else '-'}\n"
    with _printing:  # one line at a time: two calls end at once
        sys.stdout.write(line)
        sys.stdout.flush()


def call(client: mcpclient.Client, what: str, since: list[float], **options: object) -> threading.Thread:
    def run() -> None:
        error: BaseException | None = None
        try:
            client.call_tool("write_file", WRITE, **options)
        except Exception as exc:  # reported
            error = exc
        report(what, since[0], error)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def main(case: str) -> None:
    policy = Policy([], default="ask", approver=mcpclient.prompting.approve_tool)
    client = mcpclient.connect(SERVER, plugins=mcpclient.Plugins(policy=policy), protocol="legacy", timeout=30)
    if case == "timeout":
        started = [time.monotonic()]
        call(client, "timeout", [started[0] + 2], timeout=2).join(30)
    elif case == "cancel":
        event = threading.Event()
        since = [time.monotonic() + 0.5]
        thread = call(client, "cancel", since, cancel=event)
        time.sleep(0.5)
        since[0] = time.monotonic()
        event.set()
        thread.join(30)
    elif case == "close":
        since = [0.0]
        asking = call(client, "asking", since)
        time.sleep(0.5)
        waiting = call(client, "waiting", since)
        time.sleep(0.5)
        since[0] = time.monotonic()
        client.close()
        asking.join(30)
        waiting.join(30)
    client.close()
    print("DONE", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
