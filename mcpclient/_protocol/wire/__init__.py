"""The wire: how mcpclient's values look as MCP JSON. Everything here is private."""

from .converter import structure, structure_list, structure_tool_result, unstructure, wire_name

__all__ = ["structure", "structure_list", "structure_tool_result", "unstructure", "wire_name"]
