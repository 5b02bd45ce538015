"""Finding 9: the file token store checks its directory, not only its files."""

from __future__ import annotations

import logging
import os
import stat
import sys

import pytest

from mcpclient.auth import AuthorizationError, FileTokenStore

RECORD = {"tokens": {"access_token": "a-secret", "refresh_token": "r-secret"}, "clients": {}}
KEY = "https://mcp.example.com/mcp"

posix_only = pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership and modes")


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@posix_only
@pytest.mark.parametrize("mode", [0o777, 0o770, 0o722])
def test_a_directory_others_can_write_to_is_made_private_with_a_warning(tmp_path, caplog, mode):
    directory = tmp_path / "oauth"
    directory.mkdir()
    os.chmod(directory, mode)
    store = FileTokenStore(directory)
    with caplog.at_level(logging.WARNING, logger="mcpclient.auth"):
        store.save(KEY, RECORD)
    assert _mode(directory) == 0o700
    assert any("writable by other users" in r.getMessage() and str(directory) in r.getMessage() for r in caplog.records)
    assert store.load(KEY) == RECORD


@posix_only
def test_loading_from_such_a_directory_repairs_it_too(tmp_path, caplog):
    store = FileTokenStore(tmp_path / "oauth")
    store.save(KEY, RECORD)
    os.chmod(tmp_path / "oauth", 0o777)
    with caplog.at_level(logging.WARNING, logger="mcpclient.auth"):
        assert store.load(KEY) == RECORD
    assert _mode(tmp_path / "oauth") == 0o700
    assert "writable by other users" in caplog.text


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_a_symlinked_directory_is_refused(tmp_path):
    real = tmp_path / "elsewhere"
    real.mkdir(mode=0o700)
    link = tmp_path / "oauth"
    link.symlink_to(real, target_is_directory=True)
    store = FileTokenStore(link)
    with pytest.raises(AuthorizationError, match="symbolic link"):
        store.save(KEY, RECORD)
    with pytest.raises(AuthorizationError, match="symbolic link"):
        store.load(KEY)
    assert list(real.iterdir()) == []


@posix_only
def test_a_directory_of_another_user_is_refused(tmp_path, monkeypatch):
    directory = tmp_path / "oauth"
    directory.mkdir(mode=0o700)
    owner = os.lstat(directory).st_uid
    monkeypatch.setattr(os, "getuid", lambda: owner + 1)  # the store runs as someone else
    store = FileTokenStore(directory)
    with pytest.raises(AuthorizationError, match="belongs to another user"):
        store.save(KEY, RECORD)
    assert list(directory.iterdir()) == []


def test_without_getuid_the_directory_is_used_as_it_is(tmp_path, monkeypatch):
    monkeypatch.delattr(os, "getuid", raising=False)
    store = FileTokenStore(tmp_path / "oauth")
    store.save(KEY, RECORD)
    assert store.load(KEY) == RECORD


def test_a_missing_directory_is_created_private_and_loads_nothing(tmp_path):
    store = FileTokenStore(tmp_path / "a" / "oauth")
    assert store.load(KEY) is None
    store.delete(KEY)
    assert not (tmp_path / "a").exists()
    store.save(KEY, RECORD)
    if hasattr(os, "getuid"):
        assert _mode(tmp_path / "a" / "oauth") == 0o700
