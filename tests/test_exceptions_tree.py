"""The one exception tree: every mcpclient error class lives in mcpclient._exceptions, the
docs show the same tree, and the low-level modules import each other without a cycle."""

from __future__ import annotations

import ast
import inspect
import pkgutil
import re
from importlib import import_module
from pathlib import Path

import mcpclient
from mcpclient import MCPError, _exceptions

ROOT = Path(mcpclient.__file__).resolve().parent


def all_modules():
    for info in pkgutil.walk_packages(mcpclient.__path__, "mcpclient."):
        if info.name.startswith(("mcpclient.llm.", "mcpclient.notebook", "mcpclient.contrib.")):
            continue  # optional dependencies (Django's app needs configured settings to import)
        yield import_module(info.name)


def test_every_mcp_error_class_is_defined_in_the_one_tree():
    outside = set()
    for module in all_modules():
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, MCPError) and obj.__module__ != _exceptions.__name__:
                outside.add(f"{obj.__module__}.{obj.__qualname__}")
    assert not outside


def test_the_old_import_places_still_work():
    from mcpclient import OutputValidationError
    from mcpclient.auth import AuthorizationError, DiscoveryError, RegistrationError, TokenRequestError
    from mcpclient.config import ConfigError
    from mcpclient.group import UnknownToolError

    for cls in (OutputValidationError, AuthorizationError, DiscoveryError, RegistrationError,
                TokenRequestError, ConfigError, UnknownToolError):
        assert getattr(_exceptions, cls.__name__) is cls


def tree_names(text: str) -> set[str]:
    return set(re.findall(r"[├└]── (?:\w+\.)?(\w+)", text))


def test_the_docs_tree_matches_the_module_tree():
    module_tree = tree_names(_exceptions.__doc__ or "")
    docs = (ROOT.parent / "docs" / "errors.md").read_text()
    defined = {name for name, obj in vars(_exceptions).items()
               if inspect.isclass(obj) and issubclass(obj, MCPError) and obj is not MCPError}
    assert module_tree == defined
    assert tree_names(docs) == defined


def module_imports(path: Path, package: str) -> set[str]:
    """The mcpclient modules ``path`` imports when it is imported (not under TYPE_CHECKING)."""
    found = set()
    tree = ast.parse(path.read_text())
    for node in tree.body:  # module level only: imports inside functions run later, at call time
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for sub in ast.walk(node) if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) else ():
            if isinstance(sub, ast.ImportFrom) and sub.level:
                base = package.rsplit(".", sub.level - 1)[0] if sub.level > 1 else package
                name = f"{base}.{sub.module}" if sub.module else base
                found.add(name)
                found.update(f"{name}.{alias.name}" for alias in sub.names)
            elif isinstance(sub, ast.Import):
                found.update(alias.name for alias in sub.names if alias.name.startswith("mcpclient"))
    return found


def test_types_exceptions_wire_and_display_import_without_a_cycle():
    modules = {
        "mcpclient.types": ROOT / "types.py",
        "mcpclient._exceptions": ROOT / "_exceptions.py",
        "mcpclient._display": ROOT / "_display.py",
        "mcpclient._wire": ROOT / "_wire" / "__init__.py",
        "mcpclient._wire.converter": ROOT / "_wire" / "converter.py",
    }
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        graph[name] = {m for m in module_imports(path, package) if m in modules and m != name}

    def cycle_from(start, node, seen):
        for nxt in graph[node]:
            if nxt == start:
                return [node, nxt]
            if nxt not in seen:
                seen.add(nxt)
                rest = cycle_from(start, nxt, seen)
                if rest:
                    return [node, *rest]
        return None

    for name in modules:
        assert cycle_from(name, name, set()) is None, f"import cycle: {cycle_from(name, name, set())}"
    assert graph["mcpclient.types"] == {"mcpclient._exceptions"}  # (ToolError, for raise_for_error)
    assert graph["mcpclient._exceptions"] == set()
