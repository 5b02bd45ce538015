"""Quickstart: talk to the bundled demo server over stdio.

Run it with ``python examples/quickstart.py``. It starts ``examples/servers/demo_server.py``
as a child process, lists its tools, calls one, reads a resource and renders a prompt.
"""

from __future__ import annotations

import sys
from pathlib import Path

import mcpclient

DEMO_SERVER = Path(__file__).resolve().parent / "servers" / "demo_server.py"


def main() -> None:
    with mcpclient.connect([sys.executable, str(DEMO_SERVER)], stdio=mcpclient.Stdio(stderr=None), timeout=10) as client:
        info = client.server_info
        print(f"Connected to {info.name} {info.version} (protocol {client.protocol_version})")

        print("\nTools:")
        for tool in client.list_tools():
            print(f"  {tool.name}: {tool.description}")

        result = client.call_tool("add", {"a": 2, "b": 40})
        print(f"\nadd(2, 40) -> {result.text}")

        print("\nResources:")
        for resource in client.list_resources():
            print(f"  {resource.uri} ({resource.mime_type})")
        (readme,) = client.read_resource("demo://readme")
        print(f"\n{readme.uri}:\n{readme.text}")

        description, messages = client.get_prompt("review", {"code": "print('hi')"})
        print(f"Prompt 'review' ({description}):")
        for message in messages:
            for part in message.content:
                print(f"  [{message.role}] {part.text}")


if __name__ == "__main__":
    main()
