"""The same prompts in a Jupyter kernel while a cell runs: the front end answers ``input()``.

nbclient starts the kernel but never allows stdin, so the test plays the front end itself:
it sends the cell on the kernel's shell channel with ``allow_stdin`` and answers each
``input_request`` on the stdin channel, as JupyterLab does when the person types.
"""

from __future__ import annotations

import queue
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from tests.helpers import front_end_kernel  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SERVER = str(ROOT / "tests" / "servers" / "sdk_elicit_server.py")

CELL = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import mcpclient, mcpclient.prompting
client = mcpclient.connect([sys.executable, {SERVER!r}], protocol="legacy", timeout=30,
                           elicitation_handler=mcpclient.prompting.elicit,
                           sampling_handler=mcpclient.prompting.sample)
print("FORM", client.call_tool("form", {{"kind": "numbers"}}).text)
print("SAMPLE", client.call_tool("sample", {{"prompt": "Say hi"}}).text)
client.close()
"""


def _run_cell(kc, code: str, answers: list[str]) -> tuple[list[str], str, dict]:
    """Run ``code``, answering its input() prompts; the prompts, the printed text, the reply."""
    msg_id = kc.execute(code, allow_stdin=True)
    prompts: list[str] = []
    reply = None
    deadline = time.monotonic() + 60
    while reply is None and time.monotonic() < deadline:
        try:
            msg = kc.get_stdin_msg(timeout=0.1)
            if msg["msg_type"] == "input_request":
                prompts.append(msg["content"]["prompt"])
                kc.input(answers.pop(0) if answers else "!cancel")
        except queue.Empty:
            pass
        try:
            msg = kc.get_shell_msg(timeout=0.01)
            if msg["parent_header"].get("msg_id") == msg_id:
                reply = msg["content"]
        except queue.Empty:
            pass
    assert reply is not None, "the cell did not finish"
    text = []
    while True:
        msg = kc.get_iopub_msg(timeout=10)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            text.append(msg["content"]["text"])
        if msg["msg_type"] == "error":
            text.append("\n".join(msg["content"]["traceback"]))
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    return prompts, "".join(text), reply


@pytest.mark.skipif(sys.platform == "win32", reason="the stdio server is POSIX-tested only")
def test_a_form_and_a_sampling_request_are_answered_through_the_front_end():
    with front_end_kernel(ROOT) as kc:
        prompts, text, reply = _run_cell(kc, CELL, ["old", "7", "", "y", "hello there"])
    assert reply["status"] == "ok", text
    assert prompts == ["age> ", "age> ", "ratio> ", "Send it? [Y/n] ", "reply> "]
    assert 'The server "sdk-elicit" asks: Please fill in the numbers form' in text  # which server asks
    assert 'The server "sdk-elicit" asks for an LLM reply (sampling).' in text
    assert "invalid: must be an integer, got 'old'" in text
    assert 'FORM {"action": "accept", "content": {"age": 7, "ratio": 0.5}}' in text
    assert "SAMPLE reply hello there (person)" in text


def test_run_unattended_by_nbclient_the_prompts_decline():
    """nbclient allows no stdin: input() raises StdinNotImplementedError, taken as decline."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell(CELL))
    nbclient.NotebookClient(notebook, timeout=60, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    text = "".join(o.get("text", "") for o in notebook.cells[0].outputs if o.output_type == "stream")
    assert 'FORM {"action": "decline", "content": null}' in text
    assert "SAMPLE error -1 the user declined the sampling request" in text
