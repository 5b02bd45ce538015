"""mcpclient's log is the application's to show (a ``NullHandler`` on the ``mcpclient``
logger, as the logging HOWTO advises libraries); the command line, where the user is the
application, shows the warnings.

The server sends a line that is not JSON and a JSON object that is not JSON-RPC before each
reply (``fast_server.py --garbage``): the client skips both and logs a warning for each.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GARBAGE = [sys.executable, str(ROOT / "tests" / "servers" / "fast_server.py"), "--garbage"]
SCRIPT = f"""
import sys
import mcpclient

with mcpclient.connect({GARBAGE!r}, timeout=30) as client:
    print(len(client.list_tools()))
"""


def _python(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.DEVNULL)


def test_an_application_that_configured_no_logging_gets_nothing_on_stderr():
    done = _python("-c", SCRIPT)
    assert (done.returncode, done.stdout, done.stderr) == (0, "2\n", "")


def test_an_application_that_configured_logging_gets_the_warnings():
    done = _python("-c", "import logging; logging.basicConfig(format='%(name)s %(levelname)s %(message)s')\n" + SCRIPT)
    assert (done.returncode, done.stdout) == (0, "2\n"), done.stderr
    assert "mcpclient._rpc.reader WARNING skipping a malformed message from the server" in done.stderr


def test_the_command_line_shows_the_warnings():
    done = _python("-m", "mcpclient", "tools", "-t", "30", "--", *GARBAGE)
    assert done.returncode == 0 and done.stdout.startswith("echo(text: string)"), done.stderr
    lines = done.stderr.splitlines()
    assert lines and all(line.startswith("mcpclient: warning: skipping a ") for line in lines), done.stderr


#: connect() twice from one line to plain http on another host ("remote.test", answered by
#: ``responses`` in the process: nothing leaves this machine).
PLAIN_HTTP = """
import responses, mcpclient
with responses.RequestsMock() as rsps:
    rsps.add(responses.POST, "http://remote.test/mcp", status=500, body="oops")
    for _ in range(2):
        try:
            mcpclient.connect("http://remote.test/mcp", timeout=5, protocol="legacy")
        except mcpclient.HTTPStatusError:
            pass
print("done")
"""


def test_an_application_that_configured_no_logging_is_warned_of_plain_http_to_another_host_once():
    done = _python("-c", PLAIN_HTTP)
    assert (done.returncode, done.stdout) == (0, "done\n"), done.stderr
    warned = [line for line in done.stderr.splitlines() if "plain http" in line]
    assert warned == [
        "<string>:7: UserWarning: mcpclient: connecting to remote.test over plain http: requests and any "
        "credentials travel unencrypted; use https for a server that is not on this machine"
    ], done.stderr


def test_the_command_line_shows_the_plain_http_warning_as_its_own_line():
    import io

    import responses

    from mcpclient.cli._main import main

    err = io.StringIO()
    with responses.RequestsMock() as rsps:
        rsps.add(responses.POST, "http://remote.test/mcp", status=500, body="oops")
        main(["tools", "-t", "5", "http://remote.test/mcp"], stdout=io.StringIO(), stderr=err)
    assert err.getvalue().splitlines()[0] == (
        "mcpclient: warning: connecting to remote.test over plain http: requests and any credentials travel "
        "unencrypted; use https for a server that is not on this machine"
    ), err.getvalue()
