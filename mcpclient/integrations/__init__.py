"""MCP tools as native, synchronous tools of Python agent frameworks.

One module per framework, each imported on its own and importing its framework only then
(``import mcpclient`` imports none of them):

- ``mcpclient.integrations.langchain``: langchain-core ``StructuredTool``
- ``mcpclient.integrations.llamaindex``: llama-index-core ``FunctionTool``
- ``mcpclient.integrations.smolagents``: smolagents ``Tool``
- ``mcpclient.integrations.haystack``: haystack-ai ``Tool``
- ``mcpclient.integrations.pydantic_ai``: Pydantic AI ``Tool`` (and a toolset)
- ``mcpclient.integrations.openai_agents``: OpenAI Agents SDK ``FunctionTool``

Each has ``tools(source, *, timeout=..., timeouts=None)``, where ``source`` is a ``Client``,
a ``ClientGroup`` or the list from ``mcpclient.tools(client)``. See docs/frameworks.md.
"""
