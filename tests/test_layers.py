"""The import checker: every import between mcpclient's modules, held against the layer rules.

Each module under ``mcpclient/`` is parsed with ``ast`` (never imported), and every import
statement found anywhere in it counts: at module level, inside a function, under
``if TYPE_CHECKING:``. A lazy import that closes a loop is still a loop, so the checker fails
on any import cycle, and on any arrow that points up the layers below (docs/architecture.md,
"The house").
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mcpclient"

#: The layers, lowest first. A module may import its own layer and those below it, never one
#: above. A module belongs to the first layer with a prefix that names it or a package it is
#: in (the root package, ``mcpclient``, names only itself); ``DEFAULT_LAYER`` takes the rest
#: (the client's private modules).
LAYERS: dict[str, tuple[str, ...]] = {
    # The small parts everything stands on (the _core package: errors, text cleaning, cancel
    # tokens, deadlines, bounds, redaction), then the models, which know nothing of the wire.
    "core": ("mcpclient._core",),
    "models": ("mcpclient.types",),
    # The protocol over the models: the wire converter and the two eras.
    "protocol": ("mcpclient._protocol",),
    # The transports, their contract included, and auth (an island: the transports' token
    # source is its one door). They know neither the eras nor the models, nor the seam above
    # them: what travels with a message comes down as data (``SendOptions``).
    "transports": ("mcpclient.transports", "mcpclient.auth"),
    # The public seam's types (what extensions and middleware are given), over the protocol.
    "seam": ("mcpclient.extensions",),
    # The JSON-RPC engine: ids, pending slots, the reader thread, write batching, the dispatcher.
    # It speaks the transport contract, so it stands above the transports.
    "rpc": ("mcpclient._rpc",),
    "client": (),  # DEFAULT_LAYER
    # The notebook display (HTML of the models, the sanitiser): over the models only, and
    # above the client, which never shows anything; the plug-ins' notebook outputs use it.
    "display": ("mcpclient._display",),
    "plugins": ("mcpclient.plugins",),
    # What builds clients from targets and options (the _build package), and knows the plug-ins by name.
    "factory": ("mcpclient._build",),
    "extras": (
        "mcpclient.cli", "mcpclient.config", "mcpclient._trust",
        "mcpclient.notebook", "mcpclient.integrations", "mcpclient.llm", "mcpclient.testing",
        "mcpclient.contrib", "mcpclient.group", "mcpclient._shared_group", "mcpclient.ai",
        "mcpclient.prompting", "mcpclient.policy", "mcpclient.lock", "mcpclient.apps", "mcpclient.devtools",
    ),
    # The public surface that re-exports everything, and ``python -m mcpclient``.
    "surface": ("mcpclient", "mcpclient.__main__"),
}
DEFAULT_LAYER = "client"
RANK = {name: rank for rank, name in enumerate(LAYERS)}

#: Import cycles known and being removed elsewhere, each named by its modules exactly. A cycle
#: found that is not here fails, and so does an entry here that is no longer a cycle.
KNOWN_CYCLES: dict[str, frozenset[str]] = {}
#: Upward arrows known and being removed elsewhere, as (importer, imported).
KNOWN_UPWARD: dict[str, frozenset[tuple[str, str]]] = {}


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _existing(name: str, known: dict[str, Path]) -> str | None:
    """``name``, or the closest package of it that is a module here (None: not mcpclient's)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(name: str, path: Path, known: dict[str, Path]) -> dict[str, int]:
    """Every mcpclient module ``name`` imports anywhere in its source, with a line of each.

    ``from . import x`` is an arrow to the module ``x`` when there is one, else to the package;
    ``from .a import b`` to ``a.b`` when that is a module, else to ``a``. Importing a module
    also runs its packages' ``__init__``, which is not counted as an arrow of its own.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                full = f"{module}.{alias.name}"
                targets.append(full if full in known else module)
        for target in targets:
            if target == "mcpclient" or target.startswith("mcpclient."):
                resolved = _existing(target, known)
                if resolved is not None and resolved != name:
                    found.setdefault(resolved, node.lineno)
    return found


@functools.lru_cache(maxsize=1)
def graph() -> dict[str, dict[str, int]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def layer(name: str) -> str:
    best, length = DEFAULT_LAYER, -1
    for layer_name, prefixes in LAYERS.items():
        for prefix in prefixes:
            inside = "." in prefix and name.startswith(prefix + ".")
            if (name == prefix or inside) and len(prefix) > length:
                best, length = layer_name, len(prefix)
    return best


def cycles(edges: dict[str, dict[str, int]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _loop(component: frozenset[str], edges: dict[str, dict[str, int]]) -> str:
    """One loop through ``component``, with the line of each arrow: what a failure shows."""
    start = min(component)
    path, seen = [start], {start}
    while True:
        here = path[-1]
        ahead = sorted(n for n in edges[here] if n in component)
        if start in ahead and len(path) > 1:
            path.append(start)
            break
        nxt = next((n for n in ahead if n not in seen), start)
        path.append(nxt)
        if nxt == start or nxt in seen:
            break
        seen.add(nxt)
    return " -> ".join(f"{a} (line {edges[a][b]})" for a, b in zip(path, path[1:])) + f" -> {path[-1]}"


def test_the_checker_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    package = tmp_path / "mcpclient"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n"
    )
    (package / "b.py").write_text("def f():\n    from . import c\n")
    (package / "c.py").write_text("import mcpclient.a\n")
    known = {"mcpclient": package / "__init__.py", "mcpclient.a": package / "a.py",
             "mcpclient.b": package / "b.py", "mcpclient.c": package / "c.py"}
    edges = {name: imports(name, path, known) for name, path in known.items()}
    assert edges["mcpclient.a"] == {"mcpclient.b": 3}
    assert edges["mcpclient.b"] == {"mcpclient.c": 2}
    assert cycles(edges) == [frozenset({"mcpclient.a", "mcpclient.b", "mcpclient.c"})]


def test_every_module_is_in_a_layer_that_exists() -> None:
    assert {layer(name) for name in modules()} <= set(LAYERS)
    assert layer("mcpclient._core.cancel") == "core"
    assert layer("mcpclient._protocol.eras.base") == "protocol"
    assert layer("mcpclient.transports.base") == "transports"
    assert layer("mcpclient.transports.http") == "transports"
    assert layer("mcpclient._rpc.engine") == "rpc"
    assert layer("mcpclient._client.client") == "client"


def test_no_import_cycle() -> None:
    edges = graph()
    found = set(cycles(edges))
    known = set(KNOWN_CYCLES.values())
    unknown = [_loop(component, edges) for component in found - known]
    assert not unknown, "import cycles (lazy and TYPE_CHECKING imports count):\n" + "\n".join(unknown)
    stale = [name for name, component in KNOWN_CYCLES.items() if component not in found]
    assert not stale, f"no longer cycles: remove {stale} from KNOWN_CYCLES"


def test_every_arrow_points_down() -> None:
    known = set().union(*KNOWN_UPWARD.values())
    upward = []
    for importer, targets in graph().items():
        for imported, line in targets.items():
            if RANK[layer(imported)] > RANK[layer(importer)] and (importer, imported) not in known:
                upward.append(f"{importer} ({layer(importer)}, line {line}) imports {imported} ({layer(imported)})")
    assert not upward, "imports against the layers:\n" + "\n".join(sorted(upward))


def test_the_error_tree_and_the_models_stand_alone() -> None:
    """The errors parse no wire data and know no model; the models know neither the wire nor
    the notebook display (which installs its renderer into them: ``types.set_html_renderer``)."""
    edges = graph()
    assert set(edges["mcpclient._core.exceptions"]) == {"mcpclient._core.text"}
    assert set(edges["mcpclient.types"]) <= {"mcpclient._core.exceptions", "mcpclient._core.typed"}
    assert set(edges["mcpclient._core.typed"]) == {"mcpclient._core.exceptions"}


@pytest.mark.parametrize("package", ["mcpclient.transports", "mcpclient.auth"])
def test_the_transports_know_neither_eras_nor_models_nor_the_seam(package: str) -> None:
    """A transport moves messages: what a message carries besides itself comes down as data
    (``SendOptions``), what its auth declares goes up as data (``About.extensions``), so
    it imports neither the eras, the models, nor the seam (``extensions``, the client's side
    of it), not even lazily."""
    for importer, targets in graph().items():
        if importer == package or importer.startswith(package + "."):
            bad = sorted(t for t in targets if t.startswith(
                ("mcpclient._protocol.eras", "mcpclient.types", "mcpclient.extensions", "mcpclient._client")))
            assert not bad, f"{importer} imports {bad}"


#: What a plug-in may import of mcpclient's private modules: the core everything stands on,
#: the seam's doors (``_client.seam``: the builders' registry; ``_client.features``: the
#: interfaces the Client's methods reach a feature by, with the data they return, from
#: ``_client.app_views`` and ``_client.skill_model``), and the notebook display its notebook
#: output goes through. Everything else it needs, the ``Session`` hands it.
PLUGIN_DOORS = ("mcpclient._core", "mcpclient._display", "mcpclient._client.seam", "mcpclient._client.features",
                "mcpclient._client.app_views", "mcpclient._client.skill_model")


def _private(name: str) -> bool:
    return any(part.startswith("_") for part in name.split(".")[1:])


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def test_a_plugin_imports_no_private_module_but_the_seams() -> None:
    """A built-in feature is written as a user would write one: it gets what it needs from
    the seam (the ``Session``: pages, typed results, a resource read that knows "not found",
    the era's rules), never from the wire, the eras or the client core."""
    bad = []
    for importer, targets in graph().items():
        if not _within(importer, ("mcpclient.plugins",)):
            continue
        for imported, line in targets.items():
            if _private(imported) and not _within(imported, ("mcpclient.plugins", *PLUGIN_DOORS)):
                bad.append(f"{importer} (line {line}) imports {imported}")
    assert not bad, "plug-ins past the seam:\n" + "\n".join(sorted(bad))


def _defines_an_extension(path: Path) -> bool:
    """Whether the module defines a subclass of ``Extension`` (a built-in feature)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
                if name == "Extension":
                    return True
    return False


@pytest.mark.parametrize("door", ["mcpclient._client.seam", "mcpclient._client.session", "mcpclient._client.features"])
def test_the_seam_imports_no_feature(door: str) -> None:
    """The seam knows no built-in by its module: each registers its builder by name
    (``register_option_builder``), keep-alive as the others."""
    known = modules()
    features = sorted(name for name in _reached(door, graph()) if _defines_an_extension(known[name]))
    assert not features, f"{door} imports {features}"


def test_only_the_command_line_imports_its_modules() -> None:
    """The command line stands at the top: what another extra shares with it lives below them
    (the notebook's server box reads a target as the command line does: ``_build.targets``)."""
    bad = sorted(f"{importer} (line {line}) imports {imported}" for importer, targets in graph().items()
                 if not _within(importer, ("mcpclient.cli", "mcpclient.__main__"))
                 for imported, line in targets.items() if _within(imported, ("mcpclient.cli",)))
    assert not bad, "\n".join(bad)


#: The client core: the Client, its calls, its notification routing, the conversation.
CLIENT_CORE = ("mcpclient._client.client", "mcpclient._client.calls", "mcpclient._client.notifications", "mcpclient._client.conversation")


def _reached(start: str, edges: dict[str, dict[str, int]]) -> set[str]:
    """Every module ``start`` imports, directly or through the modules it imports."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in edges[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


@pytest.mark.parametrize("core", CLIENT_CORE)
def test_the_client_core_imports_no_display(core: str) -> None:
    """The notebook display belongs with the notebook, not the client: the Client's lists and
    capabilities are plain models (``types.Listing``, ``types.Capabilities``) whose HTML the
    display installs (``import mcpclient`` arranges it), so the client core reaches no display
    module, not even through the modules it imports."""
    display = sorted(name for name in _reached(core, graph()) if ".display" in name or name.startswith("mcpclient._display"))
    assert not display, f"{core} imports {display}"


@pytest.mark.parametrize("core", CLIENT_CORE)
def test_the_client_core_imports_no_tasks_module(core: str) -> None:
    """Tasks are a plug-in (``mcpclient.plugins.tasks``): the client core reaches them through
    the ``_features.TasksFeature`` interface, so it imports no tasks module, not even through
    the modules it imports (lazily, or under ``TYPE_CHECKING``)."""
    reached = _reached(core, graph())
    tasks = sorted(name for name in reached
                   if "task" in name.rpartition(".")[2] or name.startswith("mcpclient.plugins.tasks."))
    assert not tasks, f"{core} imports {tasks}"


def test_every_private_module_lives_in_the_package_of_its_layer() -> None:
    """``ls mcpclient/`` shows the architecture: the private modules live in _core, _protocol,
    _rpc, _client, _build and _trust (or a feature's package), never flat beside the public modules."""
    flat = sorted(name for name in modules() if name.count(".") == 1 and name.split(".")[1].startswith("_")
                  and name != "mcpclient.__main__" and not (PACKAGE / name.split(".")[1]).is_dir())
    assert flat == ["mcpclient._shared_group"], flat


def _room(name: str) -> str:
    """The folder or file directly under ``mcpclient/`` that holds module ``name``."""
    return ".".join(name.split(".")[:2])


def test_the_folders_import_each_other_without_a_loop() -> None:
    """Seen a folder at a time (``_core/``, ``transports/``, ``types.py``...), the imports make no
    loop either: a folder whose modules import one above it while that one imports it back is an
    arrow running back up the house, even when no two modules form a cycle."""
    rooms: dict[str, dict[str, int]] = {}
    for importer, targets in graph().items():
        if importer == "mcpclient":
            continue  # the public surface re-exports every room
        here = rooms.setdefault(_room(importer), {})
        for imported, line in targets.items():
            if _room(imported) != _room(importer):
                here.setdefault(_room(imported), line)
    for targets in rooms.values():
        for room in targets:
            rooms.setdefault(room, {})
    found = cycles(rooms)
    assert not found, "folders in a loop:\n" + "\n".join(_loop(component, rooms) for component in found)
