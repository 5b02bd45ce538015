"""Every example runs: the script, the multi-server config, the LLM loop, Flask and Django."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.test_docs_python_blocks import OURS_AN_ERROR

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Django finds its ROOT_URLCONF by module name
    spec.loader.exec_module(module)
    return module


def run_script(name: str) -> str:
    """The script's output; it must exit 0 and write nothing on stderr (neither the library's
    log, which is the application's to show, nor the demo server's); an old keyword of ours
    (a deprecation) is an error."""
    result = subprocess.run([sys.executable, "-W", OURS_AN_ERROR, str(EXAMPLES / name)], capture_output=True,
                            text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return result.stdout


def test_the_quickstart_script_runs():
    out = run_script("quickstart.py")
    assert "add(2, 40) -> 42" in out


def test_the_multi_server_example_reports_the_broken_server_once_and_uses_the_others():
    out = run_script("multi_server.py")
    assert "not available: private:" in out and out.count("DEMO_TOKEN") == 1
    assert "tools: math__add, math__shout, text__add, text__shout" in out
    assert "math__add(2, 40) = 42" in out and "text__shout('hi') = HI" in out


def test_the_llm_loops_answer_through_mcp_tools():
    from mcpclient import connect

    example = load("llm_tool_loop")
    with connect(example.DEMO_SERVER, timeout=10) as client:
        assert example.openai_loop(client, example.stub_openai, "2 + 40?") == "The sum is 42."
        assert example.anthropic_loop(client, example.stub_anthropic, "2 + 40?") == "The sum is 42."


def test_flask_requests_from_many_threads_share_one_client():
    pytest.importorskip("flask")
    example = load("flask_app")
    app = example.create_app()
    mcp = example.MCP.for_app(app)
    try:
        def get(i: int):
            response = app.test_client().get(f"/add?a={i}&b=1")
            return response.status_code, response.get_json()

        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(get, range(40)))
        assert all(status == 200 and not body["is_error"] for status, body in results)
        assert [float(body["sum"]) for _, body in results] == [float(i + 1) for i in range(40)]
        assert mcp.opened == 1
        assert app.test_client().get("/shout/hi").get_json() == {"text": "HI"}
        assert app.test_client().get("/add?a=x").status_code == 400
        health = app.test_client().get("/healthz/mcp")
        assert health.status_code == 200 and health.get_json()["ok"] is True
    finally:
        mcp.close()
        example.MCP.for_app(example.app).close()


def test_flask_maps_mcp_errors_to_502():
    pytest.importorskip("flask")
    example = load("flask_app")
    app = example.create_app(["/nonexistent/mcp-server"])
    response = app.test_client().get("/add?a=1&b=2")
    assert response.status_code == 502 and "cannot start" in response.get_json()["error"]
    health = app.test_client().get("/healthz/mcp")
    assert health.status_code == 503 and health.get_json()["last_error"].startswith("TransportError")


def test_django_view_serves_concurrent_requests_with_one_client():
    pytest.importorskip("django")
    example = load("django_view")
    from django.test import Client as DjangoClient

    try:
        def get(i: int):
            response = DjangoClient().get("/add", {"a": i, "b": 2})
            return response.status_code, response.json()

        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(get, range(24)))
        assert all(status == 200 for status, _ in results)
        assert [float(body["sum"]) for _, body in results] == [float(i + 2) for i in range(24)]
        assert example.get_client().opened == 1
        assert DjangoClient().get("/add", {"a": "x"}).status_code == 400
        assert DjangoClient().get("/healthz/mcp").json()["ok"] is True
    finally:
        example.get_client().close()


def test_the_process_pool_example_of_docs_scale_prints_its_results_and_nothing_else(tmp_path):
    # docs/scale.md's two files, as written: tasks.py and main.py, run from the repository root.
    text = (EXAMPLES.parent / "docs" / "scale.md").read_text()
    block = text[text.index("```python\n# tasks.py\n") + len("```python\n"):]
    block = block[:block.index("```\n")]
    tasks, main = block.split("# main.py\n")
    (tmp_path / "tasks.py").write_text(tasks)
    (tmp_path / "main.py").write_text(main)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(EXAMPLES.parent)])}
    result = subprocess.run([sys.executable, "-W", OURS_AN_ERROR, str(tmp_path / "main.py")], capture_output=True,
                            text=True, timeout=240,
                            cwd=EXAMPLES.parent, env=env, stdin=subprocess.DEVNULL)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    assert result.stdout == "10000 1 10000 50005000\n"
    shown = next(line for line in main.splitlines() if line.lstrip().startswith("print("))
    assert shown.endswith("# 10000 1 10000 50005000")
