"""``telemetry="auto"`` waits to be needed: OpenTelemetry installed but unused costs nothing.

In a fresh interpreter (the test process has imported OpenTelemetry already): a client to a
stdio server imports no OpenTelemetry module and makes no observer while the application has
not imported the API; once it has (installing an SDK's providers), the next call is a span and
the session-duration metric, recorded at ``close()``, covers the session from its opening.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FAST_SERVER = Path(__file__).resolve().parent.parent / "servers" / "fast_server.py"

CHILD = r"""
import json, sys, time
import mcpclient
from mcpclient.plugins.telemetry import TelemetryExtension

client = mcpclient.connect([sys.executable, sys.argv[1]])
opened = time.monotonic()
client.call_tool("echo", {"text": "unobserved"})
[extension] = [e for e in client.extensions if isinstance(e, TelemetryExtension)]
before = {
    "imported": sorted(m for m in sys.modules if m.startswith("opentelemetry.")),
    "observer": extension.observer is not None,
}

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
time.sleep(0.3)  # the session is this much older than the observer made below
client.call_tool("echo", {"text": "observed"})
client.close()
lived = time.monotonic() - opened
sessions = [point.sum for resource in reader.get_metrics_data().resource_metrics
            for scope in resource.scope_metrics for metric in scope.metrics
            if metric.name == "mcp.client.session.duration" for point in metric.data.data_points]
print(json.dumps({"before": before, "spans": [s.name for s in exporter.get_finished_spans()],
                  "sessions": sessions, "lived": lived}))
"""


def test_auto_telemetry_imports_nothing_until_the_application_uses_opentelemetry():
    proc = subprocess.run([sys.executable, "-c", CHILD, str(FAST_SERVER)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["before"] == {"imported": [], "observer": False}
    assert found["spans"] == ["tools/call echo"]  # the second call only
    [duration] = found["sessions"]
    assert 0.3 <= duration <= found["lived"]  # from the opening, not from when the observer was made
