"""Every ```python block in README.md and docs/*.md runs, so none can rot.

Convention (for whoever adds docs): each fenced block opened with ```python is extracted and
run on its own, in a fresh ``python`` subprocess started from the repository root (so
``examples/servers/demo_server.py`` and ``examples/mcp.json`` are at hand), with this checkout
on PYTHONPATH and a timeout of 60 s, as a new reader runs it: with an empty config directory,
so nothing is approved. From the checkout ``examples/mcp.json`` is a project file: a block
that opens its servers shows the consent it needs (``trust_project=True``,
``config.approve(entry)``) where a reader sees it. It must exit 0. Write blocks against what the project
ships or can start locally (the demo server, ``mcpclient.testing.FakeServer``, a loopback
server the block starts itself). A block that truly cannot run here (a remote OAuth server,
an LLM API key) gets an HTML comment on the line just before its fence::

    <!-- not run: needs a remote OAuth server -->

with the reason; the test skips it and prints how many were skipped. Keep those few. A block
that imports a package of an optional extra (an agent framework, OpenTelemetry, a web
framework) is skipped where that package is not installed (the core-only runs on other
Pythons), and runs wherever it is (the full suite installs every extra). Blocks in
other languages (```bash, plain ```) are not run; the CLI examples have their own test
(tests/test_cli_examples.py).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->")
#: Top-level packages of the optional extras (setup.cfg): a block needing one that is not
#: installed is skipped, never one needing mcpclient itself or the standard library.
OPTIONAL = frozenset({
    "langchain", "langchain_core", "llama_index", "smolagents", "haystack", "pydantic_ai", "agents",
    "openai", "anthropic", "anywidget", "opentelemetry", "django", "flask", "celery", "gunicorn", "fastmcp",
    "dspy", "starlette", "httpx",
})
#: The warnings filter that makes mcpclient's deprecations (the old keywords, issue #47) errors.
OURS_AN_ERROR = "error:mcpclient deprecates:DeprecationWarning"
#: mcpclient's own modules that import an optional extra's package as they load.
NEEDS = {"mcpclient.notebook": "anywidget"}


def missing_optional(code: str) -> list[str]:
    """The optional packages ``code`` imports that are not installed here."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [node.module]
        else:
            continue
        for module in modules:
            names.add(module.split(".")[0])
            names.update(package for prefix, package in NEEDS.items() if module == prefix or module.startswith(prefix + "."))
    return sorted(name for name in names & OPTIONAL if importlib.util.find_spec(name) is None)


def blocks(path: Path) -> list[tuple[int, str, str | None]]:
    """(line number, code, reason it is not run or None) of each ```python block."""
    found = []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            start = i + 1
            end = next(j for j in range(start, len(lines)) if lines[j].strip() == "```")
            previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            marked = NOT_RUN.search(previous)
            found.append((start, "\n".join(lines[start:end]) + "\n", marked.group(1) if marked else None))
            i = end
        i += 1
    return found


ALL = [(path, line, code, reason) for path in FILES for line, code, reason in blocks(path)]


@pytest.fixture(scope="module")
def reader_env(tmp_path_factory) -> dict[str, str]:
    """A new reader's environment: this checkout imported, nothing approved (an empty config
    directory, so neither the machine's approvals nor a test's reach the blocks)."""
    return {**os.environ, "XDG_CONFIG_HOME": str(tmp_path_factory.mktemp("config")), "PYTHONPATH": str(ROOT)}


def test_marked_blocks_are_counted():
    marked = [(p.relative_to(ROOT), line, reason) for p, line, _, reason in ALL if reason]
    print(f"\n{len(ALL)} python blocks in the docs; {len(marked)} marked not run:")
    for path, line, reason in marked:
        print(f"  {path}:{line}: {reason}")
    assert len(ALL) > 10


@pytest.mark.timeout(90)
@pytest.mark.parametrize("path, line, code, reason", ALL,
                         ids=[f"{p.relative_to(ROOT)}:{line}" for p, line, _, _ in ALL])
def test_a_python_block_runs(path, line, code, reason, reader_env):
    if reason:
        pytest.skip(f"not run: {reason}")
    if missing := missing_optional(code):
        pytest.skip(f"needs {', '.join(missing)} (an optional extra not installed here)")
    # An old keyword of connect() or Client (a DeprecationWarning of ours) fails the block.
    result = subprocess.run([sys.executable, "-W", OURS_AN_ERROR, "-c", code], cwd=ROOT, env=reader_env,
                            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, f"{path.name}:{line}\n{code}\nstderr:\n{result.stderr[-3000:]}"
