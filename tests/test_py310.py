"""mcpclient stays valid on Python 3.10 (python_requires >= 3.10), whatever runs the tests."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mcpclient"
SOURCES = sorted(PACKAGE.rglob("*.py"))

# Standard-library names that appeared after 3.10; each needs a fallback if ever used.
NEWER_STDLIB = re.compile(r"^\s*(import tomllib|from typing import .*\b(Self|override|TypeIs|ReadOnly)\b)", re.M)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_parses_as_python_3_10(path):
    source = path.read_text(encoding="utf-8")
    ast.parse(source, filename=str(path), feature_version=(3, 10))
    assert not NEWER_STDLIB.search(source), "a 3.11+ standard-library import without a fallback"
