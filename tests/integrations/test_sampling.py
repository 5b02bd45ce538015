"""Sampling handlers through the real ``openai`` and ``anthropic`` SDKs, pointed at a stub of
both APIs on 127.0.0.1; and a real server's sampling request answered end to end."""

from __future__ import annotations

import pytest

openai = pytest.importorskip("openai")
anthropic_sdk = pytest.importorskip("anthropic")

import mcpclient  # noqa: E402
from mcpclient import CreateMessageRequest, RPCError, SamplingMessage  # noqa: E402
from mcpclient.integrations import sampling  # noqa: E402

from tests.conftest import SDK_SERVER  # noqa: E402

from . import llm_stub as s  # noqa: E402

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
WEATHER = {"name": "get_weather", "description": "Weather for a city",
           "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


@pytest.fixture
def stub():
    server = s.Stub()
    yield server
    server.close()


@pytest.fixture
def oai(stub):
    with openai.OpenAI(base_url=stub.url + "/v1", api_key="test-key", max_retries=0) as client:
        yield client


@pytest.fixture
def claude(stub):
    with anthropic_sdk.Anthropic(base_url=stub.url, api_key="test-key", max_retries=0) as client:
        yield client


def request(**kw):
    messages = kw.pop("messages", None) or [SamplingMessage(role="user", content={"type": "text", "text": "hi"})]
    return CreateMessageRequest(messages=messages, max_tokens=kw.pop("max_tokens", 50), **kw)


def tool_turns():
    """A conversation with an image, a tool use and its result."""
    return [
        SamplingMessage(role="user", content=[{"type": "text", "text": "weather?"},
                                              {"type": "image", "data": PNG, "mimeType": "image/png"}]),
        SamplingMessage(role="assistant", content={"type": "tool_use", "id": "t1", "name": "get_weather",
                                                   "input": {"city": "Paris"}}),
        SamplingMessage(role="user", content={"type": "tool_result", "toolUseId": "t1",
                                              "content": [{"type": "text", "text": "sunny"}]}),
    ]


def test_chat_completions_maps_the_request_and_the_answer(stub, oai):
    stub.reply(s.CHAT_TEXT)
    handler = sampling.openai_chat(oai, model="gpt-4o-mini", models={"claude": "gpt-4.1"})
    result = handler(request(system_prompt="be brief", temperature=0.2, stop_sequences=["END"],
                             metadata={"trace": 7}, model_preferences={"hints": [{"name": "claude-3-sonnet"}]}))
    assert result.content == {"type": "text", "text": "Hello from chat"}
    assert (result.model, result.role, result.stop_reason) == ("gpt-4o-mini-2024-07-18", "assistant", "endTurn")
    path, body = stub.requests[0]
    assert path == "/v1/chat/completions"
    assert body["model"] == "gpt-4.1"  # the hint, through the user's mapping
    assert body["messages"] == [{"role": "system", "content": "be brief"},
                                {"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert (body["max_completion_tokens"], body["temperature"], body["stop"], body["metadata"]) == (
        50, 0.2, ["END"], {"trace": "7"})


def test_chat_completions_with_tools(stub, oai):
    stub.reply(s.CHAT_TOOL_CALL)
    result = sampling.openai_chat(oai, model="m")(request(messages=tool_turns(), tools=[WEATHER],
                                                           tool_choice={"mode": "required"}))
    assert result.content == {"type": "tool_use", "id": "call_abc", "name": "get_weather", "input": {"city": "Paris"}}
    assert result.stop_reason == "toolUse"
    body = stub.requests[0][1]
    assert body["tools"][0]["function"]["parameters"] == WEATHER["inputSchema"]
    assert body["tool_choice"] == "required"
    user, assistant, tool = body["messages"]
    assert user["content"][1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    assert assistant["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert tool == {"role": "tool", "tool_call_id": "t1", "content": "sunny"}


def test_chat_completions_length_and_audio(stub, oai):
    stub.reply(s.CHAT_LENGTH)
    audio = SamplingMessage(role="user", content={"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"})
    assert sampling.openai_chat(oai, model="m")(request(messages=[audio])).stop_reason == "maxTokens"
    assert stub.requests[0][1]["messages"][0]["content"] == [
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}]


@pytest.mark.parametrize("error, words", [(s.OPENAI_RATE_LIMIT, "Rate limit"),
                                          (s.OPENAI_CONTEXT_LENGTH, "maximum context length")])
def test_openai_errors_become_error_replies(stub, oai, error, words):
    stub.reply(error)
    with pytest.raises(RPCError) as caught:
        sampling.openai_chat(oai, model="m")(request())
    assert words in caught.value.message and caught.value.data["status"] == error[0]
    assert "test-key" not in str(caught.value)


def test_responses_api(stub, oai):
    stub.reply(s.RESPONSES_TEXT, s.RESPONSES_TOOL_CALL, s.RESPONSES_INCOMPLETE)
    handler = sampling.openai_responses(oai, model="gpt-4.1-mini")
    first = handler(request(system_prompt="sys"))
    assert first.content == {"type": "text", "text": "Hello from responses"} and first.stop_reason == "endTurn"
    second = handler(request(messages=tool_turns(), tools=[WEATHER], tool_choice={"mode": "auto"}))
    assert second.content == {"type": "tool_use", "id": "call_xyz", "name": "get_weather", "input": {"city": "Oslo"}}
    assert second.stop_reason == "toolUse"
    assert handler(request()).stop_reason == "maxTokens"
    path, body = stub.requests[1]
    assert path == "/v1/responses"
    assert [i.get("type", "message") for i in body["input"]] == ["message", "function_call", "function_call_output"]
    assert body["input"][0]["content"][1] == {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}
    assert stub.requests[0][1]["instructions"] == "sys"
    assert body["tools"][0]["parameters"] == WEATHER["inputSchema"] and body["tool_choice"] == "auto"


def test_anthropic_messages(stub, claude):
    stub.reply(s.ANTHROPIC_TOOL_USE, s.ANTHROPIC_STOP_SEQUENCE)
    handler = sampling.anthropic(claude, model="claude-sonnet-4-5")
    result = handler(request(messages=tool_turns(), tools=[WEATHER], tool_choice={"mode": "required"},
                             system_prompt="sys", stop_sequences=["END"], metadata={"user_id": "u1", "x": 1}))
    assert result.content == [{"type": "text", "text": "Let me check."},
                              {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Rome"}}]
    assert result.stop_reason == "toolUse"
    assert handler(request()).stop_reason == "stopSequence"
    path, body = stub.requests[0]
    assert path == "/v1/messages"
    assert (body["system"], body["stop_sequences"], body["metadata"]) == ("sys", ["END"], {"user_id": "u1"})
    assert body["tools"][0]["input_schema"] == WEATHER["inputSchema"] and body["tool_choice"] == {"type": "any"}
    assert body["messages"][0]["content"][1]["source"] == {"type": "base64", "media_type": "image/png", "data": PNG}
    assert body["messages"][2]["content"][0]["tool_use_id"] == "t1"


@pytest.mark.parametrize("error, words", [(s.ANTHROPIC_RATE_LIMIT, "rate limit"),
                                          (s.ANTHROPIC_CONTEXT_LENGTH, "prompt is too long")])
def test_anthropic_errors_become_error_replies(stub, claude, error, words):
    stub.reply(error)
    with pytest.raises(RPCError) as caught:
        sampling.anthropic(claude, model="m")(request())
    assert words in caught.value.message


def test_approve_sees_and_can_refuse_the_request_and_the_result(stub, oai):
    seen = []
    stub.reply(s.CHAT_TEXT)

    def approve(req, result):
        seen.append(result)
        return result is None  # let the request go, refuse the answer

    with pytest.raises(RPCError) as caught:
        sampling.openai_chat(oai, model="m", approve=approve)(request())
    assert caught.value.code == sampling.USER_REJECTED
    assert seen[0] is None and seen[1].content["text"] == "Hello from chat"
    with pytest.raises(RPCError):
        sampling.openai_chat(oai, model="m", approve=lambda req, res: False)(request())
    assert len(stub.requests) == 1  # a refused request is never sent


def test_a_real_servers_sampling_request_is_answered_through_the_sdk(stub, oai):
    stub.reply(s.CHAT_TEXT, s.OPENAI_RATE_LIMIT)
    client = mcpclient.Client(mcpclient.StdioTransport(SDK_SERVER), timeout=30)
    client.set_sampling_handler(sampling.openai_chat(oai, model="gpt-4o-mini"))
    with client:
        assert client.call_tool("sample", {"prompt": "say hello"}).text == "Hello from chat"
        assert stub.requests[0][1]["messages"] == [{"role": "user", "content": [{"type": "text", "text": "say hello"}]}]
        # A rate limit is an error answer to the server's request (in this protocol era the
        # call then fails with it); nothing crashes and the client keeps working.
        with pytest.raises(mcpclient.MCPError, match="Rate limit"):
            client.call_tool("sample", {"prompt": "again"})
        assert client.call_tool("echo", {"text": "still here"}).text == "still here"
