"""Opening and closing clients with telemetry on leaks nothing (issue #28, item 6).

With ``opentelemetry-api`` installed and no provider configured, the API's proxy meter
provider keeps every meter it hands out (and each proxy meter every instrument made on it),
so that they can follow a provider installed later. The client's instruments are therefore
made once per process (per meter provider), never per client: a web app that opens a client
per request must not grow.
"""

from __future__ import annotations

import gc
import tracemalloc

from opentelemetry.metrics import _internal as metrics_state

from mcpclient import Client, Plugins, Telemetry
from tests.doubles import QueueTransport, ScriptedServer


def open_and_close(count: int, **options) -> None:
    for _ in range(count):
        transport = QueueTransport()
        ScriptedServer(transport)
        with Client(transport, protocol="legacy", plugins=Plugins(telemetry=True), **options):
            pass


def proxies() -> int:
    return sum(1 for o in gc.get_objects() if type(o).__module__ == metrics_state.__name__ and "Proxy" in type(o).__name__)


def test_an_open_close_loop_with_an_unconfigured_api_keeps_no_objects():
    open_and_close(5)  # the process's instruments, made once
    gc.collect()
    before_meters = len(metrics_state._PROXY_METER_PROVIDER._meters)
    before = proxies()
    open_and_close(100)
    gc.collect()
    assert len(metrics_state._PROXY_METER_PROVIDER._meters) == before_meters
    assert proxies() - before < 10  # was 300 (a meter and two histograms a client)


def test_an_open_close_loop_does_not_grow_memory():
    open_and_close(20)
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.take_snapshot()
        open_and_close(300)
        gc.collect()
        grown = tracemalloc.take_snapshot().compare_to(start, "filename")
    finally:
        tracemalloc.stop()
    otel = sum(stat.size_diff for stat in grown if "opentelemetry" in str(stat.traceback))
    assert otel < 30_000, f"{otel} bytes kept by OpenTelemetry after 300 clients"  # was about 1 KB a client


def test_clients_given_one_meter_provider_share_its_instruments(otel):
    for _ in range(3):
        transport = QueueTransport()
        ScriptedServer(transport)
        with Client(transport, protocol="legacy",
                    plugins=Plugins(telemetry=Telemetry(meter_provider=otel.meter_provider))) as client:
            client.ping()
    points = otel.metric_points("mcp.client.session.duration")
    assert sum(p.count for p in points) == 3  # three sessions recorded on one histogram
