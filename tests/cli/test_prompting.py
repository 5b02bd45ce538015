"""mcpclient.prompting with a scripted person: what the pseudo-terminal tests cannot show cheaply."""

from __future__ import annotations

import pytest

from mcpclient import CreateMessageRequest, ElicitationRequest, RPCError, SamplingMessage
from mcpclient.prompting import Prompter


def person(*answers: str) -> tuple[Prompter, list[str], list[str]]:
    lines = list(answers)
    shown: list[str] = []
    opened: list[str] = []
    return Prompter(lambda prompt: lines.pop(0), shown.append, open_url=opened.append), shown, opened


def test_server_text_cannot_send_escape_sequences_to_the_terminal():
    prompter, shown, _ = person("x", "")
    schema = {"type": "object", "properties": {"f": {"type": "string", "title": "T\x1b[2J", "description": "d\x07"}}}
    result = prompter.elicit(ElicitationRequest(message="hi\x1b]0;owned\x07\x9b31m", requested_schema=schema))
    assert result.action == "accept" and result.content == {"f": "x"}
    text = "\n".join(shown)
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    assert "hi\\x1b]0;owned\\x07\\x9b31m" in text  # shown, not obeyed


def test_a_link_that_is_not_http_is_refused_without_asking():
    prompter, shown, opened = person()  # no answer is ever read
    result = prompter.elicit(ElicitationRequest(message="m", mode="url", url="file:///etc/passwd", elicitation_id="e"))
    assert result.action == "decline" and opened == []
    assert any("refused: only http and https links" in line for line in shown)


def test_a_declined_sampling_request_is_the_specs_user_rejected_error():
    prompter, _, _ = person("!decline")
    request = CreateMessageRequest(messages=[SamplingMessage(role="user", content={"type": "text", "text": "hi"})])
    with pytest.raises(RPCError) as caught:
        prompter.sample(request)
    assert caught.value.code == -1
