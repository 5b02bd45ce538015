"""A stub of the OpenAI and Anthropic HTTP APIs on 127.0.0.1, answering with response shapes
written by hand from the APIs' public reference, and recording what it was sent."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHAT_TEXT = {
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "gpt-4o-mini-2024-07-18",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello from chat", "refusal": None},
                 "logprobs": None, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
}
CHAT_TOOL_CALL = {
    "id": "chatcmpl-2", "object": "chat.completion", "created": 1700000000, "model": "gpt-4o-mini-2024-07-18",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "refusal": None, "tool_calls": [
        {"id": "call_abc", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        "logprobs": None, "finish_reason": "tool_calls"}],
    "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29},
}
CHAT_LENGTH = {**CHAT_TEXT, "choices": [{**CHAT_TEXT["choices"][0], "finish_reason": "length"}]}
RESPONSES_TEXT = {
    "id": "resp_1", "object": "response", "created_at": 1700000000, "status": "completed", "model": "gpt-4.1-mini",
    "output": [{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "Hello from responses", "annotations": []}]}],
    "incomplete_details": None, "error": None, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
    "usage": {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8,
              "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
}
RESPONSES_TOOL_CALL = {**RESPONSES_TEXT, "id": "resp_2", "output": [
    {"type": "function_call", "id": "fc_1", "call_id": "call_xyz", "name": "get_weather",
     "arguments": "{\"city\": \"Oslo\"}", "status": "completed"}]}
RESPONSES_INCOMPLETE = {**RESPONSES_TEXT, "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}
ANTHROPIC_TEXT = {
    "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "Hello from claude"}], "stop_reason": "end_turn", "stop_sequence": None,
    "usage": {"input_tokens": 5, "output_tokens": 3},
}
ANTHROPIC_TOOL_USE = {**ANTHROPIC_TEXT, "id": "msg_02", "content": [
    {"type": "text", "text": "Let me check."},
    {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Rome"}}], "stop_reason": "tool_use"}
ANTHROPIC_STOP_SEQUENCE = {**ANTHROPIC_TEXT, "stop_reason": "stop_sequence", "stop_sequence": "END"}

OPENAI_RATE_LIMIT = (429, {"error": {"message": "Rate limit reached for gpt-4o-mini on requests per min",
                                     "type": "requests", "param": None, "code": "rate_limit_exceeded"}})
OPENAI_CONTEXT_LENGTH = (400, {"error": {"message": "This model's maximum context length is 128000 tokens.",
                                         "type": "invalid_request_error", "param": "messages",
                                         "code": "context_length_exceeded"}})
ANTHROPIC_RATE_LIMIT = (429, {"type": "error", "error": {"type": "rate_limit_error",
                                                         "message": "Number of request tokens has exceeded your rate limit"}})
ANTHROPIC_CONTEXT_LENGTH = (400, {"type": "error", "error": {"type": "invalid_request_error",
                                                             "message": "prompt is too long: 210000 tokens > 200000 maximum"}})


class Stub:
    """Answers each POST with the next scripted ``(status, body)``; records (path, body)."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, dict]] = []
        self.requests: list[tuple[str, dict]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                stub.requests.append((self.path, json.loads(self.rfile.read(length) or b"{}")))
                status, body = stub.replies.pop(0) if stub.replies else (500, {"error": {"message": "no reply scripted"}})
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def reply(self, *replies) -> None:
        for r in replies:
            self.replies.append(r if isinstance(r, tuple) else (200, r))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

# Google's Gemini API (generateContent), in its wire form (camelCase).
GENAI_TEXT = {
    "candidates": [{"content": {"role": "model", "parts": [{"text": "Hello from gemini"}]},
                    "finishReason": "STOP", "index": 0}],
    "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 3, "totalTokenCount": 8},
    "modelVersion": "gemini-2.5-flash-001", "responseId": "resp-g1",
}
GENAI_TOOL_CALL = {**GENAI_TEXT, "candidates": [{"content": {"role": "model", "parts": [
    {"text": "Checking."}, {"functionCall": {"id": "fc-1", "name": "get_weather", "args": {"city": "Lima"}}}]},
    "finishReason": "STOP", "index": 0}]}
GENAI_MAX_TOKENS = {**GENAI_TEXT, "candidates": [{**GENAI_TEXT["candidates"][0], "finishReason": "MAX_TOKENS"}]}
GENAI_THINKING = {**GENAI_TEXT, "candidates": [{"content": {"role": "model", "parts": [
    {"text": "First, the user greets me.", "thought": True}, {"text": "Hi!"}]}, "finishReason": "STOP", "index": 0}]}
GENAI_BLOCKED = {"promptFeedback": {"blockReason": "SAFETY"}, "modelVersion": "gemini-2.5-flash-001"}
GENAI_RATE_LIMIT = (429, {"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).",
                                    "status": "RESOURCE_EXHAUSTED"}})
