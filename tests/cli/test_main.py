"""The mcpclient command line, against the demo server and the official SDK's server (child processes)."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from mcpclient.cli import main
from mcpclient.cli._progress import Progress

from tests.conftest import DEMO_SERVER, SDK_SERVER


class TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(*argv: str, stdout=None, stderr=None) -> tuple[int, str, str]:
    out = stdout if stdout is not None else io.StringIO()
    err = stderr if stderr is not None else io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue() if isinstance(out, io.StringIO) else "", err.getvalue()


def demo(*argv: str) -> tuple[int, str, str]:
    return run(*argv, "--", *DEMO_SERVER)


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"demo": {"command": DEMO_SERVER[0], "args": DEMO_SERVER[1:]},
                                               "other": {"url": "https://example.invalid/mcp"}}}))
    return str(path)


def test_tools_are_listed_readably():
    code, out, _ = demo("tools")
    assert code == 0
    assert out.splitlines()[:2] == ["add(a: number, b: number)", "    Add two numbers and return the sum."]


def test_tools_json_is_mcp_shaped():
    code, out, _ = demo("tools", "--json")
    tools = json.loads(out)
    assert code == 0 and tools[0]["name"] == "add" and tools[0]["inputSchema"]["required"] == ["a", "b"]


def test_call_types_key_value_arguments_from_the_tool_schema():
    code, out, err = demo("call", "add", "a=1", "b=2.5")
    assert (code, out, err) == (0, "3.5\n", "")


def test_call_takes_a_json_object_and_raw_json_values():
    assert demo("call", "add", "--args-json", '{"a": 2, "b": 2}')[1] == "4\n"
    assert demo("call", "add", "a:=5", "b:=5")[1] == "10\n"


def test_call_json_output_is_the_result():
    code, out, _ = demo("call", "shout", "text=hi", "-o", "json")
    assert json.loads(out) == {"content": [{"type": "text", "text": "HI"}]}


@pytest.mark.parametrize("options", [("-t", "5"), ("-o", "json"), ("-e", "K=V"), ("--json",), ("--protocol", "legacy")])
def test_options_may_stand_between_the_tool_name_and_its_arguments(options):
    code, out, err = demo("call", "add", *options, "a=1", "b=2")
    assert (code, err) == (0, "")
    assert out == "3\n" or json.loads(out)["content"][0]["text"] == "3"


def test_json_means_json_output_and_args_json_the_arguments():
    code, out, _ = demo("call", "add", "--json", "--args-json", '{"a": 2, "b": 3}')
    assert code == 0 and json.loads(out)["content"][0]["text"] == "5"
    code, _, err = demo("call", "add", '{"a": 2}')  # the old `--json OBJECT` habit
    assert code == 2 and "--args-json" in err


def test_json_output_of_a_structured_tool_is_the_tool_result_without_the_schema_the_client_attached():
    code, out, _ = run("call", "add", "a=2", "b=3", "--json", "--", *SDK_SERVER)
    assert code == 0
    printed = json.loads(out)
    printed.pop("_meta", None)  # the 2026 era's server info
    assert printed == {"content": [{"type": "text", "text": "5"}], "structuredContent": {"result": 5}}


def test_protocol_picks_the_era():
    code, out, _ = demo("info", "--protocol", "legacy")
    assert code == 0 and "protocol:     2025-11-25" in out
    code, _, err = demo("ping", "--protocol", "2026-07-28")  # the demo server is legacy-only
    assert code == 4 and "legacy" in err
    assert run("ping", "--protocol", "1999")[0] == 2


def test_a_disabled_server_is_reported_as_disabled(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"old": {"command": "nope", "disabled": True}}}))
    code, _, err = run("ping", "old", "-c", str(path))
    assert code == 2 and "'old' is disabled" in err and "no server named" not in err


def test_a_wrong_argument_type_is_a_usage_error_in_one_line():
    code, _, err = demo("call", "add", "a=1", "b=lots")
    assert code == 2
    assert err == "mcpclient: error: b='lots': expected number (JSON), use b:=JSON for raw JSON\n"


def test_an_unknown_tool_is_a_server_error_in_one_line():
    code, _, err = demo("call", "nope")
    assert code == 4
    assert err.startswith("mcpclient: error: the server has no tool 'nope'") and err.count("\n") == 1


def test_a_command_that_cannot_start_is_a_connection_error():
    code, _, err = run("tools", "--", "/nonexistent/mcp-server")
    assert code == 3 and err.startswith("mcpclient: connection error: cannot start")


def test_servers_are_named_from_a_config_file(config_file):
    code, out, _ = run("call", "demo", "add", "a=1", "b=1", "-c", config_file)
    assert (code, out) == (0, "2\n")
    code, out, _ = run("servers", "-c", config_file)
    assert out.splitlines()[0].startswith("demo  ") and "https://example.invalid/mcp" in out


def test_an_unknown_server_name_lists_the_known_ones(config_file):
    code, _, err = run("tools", "nosuch", "-c", config_file)
    assert code == 2
    assert "no server named 'nosuch' in the config files (demo, other)" in err


def test_mcpclient_server_names_the_default_server(config_file, monkeypatch):
    monkeypatch.setenv("MCPCLIENT_SERVER", "demo")
    assert run("call", "add", "a=3", "b=4", "-c", config_file)[1] == "7\n"


def test_resources_read_prompts_prompt_complete_ping_and_info():
    assert "demo://readme" in demo("resources")[1]
    assert demo("read", "demo://readme")[1].startswith("#")
    assert demo("prompts")[1].startswith("review(code)")
    assert "print(1)" in demo("prompt", "review", "code=print(1)")[1]
    assert demo("complete", "review", "code", "def")[1].startswith("def ")
    assert demo("ping")[1].startswith("pong (")
    info = demo("info")[1]
    assert "server:       demo-server 1.0.0" in info and "protocol:     2025-11-25" in info
    assert json.loads(demo("info", "--json")[1])["serverInfo"]["name"] == "demo-server"


def sdk(*argv: str, stdout=None, stderr=None) -> tuple[int, str, str]:
    """The command against the official SDK's server (tests/servers/sdk_server.py), a child process."""
    return run(*argv, "--", *SDK_SERVER, stdout=stdout, stderr=stderr)


