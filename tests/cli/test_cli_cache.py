"""``--cache DIR``: repeated runs of the real CLI (child processes) reuse what the first one
learned, against the official-SDK cache server (tests/servers/sdk_cache_server.py). Private
reads kept per set of credentials: tests/security/test_cache_owners.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cache_fixtures import CacheServer, cli

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(180)


def test_repeated_runs_with_a_cache_skip_the_probe_and_reuse_the_tool_list(tmp_path: Path) -> None:
    with CacheServer() as server:
        for _ in range(3):
            run = cli("tools", server.url, "--json", "--cache", str(tmp_path / "cache"))
            assert run.returncode == 0, run.stderr
            assert [tool["name"] for tool in json.loads(run.stdout)] == ["echo"]
        counts = server.counts()
    assert counts["server/discover"] == 1 and counts["tools/list"] == 1


def test_without_the_option_every_run_asks_again(tmp_path: Path) -> None:
    with CacheServer() as server:
        for _ in range(2):
            assert cli("tools", server.url, "--json").returncode == 0
        counts = server.counts()
    assert counts["server/discover"] == 2 and counts["tools/list"] == 2


def test_a_cache_directory_that_cannot_be_made_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    run = cli("tools", "http://127.0.0.1:9/mcp", "--cache", str(tmp_path / "file" / "cache"))
    assert run.returncode == 2 and "--cache" in run.stderr
