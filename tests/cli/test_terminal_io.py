"""The CLI's terminal reader: lines, Ctrl-C while a question is open, the end of input. Over
``select`` (POSIX) and over a reader thread (Windows' way, forced here with ``threaded``)."""

from __future__ import annotations

import io
import os
import threading

import pytest

from mcpclient.cli._ask import TerminalIO
from tests.helpers import wait_for


@pytest.mark.parametrize("threaded", [False, True], ids=["select", "thread"])
def test_the_terminal_reader_reads_lines_is_interrupted_and_ends_at_the_end_of_input(threaded):
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "r") as stdin:
        terminal = TerminalIO(stdin, io.StringIO(), threaded=threaded)
        os.write(write_end, b"yes\r\nno\n")
        assert terminal.read("? ") == "yes"
        assert terminal.read("? ") == "no"
        timer = threading.Timer(0.2, terminal.interrupt)
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            terminal.read("? ")  # nothing typed: only the interrupt ends it
        timer.join()
        os.close(write_end)
        with pytest.raises(EOFError):
            terminal.read("? ")
        assert wait_for(lambda: not any(t.name == "mcpclient-terminal" for t in threading.enumerate()))
