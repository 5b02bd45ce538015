"""The one exception tree: every mcpclient error class lives in mcpclient._core.exceptions, the
docs show the same tree, and the low-level modules import each other without a cycle."""

from __future__ import annotations

import inspect
import pkgutil
import re
from importlib import import_module
from pathlib import Path

import mcpclient
from mcpclient import MCPError
from mcpclient._core import exceptions as _exceptions

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
