"""SharedClient and SharedGroup pickle as their spec and reopen in the receiving process."""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor

import pytest

from mcpclient import Client, ClientGroup, Handlers, HTTP, SharedClient, SharedGroup, connect
from mcpclient._build.travel import Setting
from mcpclient._core.timeouts import DEFAULT
from mcpclient.testing import FakeServer
from tests.conftest import DEMO_SERVER, SDK_SERVER
from tests.helpers import require_mcp_sdk, wait_for
from tests.http.conftest import start_sdk_server
from tests.scale import _work
from tests.scale.conftest import alive, servers_of


def test_a_shared_client_travels_to_a_spawned_worker_which_opens_one_server_for_all_its_tasks(scale_path):
    require_mcp_sdk()
    shared = SharedClient(SDK_SERVER, timeout=20)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        answers = [pool.submit(_work.add, shared, i, 1).result(60) for i in range(5)]
    assert [a["sum"] for a in answers] == [str(i + 1) for i in range(5)]
    assert len({a["server"] for a in answers}) == 1 and len({a["id"] for a in answers}) == 1
    assert {a["opened"] for a in answers} == {1}
    assert shared.opened == 0 and servers_of(SDK_SERVER[1]) == set()  # the parent never opened one
    wait_for(lambda: not alive({answers[0]["server"], answers[0]["worker"]}), timeout=10)


def test_received_again_in_the_same_process_it_is_the_same_object():
    shared = SharedClient(DEMO_SERVER, timeout=10)
    assert pickle.loads(pickle.dumps(shared)) is shared
    group = SharedGroup({"demo": DEMO_SERVER})
    assert pickle.loads(pickle.dumps(group)) is group


def test_a_spec_received_twice_in_a_new_process_builds_one_shared_client(scale_path):
    shared = SharedClient(DEMO_SERVER, timeout=10)
    data = pickle.dumps(shared)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        assert pool.submit(_loads_twice_same, data).result(60) is True


def _loads_twice_same(data: bytes) -> bool:
    first, second = pickle.loads(data), pickle.loads(data)
    return first is second and not first.is_open


def test_options_that_cannot_be_pickled_are_named_with_what_to_do():
    with pytest.raises(TypeError, match=r"the option handlers=Handlers\(sampling=...\) \(function .*<lambda>\).*module-level"):
        pickle.dumps(SharedClient(DEMO_SERVER, handlers=Handlers(sampling=lambda *a: None)))

    class Local:
        pass

    with pytest.raises(TypeError, match=r"the option middleware\[1\] \(a Local\)"):
        pickle.dumps(SharedClient(DEMO_SERVER, middleware=[_work.handler, Local()]))
    with pytest.raises(TypeError, match=r"its target \(function .*<lambda>\)"):
        pickle.dumps(SharedClient(lambda: connect(DEMO_SERVER)))
    # A module-level handler travels by name.
    assert pickle.loads(pickle.dumps(SharedClient(DEMO_SERVER,
                                                  handlers=Handlers(sampling=_work.handler)))).target == DEMO_SERVER


def test_settings_made_after_construction_travel_to_a_spawned_worker(scale_path):
    require_mcp_sdk()
    shared = SharedClient(SDK_SERVER, timeout=20)
    shared.set_roots(["file:///data/rows"])
    shared.set_sampling_handler(_work.sample)
    shared.timeout = 25
    shared.on_notification("notifications/example/progress", _work.handler)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        answer = pool.submit(_work.late_settings, shared).result(60)
    assert answer["roots"] == "file:///data/rows"
    assert answer["sample"] == f"sampled in {answer['worker']}"  # the handler ran in the worker
    assert answer["timeout"] == 25
    assert shared.opened == 0


def test_settings_made_after_construction_that_cannot_be_pickled_are_named():
    shared = SharedClient(DEMO_SERVER, timeout=10)
    shared.set_roots(["file:///tmp"])
    assert pickle.loads(pickle.dumps(shared)) is shared  # roots travel
    later = pickle.loads(pickle.dumps(Setting("set_log_level", "info", timeout=DEFAULT)))
    assert later.name == "set_log_level" and later.kwargs["timeout"] is DEFAULT  # "the client's timeout" stays so
    shared.set_sampling_handler(lambda request: None)
    with pytest.raises(TypeError, match=r"set_sampling_handler\(\), called after construction, argument 1 "
                                        r"\(function .*<lambda>\).*module-level"):
        pickle.dumps(shared)
    other = SharedClient(DEMO_SERVER, timeout=10)

    def local(params):
        return None

    other.on_request("example/ask", local)
    with pytest.raises(TypeError, match=r"on_request\(\), called after construction, argument 2 \(function .*local\)"):
        pickle.dumps(other)


def test_a_group_names_a_server_that_cannot_travel():
    with pytest.raises(TypeError, match=r"this SharedGroup cannot be pickled: the server 'fake' \(a FakeServer\)"):
        pickle.dumps(SharedGroup({"demo": DEMO_SERVER, "fake": FakeServer()}))
    with pytest.raises(TypeError, match=r"this SharedGroup cannot be pickled: the option handlers=Handlers\(sampling=...\) "
                                        r"\(function .*<lambda>\).*module-level"):
        pickle.dumps(SharedGroup({"demo": DEMO_SERVER}, handlers=Handlers(sampling=lambda request: None)))


def test_a_client_and_a_client_group_refuse_to_pickle_and_point_to_the_shared_ones():
    with connect(DEMO_SERVER, timeout=10) as client:
        assert isinstance(client, Client)
        with pytest.raises(TypeError, match=r"a Client cannot be pickled.*mcpclient\.SharedClient"):
            pickle.dumps(client)
    with pytest.raises(TypeError, match=r"a ClientGroup cannot be pickled.*mcpclient\.SharedGroup"):
        pickle.dumps(ClientGroup({"demo": DEMO_SERVER}))


def test_the_pickle_of_an_open_http_client_carries_its_settings_but_no_session_id(scale_path):
    require_mcp_sdk()
    server = start_sdk_server("--transport", "streamable-http", "--legacy-only")  # a session of its own
    shared = SharedClient(server.url, timeout=20, http=HTTP(headers={"X-Team": "data"}))
    try:
        assert shared.call_tool("add", {"a": 1, "b": 2}).text == "3"
        session_id = shared.get().transport.session_id
        assert session_id
        data = pickle.dumps(shared)
        assert session_id.encode() not in data and b"X-Team" in data
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            answer = pool.submit(_work.add, shared, 2, 3).result(60)
        assert answer["sum"] == "5" and answer["opened"] == 1
    finally:
        shared.close()
        server.stop()


def test_a_shared_group_travels_to_a_spawned_worker(scale_path):
    group = SharedGroup({"one": DEMO_SERVER}, timeout=10)
    group.servers["two"] = DEMO_SERVER  # what the API lets one change later travels too
    group.retry = "safe"
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        answers = [pool.submit(_work.group_add, group, tool, 2, 2).result(60) for tool in ("one__add", "two__add")]
        assert pool.submit(_work.group_retry, group).result(60) == "safe"
    assert [a["sum"] for a in answers] == ["4", "4"] and {a["opened"] for a in answers} == {1}
    assert group.opened == 0
