"""Sampling handlers answered by the user's own LLM SDK client::

    import openai
    from mcpclient.integrations import sampling
    client.set_sampling_handler(sampling.openai_chat(openai.OpenAI(), model="gpt-4o-mini"), tools=True)

``openai_chat`` (Chat Completions), ``openai_responses`` (the Responses API), ``anthropic``
(the Messages API) and ``google_genai`` (Google's GenAI SDK: the Gemini API or Vertex AI) each turn a server's ``sampling/createMessage`` into one call through the
given SDK client, and its answer back into a ``CreateMessageResult``. The request's messages
(text, images, audio where the API takes it, tool use and tool results), ``systemPrompt``,
``maxTokens``, ``temperature``, ``stopSequences``, ``metadata``, ``tools`` and ``toolChoice``
are mapped; ``modelPreferences.hints`` pick a model through ``models`` (hint name to model;
a hint matches a key it contains or equals), ``model`` otherwise.

``approve(request, result)`` is the person in the loop the spec asks for: called with
``result=None`` before the request is sent and with the result before it is returned; a
false answer refuses it (the server gets error -1, "user rejected"). An SDK error (rate
limit, context too long, a refused request) becomes an error reply the server can read,
never an exception in the client's dispatch thread. No SDK is imported by this module.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Mapping

from .. import types as t
from .._core.exceptions import RPCError
from .._core.text import clean
from ..llm._common import as_dict
from . import _sampling_apis as apis

__all__ = ["USER_REJECTED", "anthropic", "google_genai", "openai_chat", "openai_responses", "pick_model"]

log = logging.getLogger("mcpclient")

#: The error code the spec gives a sampling request the user rejected.
USER_REJECTED = -1

Approve = Callable[[t.CreateMessageRequest, "t.CreateMessageResult | None"], bool]
Handler = Callable[[t.CreateMessageRequest], t.CreateMessageResult]


def pick_model(request: t.CreateMessageRequest, model: str, models: Mapping[str, str] | None) -> str:
    """The model for ``request``: the first hint (in order) that names a key of ``models``,
    or ``model``. Hints are advisory (the spec), so an unknown one is skipped."""
    prefs = request.model_preferences if isinstance(request.model_preferences, dict) else {}
    for hint in prefs.get("hints") or []:
        name = hint.get("name") if isinstance(hint, dict) else None
        if not isinstance(name, str) or not models:
            continue
        for key, target in models.items():
            if key == name or key in name:
                return target
    return model


def _handler(call: Callable[[t.CreateMessageRequest, str], Any],
             answer: Callable[[Any, str], t.CreateMessageResult],
             errors: Callable[[], tuple[type[BaseException], ...]],
             *, model: str, models: Mapping[str, str] | None, approve: Approve | None) -> Handler:
    def handle(request: t.CreateMessageRequest) -> t.CreateMessageResult:
        if approve is not None and not approve(request, None):
            raise RPCError(USER_REJECTED, "the user rejected the sampling request")
        chosen = pick_model(request, model, models)
        try:
            reply = call(request, chosen)
        except errors() as exc:
            raise _api_error(exc) from exc
        result = answer(as_dict(reply), chosen)
        if approve is not None and not approve(request, result):
            raise RPCError(USER_REJECTED, "the user rejected the sampled answer")
        return result

    return handle


def _api_error(exc: BaseException) -> RPCError:
    """An SDK error as the error reply: its HTTP status and message (no headers, no key)."""
    status = getattr(exc, "status_code", None)
    code = getattr(exc, "code", None)  # google.genai's APIError: code and message
    if status is None and isinstance(code, int):
        status = code
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = body["error"].get("message", message)
    said = getattr(exc, "message", None)
    if message is None and isinstance(said, str):
        message = said
    text = str(message or exc.__class__.__name__)
    log.warning("sampling through the LLM API failed: %s %s", status or "", clean(text))
    return RPCError(RPCError.INTERNAL_ERROR, f"the LLM API failed: {text}",
                    {"status": status, "type": type(exc).__name__})


def openai_chat(client: Any, *, model: str, models: Mapping[str, str] | None = None,
                approve: Approve | None = None) -> Handler:
    """A sampling handler calling ``client.chat.completions.create`` (an ``openai.OpenAI``)."""

    def call(request: t.CreateMessageRequest, chosen: str) -> Any:
        return client.chat.completions.create(**apis.chat_request(request, chosen))

    return _handler(call, apis.chat_answer, _openai_errors, model=model, models=models, approve=approve)


def openai_responses(client: Any, *, model: str, models: Mapping[str, str] | None = None,
                     approve: Approve | None = None) -> Handler:
    """A sampling handler calling ``client.responses.create`` (an ``openai.OpenAI``)."""

    def call(request: t.CreateMessageRequest, chosen: str) -> Any:
        return client.responses.create(**apis.responses_request(request, chosen))

    return _handler(call, apis.responses_answer, _openai_errors, model=model, models=models, approve=approve)


def anthropic(client: Any, *, model: str, models: Mapping[str, str] | None = None,
              approve: Approve | None = None) -> Handler:
    """A sampling handler calling ``client.messages.create`` (an ``anthropic.Anthropic``)."""

    def call(request: t.CreateMessageRequest, chosen: str) -> Any:
        return client.messages.create(**apis.anthropic_request(request, chosen))

    return _handler(call, apis.anthropic_answer, _anthropic_errors, model=model, models=models, approve=approve)


def google_genai(client: Any, *, model: str, models: Mapping[str, str] | None = None,
                 approve: Approve | None = None) -> Handler:
    """A sampling handler calling ``client.models.generate_content`` (a ``google.genai.Client``).

    A tool result is sent as a ``function_response`` under the name of the tool use it
    answers (Gemini asks for it), found in the conversation; a result that answers none is
    refused. ``metadata`` is not sent (the Gemini API has no such field). A reply without
    a candidate (a blocked prompt) is an error reply naming the block reason."""

    def call(request: t.CreateMessageRequest, chosen: str) -> Any:
        return client.models.generate_content(**apis.genai_request(request, chosen))

    return _handler(call, apis.genai_answer, _genai_errors, model=model, models=models, approve=approve)


def _genai_errors() -> tuple[type[BaseException], ...]:
    from google.genai import errors

    return (errors.APIError,)


def _openai_errors() -> tuple[type[BaseException], ...]:
    import openai

    return (openai.OpenAIError,)


def _anthropic_errors() -> tuple[type[BaseException], ...]:
    import anthropic as sdk

    return (sdk.AnthropicError,)
