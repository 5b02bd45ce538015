"""MCP tools in the formats LLM APIs use, and their tool calls run on MCP servers.

- ``mcpclient.llm.openai``: Chat Completions (``chat_tools``, ``run_chat_tool_calls``) and
  the Responses API (``responses_tools``, ``run_responses_calls``).
- ``mcpclient.llm.anthropic``: the Messages API (``tools``, ``run_tool_uses``).

Each takes the list from ``mcpclient.tools(client)`` or ``group.tools()`` (or the client or
group itself) and returns plain dicts shaped exactly as the API expects; no LLM SDK is needed,
and SDK objects are accepted as input.
"""

from . import anthropic, openai

__all__ = ["anthropic", "openai"]
