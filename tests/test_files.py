"""The atomic file writes: the mode a file gets (shared or private), and no half file ever seen."""

from __future__ import annotations

import os
import stat
import sys
import threading
from pathlib import Path
from typing import Iterator

import pytest

from mcpclient._core.files import write_atomic, write_private

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes and umask")


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@posix_only
def test_a_shared_file_gets_the_usual_mode_less_the_umask(tmp_path: Path, umask: None) -> None:
    path = tmp_path / "mcp.lock"
    write_atomic(path, b"one")
    assert mode(path) == 0o644 and path.read_bytes() == b"one"
    os.umask(0o077)
    write_atomic(path, b"two")
    assert mode(path) == 0o600 and path.read_bytes() == b"two"


@posix_only
def test_a_private_file_is_0600_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        write_private(tmp_path / "token.json", b"{}")
    finally:
        os.umask(old)
    assert mode(tmp_path / "token.json") == 0o600


def test_a_reader_sees_the_old_file_or_the_new_never_half(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    payloads = [bytes([ord("a") + i]) * 2_000_000 for i in range(3)]
    write_atomic(path, payloads[0])
    seen: list[bytes] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            seen.append(path.read_bytes())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(30):
            write_atomic(path, payloads[i % 3])
    finally:
        done.set()
        reader.join(10)
    assert seen and all(data in payloads for data in seen)
    assert [p.name for p in tmp_path.iterdir()] == ["big.json"]  # no temporary file left


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    path = tmp_path / "taken"
    path.mkdir()
    (path / "inside").write_bytes(b"old")
    with pytest.raises(OSError):
        write_atomic(path, b"new")  # the rename onto a directory fails
    assert (path / "inside").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
