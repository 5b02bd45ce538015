"""What telemetry costs: import time and CPU per call, with and without OpenTelemetry.

    python benchmarks/telemetry_cost.py [--calls N]

Runs each case in a fresh interpreter: ``none`` (opentelemetry made unimportable, as
without the ``otel`` extra), ``api`` (the API with no SDK configured: no-op spans),
``sdk`` (an SDK tracer provider with a span processor that drops everything) and
``off`` (the API installed, ``telemetry=False``). Prints the import time of mcpclient plus
the first Client (which imports the observer), and the CPU time of one ``call_tool`` to an
in-process FakeServer.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, sys, time
case, calls = sys.argv[1], int(sys.argv[2])
if case == "none":
    import importlib.abc
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "opentelemetry" or name.startswith("opentelemetry."):
                raise ModuleNotFoundError(name)
    sys.meta_path.insert(0, Block())
t0 = time.perf_counter()
from mcpclient import Client, Telemetry
from mcpclient.testing import FakeServer
fake = FakeServer(strict=False)
fake.add_tool("add", lambda a, b: a + b)
options = {}
if case == "sdk":
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
    class Drop(SpanExporter):
        def export(self, spans): return SpanExportResult.SUCCESS
    provider = TracerProvider(); provider.add_span_processor(SimpleSpanProcessor(Drop()))
    options["telemetry"] = Telemetry(tracer_provider=provider)
elif case == "off":
    options["telemetry"] = False
client = Client(fake, protocol="legacy", **options)
imported = time.perf_counter() - t0
client.initialize()
for _ in range(200):
    client.call_tool("add", {"a": 1, "b": 2})
c0 = time.process_time()
for _ in range(calls):
    client.call_tool("add", {"a": 1, "b": 2})
cpu = (time.process_time() - c0) / calls
client.close()
print(json.dumps({"case": case, "import_ms": imported * 1000, "cpu_us_per_call": cpu * 1e6,
                  "observer": type(client._observer).__name__}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for case in ("none", "off", "api", "sdk"):
        runs = [json.loads(subprocess.run([sys.executable, "-c", CHILD, case, str(args.calls)], check=True,
                                          capture_output=True, text=True).stdout) for _ in range(args.repeat)]
        best = lambda key: min(r[key] for r in runs)  # noqa: E731 - the least disturbed run
        print(f"{case:5} observer={runs[0]['observer']:13} import+first Client {best('import_ms'):7.1f} ms   "
              f"CPU per call_tool {best('cpu_us_per_call'):7.1f} us")


if __name__ == "__main__":
    main()
