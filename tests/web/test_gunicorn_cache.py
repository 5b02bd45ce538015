"""Real gunicorn ``--preload`` with two sync workers sharing one ``FileStore`` (made in the
master) against the official-SDK cache server: what one worker learned, the other reuses."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.cache_fixtures import CacheServer
from tests.helpers import wait_for
from tests.web._servers import Gunicorn, get

pytest.importorskip("gunicorn")
pytestmark = pytest.mark.timeout(120)


def test_preforked_workers_share_one_file_store_public_results_for_all_private_per_user(tmp_path: Path):
    markers = tmp_path / "markers"
    markers.mkdir()
    with CacheServer() as mcp:
        env = {"MCP_CACHE_DIR": str(tmp_path / "cache"), "MCP_URL": mcp.url, "MCP_MARKERS": str(markers)}
        with Gunicorn("tests.web.cache_app:app", "-w", "2", "-k", "sync", "--preload", env=env) as server:
            held: list[tuple[int, dict]] = []
            holder = threading.Thread(target=lambda: held.append(get(server.port, "/ask?user=alice&hold=1", 60)))
            holder.start()
            busy = int(wait_for(lambda: list(markers.glob("held-*")), timeout=30)[0].name.split("-")[1])
            # A sync worker serves one request at a time: while one is held, the other answers.
            first = get(server.port, "/ask?user=alice", 30)
            second = get(server.port, "/ask?user=bob", 30)
            (markers / "release").write_text("")
            holder.join(60)
        counts = mcp.counts()
    assert first == (200, {"worker": first[1]["worker"], "tools": ["echo"], "profile": "the profile of alice"})
    assert second[1]["profile"] == "the profile of bob" and second[1]["worker"] == first[1]["worker"] != busy
    assert held == [(200, {"worker": busy, "tools": ["echo"], "profile": "the profile of alice"})]
    # The held worker asked the server nothing: the era, the tool list and alice's profile
    # came from the store the other worker filled; bob's profile was his own.
    assert counts["server/discover"] == 1 and counts["tools/list"] == 1 and counts["resources/read"] == 2
    assert "initialize" not in counts
