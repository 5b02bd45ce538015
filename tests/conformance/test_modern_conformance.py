"""The conformance suite's client scenarios for protocol 2026-07-28 (the modern era).

The harness (``client.py``) connects in auto mode, so each run also proves the era probe:
the mock servers answer ``server/discover`` and judge what the modern client sends (``_meta``,
``Mcp-Method``/``Mcp-Name``/``Mcp-Param-*`` headers, input-required rounds, schema handling).
"""

from __future__ import annotations

import pytest

from .test_conformance import assert_scenario_passes

SPEC_VERSION = "2026-07-28"
SCENARIOS = [
    "request-metadata",
    "tools_call",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
    "sep-2322-client-request-state",
]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_modern_conformance_scenario_passes(scenario, tmp_path):
    assert_scenario_passes(scenario, SPEC_VERSION, tmp_path)
