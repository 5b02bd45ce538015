"""Fixtures of the scale tests: a spawned process pool, and the check that no server outlives it."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest


def alive(pids: set[int]) -> set[int]:
    """The pids of ``pids`` still running (zombies count as ended)."""
    found = set()
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                found.add(pid)
        except psutil.NoSuchProcess:
            continue
    return found


def servers_of(script: str) -> set[int]:
    """The live processes under this one whose command line runs ``script`` (a server)."""
    found = set()
    for process in psutil.Process().children(recursive=True):
        try:
            if process.status() != psutil.STATUS_ZOMBIE and script in " ".join(process.cmdline()):
                found.add(process.pid)
        except psutil.NoSuchProcess:
            continue
    return found


@pytest.fixture
def scale_path(monkeypatch):
    """Spawned workers import the tests package: put the repository on their path."""
    root = str(Path(__file__).resolve().parents[2])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    return root
