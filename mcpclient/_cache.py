"""The old home of the result cache, kept importable: see ``mcpclient.plugins.cache``."""

from __future__ import annotations

from .plugins.cache import LEGACY_TTL, ResultCache, freshness

__all__ = ["LEGACY_TTL", "ResultCache", "freshness"]
