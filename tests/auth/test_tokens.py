"""Token stores: what survives, with which permissions, and reprs that hide secrets."""

from __future__ import annotations

import os
import stat
import sys
import threading

import pytest

from mcpclient.auth import ClientInfo, FileTokenStore, MemoryTokenStore, Tokens

RECORD = {"tokens": {"access_token": "a-secret", "refresh_token": "r-secret"}, "clients": {}}
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")


def test_memory_store_returns_copies():
    store = MemoryTokenStore()
    store.save("k", RECORD)
    store.load("k")["tokens"]["access_token"] = "changed"
    assert store.load("k") == RECORD


@posix_only
def test_file_store_writes_one_private_file_per_server(tmp_path):
    store = FileTokenStore(tmp_path / "oauth")
    store.save("https://a.example/mcp", RECORD)
    store.save("https://b.example/mcp", {"tokens": None, "clients": {}})
    files = sorted((tmp_path / "oauth").iterdir())
    assert len(files) == 2
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert stat.S_IMODE((tmp_path / "oauth").stat().st_mode) == 0o700
    assert store.load("https://a.example/mcp") == RECORD
    assert "a.example" not in " ".join(f.name for f in files)


def test_file_store_leaves_no_temporary_files_and_replaces_atomically(tmp_path):
    store = FileTokenStore(tmp_path)
    threads = [threading.Thread(target=store.save, args=("k", {"n": i})) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [p.name for p in tmp_path.iterdir()] == [store.path_for("k").name]
    assert store.load("k")["n"] in range(20)


@posix_only
def test_file_store_ignores_a_file_other_users_can_read(tmp_path, caplog):
    store = FileTokenStore(tmp_path)
    store.save("k", RECORD)
    os.chmod(store.path_for("k"), 0o644)
    assert store.load("k") is None
    assert "readable by other users" in caplog.text


def test_file_store_survives_garbage_and_deletes(tmp_path):
    store = FileTokenStore(tmp_path)
    store.path_for("k").write_text("{not json")
    os.chmod(store.path_for("k"), 0o600)
    assert store.load("k") is None
    store.save("k", RECORD)
    store.delete("k")
    store.delete("k")
    assert store.load("k") is None


def test_reprs_never_show_tokens_or_secrets():
    tokens = Tokens(access_token="a-secret", refresh_token="r-secret", expires_at=None, scope="read")
    client = ClientInfo(client_id="c", client_secret="c-secret")
    shown = repr(tokens) + repr(client) + str(tokens) + str(client)
    assert "secret" not in shown.replace("client_secret", "")
    assert Tokens.from_json(tokens.to_json()) == tokens
    assert ClientInfo.from_json(client.to_json()) == client
