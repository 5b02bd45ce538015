"""Importing mcpclient, or any adapter module, imports no framework: only calling it does."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT

MODULES = ["langchain", "llamaindex", "smolagents", "haystack", "pydantic_ai", "openai_agents", "sampling", "dspy"]
FRAMEWORKS = ["langchain_core", "langchain", "llama_index", "smolagents", "haystack", "pydantic_ai", "agents",
              "openai", "anthropic", "dspy", "google.genai"]


def test_no_framework_is_imported_until_a_tool_is_made():
    code = (
        "import json, sys, mcpclient, mcpclient.integrations\n"
        + "".join(f"import mcpclient.integrations.{m}\n" for m in MODULES)
        + f"print(json.dumps(sorted(m for m in {FRAMEWORKS!r} if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(out.stdout) == []
