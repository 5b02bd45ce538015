"""The stdio benchmark runs end to end and reports every number (speed is never asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks" / "bench_stdio.py"
CLIENTS = ("mcpclient", "sdk", "raw")
STDIO_CLIENTS = (*CLIENTS, "mcpclient-portable")  # (the portable pipes: stdio only)
MODES = ("sequential", "concurrent_8", "concurrent_32")


def run_quick(script: Path, timeout: float = 80) -> dict:
    """Run a benchmark's ``--quick --json`` mode; it must exit 0 and print JSON."""
    proc = subprocess.run(
        [sys.executable, str(script), "--quick", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_quick_benchmark_reports_positive_numbers_for_every_client() -> None:
    pytest.importorskip("mcp")
    results = run_quick(BENCH)

    assert results["failures"] == []
    for client in STDIO_CLIENTS:
        for mode in MODES:
            assert results["calls_per_s"][client][mode] > 0, (client, mode)
        assert results["big_result_s"][client] > 0, client
    for client in ("mcpclient", "sdk"):
        assert results["import_s"][client] > 0, client
        assert results["idle_rss_mb"][client] > 0, client
    for mode in MODES:
        assert results["ratios"][mode]["mcpclient/sdk"] > 0, mode
        assert results["ratios"][mode]["mcpclient/raw"] > 0, mode
        assert results["ratios"][mode]["portable/mcpclient"] > 0, mode
    assert results["ratios"]["big_speedup_vs_sdk"] > 0
    assert results["ratios"]["import_speedup_vs_sdk"] > 0
    assert all(isinstance(t["value"], float) and t["value"] > 0 for t in results["targets"].values())


HTTP_BENCH = ROOT / "benchmarks" / "bench_http.py"


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_quick_http_benchmark_reports_every_number_for_every_client_and_reply_mode() -> None:
    pytest.importorskip("mcp")
    results = run_quick(HTTP_BENCH)

    assert results["failures"] == []
    for reply in ("json", "sse"):
        for client in CLIENTS:
            for mode in MODES:
                assert results["calls_per_s"][reply][client][mode] > 0, (reply, client, mode)
                assert results["connections_per_100_calls"][reply][client][mode] >= 0, (reply, client, mode)
                assert results["cpu_us_per_call"][reply][client][mode] > 0, (reply, client, mode)
            if client == "sdk" and reply == "sse" and "sdk" in results["big_rejected"]["sse"]:
                assert results["big_result_s_sdk_unlimited"]["sse"] > 0  # the 1 MiB limit, lifted
            else:
                assert results["big_result_s"][reply][client] > 0, (reply, client)
        for mode in MODES:
            assert results["ratios"][reply][mode]["mcpclient/sdk"] > 0, (reply, mode)
            assert results["ratios"][reply][mode]["mcpclient/raw"] > 0, (reply, mode)
            assert results["ratios"][reply][mode]["cpu_mcpclient/raw"] > 0, (reply, mode)
            assert results["ratios"][reply][mode]["cpu_sdk/mcpclient"] > 0, (reply, mode)
        assert results["ratios"][reply]["big_speedup_vs_sdk"] > 0, reply
    assert "mcpclient" not in results["big_rejected"]["sse"]
    for reply in ("json", "sse"):  # issue #15's goals against the SDK
        for mode in ("sequential", "concurrent_8"):
            assert results["targets"][f"{reply} {mode} vs SDK"]["value"] > 0, (reply, mode)
    assert all(t["met"] is not None for t in results["targets"].values())


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_the_map_tool_benchmark_reports_every_setup_concurrency_and_client() -> None:
    pytest.importorskip("mcp")
    pytest.importorskip("psutil")
    # Eight worker processes, each starting a server (four of them the SDK's): on a busy
    # two-core machine that takes minutes, not the 80 s the other smoke runs get.
    results = run_quick(ROOT / "benchmarks" / "bench_map.py", timeout=400)

    assert results["failures"] == []
    assert set(results["table"]) == {"fast stdio", "fast http", "sdk stdio", "sdk http"}
    for setup, row in results["table"].items():
        assert set(row) == {"1", "8", "32"}, setup
        for concurrency, cell in row.items():
            for client in ("map_tool", "sdk"):
                for key in ("rate", "cpu_us"):
                    assert cell[client][key]["median"] > 0, (setup, concurrency, client, key)
                assert cell[client]["server_busy"]["median"] >= 0, (setup, concurrency, client)
            assert cell["rate map/sdk"] > 0 and cell["cpu sdk/map"] > 0, (setup, concurrency)
    assert {version for kinds in results["protocols"].values() for version in kinds.values()} == {"2025-11-25"}


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_the_cache_benchmark_reports_every_case_and_its_ratios() -> None:
    pytest.importorskip("mcp")
    results = run_quick(ROOT / "benchmarks" / "bench_cache.py")

    assert results["failures"] == []
    shown = [name for name, value in results["per_s"].items() if value is not None]
    assert all(results["per_s"][name] > 0 for name in shown)
    assert set(results["per_s"]) - set(shown) <= ({"list/redis"} if not results["redis"] else set())
    assert all(value > 0 for value in results["ratios"].values() if value is not None)


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_the_pool_benchmark_reports_every_figure_for_every_way() -> None:
    results = run_quick(ROOT / "benchmarks" / "bench_pool.py")

    assert results["failures"] == []
    for way in ("pool", "per-request", "shared-headers"):
        figures = results["medians"][way]
        for name in ("calls_per_s", "sessions", "peak_rss_mb", "p50_ms", "p99_ms"):
            assert figures[name] > 0, (way, name)
    assert results["medians"]["shared-headers"]["sessions"] == 1
    assert results["medians"]["per-request"]["sessions"] == 8 * 3  # a session per call
    assert all(value > 0 for value in results["ratios"].values())
