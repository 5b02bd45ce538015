"""A FileStore trusts only the directory it checked, and only its user's own entries (issue #44).

A shared cache holds tool lists, their hints and discover answers: whoever can put an entry
there decides what a client is told about a server. These tests play a second local user
(``nobody``: the suite runs as root, which can give files away) who prepares the cache
directory, swaps it for a symlink to their own, or drops an entry of theirs in it, against a
real official-SDK server.
"""

from __future__ import annotations

import json
import os
import pwd
import stat
from pathlib import Path

import pytest

from mcpclient import Client, Plugins
from mcpclient._core import files
from mcpclient.cache import FileStore
from mcpclient.transports import StreamableHTTPTransport
from tests.cache_fixtures import CacheServer

PLANTED = {"name": "planted", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}


@pytest.fixture
def other_uid() -> int:
    """The uid of a second local user, who can give files away only when the test runs as root."""
    if not hasattr(os, "getuid") or os.getuid() != 0:
        pytest.skip("giving a file to another user needs root (the suite runs as root in CI)")
    try:
        return pwd.getpwnam("nobody").pw_uid
    except KeyError:
        pytest.skip("there is no 'nobody' user to play the second user")


def give_away(path: Path, uid: int) -> None:
    """Make ``path`` and everything under it belong to ``uid``, as if that user had written it."""
    for root, dirs, names in os.walk(path):
        for name in dirs + names:
            os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)
    os.chown(path, uid, uid)


def plant(directory: Path) -> None:
    """Rewrite the tools/list entry kept in ``directory`` to list the attacker's tool."""
    for entry in directory.iterdir():
        header, _, value = entry.read_bytes().partition(b"\n")
        if b"/tools/list/" in header:
            result = json.loads(value)
            result["tools"] = [PLANTED]
            entry.write_bytes(header + b"\n" + json.dumps(result).encode())
            return
    raise AssertionError("no tools/list entry was kept")


def listed(url: str, store: FileStore) -> list[str]:
    with Client(StreamableHTTPTransport(url), plugins=Plugins(cache=store), timeout=10) as client:
        return [tool.name for tool in client.list_tools()]


def test_a_symlinked_cache_directory_is_refused(tmp_path):
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(ValueError, match="symbolic link"):
        FileStore(tmp_path / "link")


@pytest.mark.parametrize("descriptors", [True, False], ids=["held-open", "judged-each-use"])
def test_a_directory_swapped_for_a_symlink_after_the_check_is_never_read(tmp_path, other_uid, monkeypatch,
                                                                         descriptors):
    # Without directory descriptors (Windows) the path is judged again before each use.
    monkeypatch.setattr(files, "DIRECTORY_DESCRIPTORS", descriptors and files.DIRECTORY_DESCRIPTORS)
    victim = tmp_path / "cache"
    store = FileStore(victim)
    attacker = tmp_path / "attacker"
    with CacheServer() as server:
        assert listed(server.url, FileStore(attacker)) == ["echo"]  # a genuine entry, then planted
        plant(attacker)
        give_away(attacker, other_uid)
        victim.rename(tmp_path / "moved")
        victim.symlink_to(attacker)
        assert listed(server.url, store) == ["echo"]
        assert listed(server.url, store) == ["echo"]
        counts = server.counts()
    if descriptors:  # what it keeps goes to the directory it checked, and is served from there
        assert counts["tools/list"] == 2
        assert any(p.name.endswith(".mcpcache") for p in (tmp_path / "moved").iterdir())
    else:  # the symlink is refused at each use: nothing kept, nothing served
        assert counts["tools/list"] == 3
    store.close()


def test_an_entry_another_user_owns_is_ignored(tmp_path, other_uid):
    directory = tmp_path / "cache"
    store = FileStore(directory)
    with CacheServer() as server:
        assert listed(server.url, store) == ["echo"]
        plant(directory)
        for entry in directory.iterdir():
            os.chown(entry, other_uid, other_uid)
        assert listed(server.url, store) == ["echo"]
        counts = server.counts()
    assert counts["tools/list"] == 2
    store.close()


def test_an_entry_that_is_a_symlink_is_not_followed(tmp_path):
    directory = tmp_path / "cache"
    store = FileStore(directory)
    store.set("k", b"mine", 60)
    (entry,) = [p for p in directory.iterdir() if p.name.endswith(".mcpcache")]
    elsewhere = tmp_path / "elsewhere.mcpcache"
    elsewhere.write_bytes(entry.read_bytes().replace(b"mine", b"theirs"))
    entry.unlink()
    entry.symlink_to(elsewhere)
    assert store.get("k") is None
    assert elsewhere.exists()  # the link was dropped, never what it points at
    store.close()


def test_a_directory_another_user_owns_is_refused_and_an_open_one_of_ours_is_closed(tmp_path, other_uid):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o777)
    os.chown(theirs, other_uid, other_uid)
    with pytest.raises(ValueError, match="another user"):
        FileStore(theirs)
    ours = tmp_path / "ours"
    ours.mkdir()
    os.chmod(ours, 0o777)
    FileStore(ours).close()
    assert stat.S_IMODE(ours.stat().st_mode) == 0o700
