"""Several servers from a config file, used as one: ``ClientGroup``.

Run it with ``python examples/multi_server.py``. ``examples/mcp.json`` is in the format of
Claude Desktop and Cursor (``mcpServers``); its ``private`` server needs ``DEMO_TOKEN``, which
is not set, so it is reported in ``group.errors`` while the other two work.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcpclient import ClientGroup

CONFIG = Path(__file__).resolve().parent / "mcp.json"


def main() -> None:
    os.environ.setdefault("PYTHON", sys.executable)  # the config says ${PYTHON:-python}
    # CONFIG is this example's own file. Run from a checkout, it lies in the project (the
    # checkout), so mcpclient starts its servers only with consent: this code, which ships
    # with the file, gives it (see docs/config.md, "Project files").
    with ClientGroup.from_config(CONFIG, trust_project=True, open_timeout=20, timeout=10) as group:
        for name, error in group.errors.items():
            print(f"not available: {name}: {error}")
        print("tools:", ", ".join(tool.name for tool in group.list_tools()))
        print("math__add(2, 40) =", group.call_tool("math__add", {"a": 2, "b": 40}).text)
        print("text__shout('hi') =", group.call_tool("text__shout", {"text": "hi"}).text)


if __name__ == "__main__":
    main()