def test_a_tool_error_result_exits_with_1_and_says_so_on_stderr():
    code, out, err = sdk("call", "fail")
    assert (code, out) == (1, "")
    assert err == "mcpclient: tool 'fail' reported an error: Error executing tool fail: this tool always fails\n"


def test_a_slow_tool_exits_with_5():
    code, _, err = sdk("call", "slow", "seconds=30", "-t", "0.5")
    assert code == 5 and err.startswith("mcpclient: timeout:")


def test_a_binary_resource_goes_to_stdout_when_redirected():
    class Redirected(io.TextIOWrapper):
        pass

    raw = io.BytesIO()
    out = Redirected(raw, encoding="utf-8")
    code = main(["read", "test://blob", "--", *SDK_SERVER], stdout=out, stderr=io.StringIO())
    out.flush()
    assert code == 0 and raw.getvalue() == bytes(range(256))


def test_a_binary_resource_on_a_terminal_is_described():
    code, out, _ = sdk("read", "test://blob", stdout=TTY())
    assert out == "[application/octet-stream, 256 bytes: redirect to a file to save it]\n"


def test_images_in_results_are_described():
    assert sdk("call", "image")[1] == "[image image/png, 69 bytes]\n"


def test_progress_is_shown_on_a_terminal():
    err = TTY()
    code, out, _ = sdk("call", "slow", "seconds=0.3", "steps=3", stderr=err)
    assert (code, out) == (0, "done after 3 steps\n")
    assert "slow" in err.getvalue() and "step 3 of 3" in err.getvalue()  # the server's own progress


def test_the_progress_line_without_tqdm(monkeypatch):
    stream = TTY()
    with Progress("job", stream) as bar:
        bar._tqdm = None
        bar.callback(1, 4, "one")
        bar.callback(2, 4, None)
    assert "job: 1/4 one" in stream.getvalue() and "job: 2/4" in stream.getvalue()


def test_help_teaches_with_examples_and_exit_codes(capsys):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "mcpclient call add a=1 b=2 -- python examples/servers/demo_server.py" in text
    assert "exit codes:" in text and "5   no answer in time" in text
    assert main(["call", "--help"]) == 0
    assert "mcpclient call [SERVER] TOOL" in capsys.readouterr().out


def test_nothing_after_the_double_dash_is_a_usage_error():
    assert run("tools", "--") [0] == 2


def test_python_dash_m_mcpclient_runs():
    result = subprocess.run([sys.executable, "-m", "mcpclient", "--version"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and result.stdout.startswith("mcpclient ")
