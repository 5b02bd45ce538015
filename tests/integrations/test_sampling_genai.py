"""The sampling handler through Google's real ``google-genai`` SDK, pointed at a stub of the
Gemini API on 127.0.0.1; and a real server's sampling request answered end to end."""

from __future__ import annotations

import base64

import pytest

genai = pytest.importorskip("google.genai")

import mcpclient  # noqa: E402
from mcpclient import CreateMessageRequest, RPCError, SamplingMessage  # noqa: E402
from mcpclient.integrations import sampling  # noqa: E402

from tests.conftest import SDK_SERVER  # noqa: E402

from . import llm_stub as s  # noqa: E402
from .test_sampling import PNG, WEATHER, request, tool_turns  # noqa: E402


@pytest.fixture
def stub():
    server = s.Stub()
    yield server
    server.close()


@pytest.fixture
def gemini(stub):
    client = genai.Client(api_key="test-key", http_options={"base_url": stub.url, "retry_options": {"attempts": 1}})
    yield client
    client.close()


def test_the_request_and_the_answer_are_mapped(stub, gemini):
    stub.reply(s.GENAI_TEXT)
    handler = sampling.google_genai(gemini, model="gemini-2.5-flash", models={"claude": "gemini-2.5-pro"})
    result = handler(request(system_prompt="be brief", temperature=0.2, stop_sequences=["END"],
                             model_preferences={"hints": [{"name": "claude-3-sonnet"}]}))
    assert result.content == {"type": "text", "text": "Hello from gemini"}
    assert (result.model, result.role, result.stop_reason) == ("gemini-2.5-flash-001", "assistant", "endTurn")
    path, body = stub.requests[0]
    assert path.endswith("/models/gemini-2.5-pro:generateContent")  # the hint, through the user's mapping
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    assert body["systemInstruction"]["parts"] == [{"text": "be brief"}]
    assert body["generationConfig"] == {"maxOutputTokens": 50, "temperature": 0.2, "stopSequences": ["END"]}


def test_tools_tool_uses_and_results(stub, gemini):
    stub.reply(s.GENAI_TOOL_CALL)
    result = sampling.google_genai(gemini, model="m")(request(messages=tool_turns(), tools=[WEATHER],
                                                              tool_choice={"mode": "required"}))
    assert result.content == [{"type": "text", "text": "Checking."},
                              {"type": "tool_use", "id": "fc-1", "name": "get_weather", "input": {"city": "Lima"}}]
    assert result.stop_reason == "toolUse"
    body = stub.requests[0][1]
    user, model, answer = body["contents"]
    image = user["parts"][1]["inlineData"]
    assert base64.urlsafe_b64decode(image["data"]) == base64.b64decode(PNG)
    assert "image/png" in (image.get("mimeType"), image.get("mime_type"))
    assert model == {"role": "model", "parts": [{"functionCall": {"id": "t1", "name": "get_weather",
                                                                  "args": {"city": "Paris"}}}]}
    assert answer["parts"][0]["functionResponse"] == {"id": "t1", "name": "get_weather",
                                                      "response": {"output": "sunny"}}
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "get_weather" and WEATHER["inputSchema"] in declaration.values()
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}


def test_max_tokens_and_a_thinking_models_thoughts(stub, gemini):
    stub.reply(s.GENAI_MAX_TOKENS, s.GENAI_THINKING)
    handler = sampling.google_genai(gemini, model="m")
    assert handler(request()).stop_reason == "maxTokens"
    assert handler(request()).content == {"type": "text", "text": "Hi!"}


def test_an_api_error_and_a_blocked_prompt_become_error_replies(stub, gemini):
    stub.reply(s.GENAI_RATE_LIMIT, s.GENAI_BLOCKED)
    handler = sampling.google_genai(gemini, model="m")
    with pytest.raises(RPCError) as caught:
        handler(request())
    assert "Resource has been exhausted" in caught.value.message and caught.value.data["status"] == 429
    assert "test-key" not in str(caught.value)
    with pytest.raises(RPCError, match="SAFETY"):
        handler(request())


def test_a_tool_result_answering_no_tool_use_is_refused_before_sending(stub, gemini):
    orphan = SamplingMessage(role="user", content={"type": "tool_result", "toolUseId": "nope",
                                                   "content": [{"type": "text", "text": "x"}]})
    with pytest.raises(RPCError, match="answers no tool use"):
        sampling.google_genai(gemini, model="m")(CreateMessageRequest(messages=[orphan], max_tokens=5))
    assert stub.requests == []


def test_a_real_servers_sampling_request_is_answered_through_the_sdk(stub, gemini):
    stub.reply(s.GENAI_TEXT)
    client = mcpclient.Client(mcpclient.StdioTransport(SDK_SERVER), timeout=30)
    client.set_sampling_handler(sampling.google_genai(gemini, model="gemini-2.5-flash"))
    with client:
        assert client.call_tool("sample", {"prompt": "say hello"}).text == "Hello from gemini"
    assert stub.requests[0][1]["contents"] == [{"role": "user", "parts": [{"text": "say hello"}]}]


def test_media_that_is_not_base64_is_refused_before_sending(stub, gemini):
    bad = SamplingMessage(role="user", content={"type": "image", "data": "not base64!", "mimeType": "image/png"})
    with pytest.raises(RPCError, match="not base64"):
        sampling.google_genai(gemini, model="m")(CreateMessageRequest(messages=[bad], max_tokens=5))
    assert stub.requests == []
