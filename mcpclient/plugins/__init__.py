"""The built-in features, each a plug-in of the public seam (``mcpclient.extensions``).

A module here may import the protocol core, the transports' public contract and
``mcpclient.extensions``; the client core (``mcpclient._client.client``) imports none of them. The
factory that turns ``Client``'s keyword options (``apps=True``, ``cache=...``, ``telemetry=...``)
into extension instances is the one place that knows them all.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .._client.seam import register_option_builder
from ..cache import CacheStore
from ..extensions import Extension
from .apps.extension import Apps
from .cache import ResultCache
from .headers import HeaderMirroring
from .lock import lock_extension
from .policy import PolicyGate
from .skills.extension import Skills
from .tasks import tasks_extension
from .telemetry import telemetry_extensions
from .validation import output_validation


def _guards(options: Mapping[str, Any], gathered: Sequence[Extension]) -> Sequence[Extension]:
    """``lock=`` then ``policy=``: outermost, so a refused call runs nothing of another extension."""
    guards: list[Extension] = []
    if options.get("lock") is not None:
        guards.append(lock_extension(options["lock"], options.get("on_change", "refuse")))
    if options.get("policy") is not None:
        guards.append(PolicyGate(options["policy"]))
    return guards


def _cache(options: Mapping[str, Any], gathered: Sequence[Extension]) -> Sequence[Extension]:
    """``cache=True`` (in-process) or a ``CacheStore``, private results under ``cache_partition``."""
    cache, partition = options.get("cache", False), options.get("cache_partition")
    if cache is False or cache is None:
        if partition is not None and partition != "":
            raise ValueError("cache_partition= needs cache= (True or a CacheStore)")
        return ()
    if cache is True:
        return (ResultCache(partition=partition),)
    if isinstance(cache, CacheStore):
        return (ResultCache(cache, partition=partition),)
    raise TypeError(f"cache= takes True, False or a mcpclient.cache.CacheStore, got {cache!r}")


def _apps(options: Mapping[str, Any], gathered: Sequence[Extension]) -> Sequence[Extension]:
    """``apps=True``: MCP Apps, with the client's timeout for its views' requests (none more
    when an ``Apps()`` was given by hand)."""
    if not options.get("apps") or any(isinstance(extension, Apps) for extension in gathered):
        return ()
    return (Apps(timeout=options.get("timeout")),)


def _headers(options: Mapping[str, Any], gathered: Sequence[Extension]) -> Sequence[Extension]:
    """The modern era's header mirroring, for a transport whose peer speaks HTTP (the headers
    are HTTP's); outside the result cache, so that it learns from cached tool lists too."""
    transport = options.get("transport")
    return (HeaderMirroring(),) if transport is not None and transport.peer.protocol == "http" else ()


def _skills(options: Mapping[str, Any], gathered: Sequence[Extension]) -> Sequence[Extension]:
    """Every client has Skills: whether skills are served is the server's to declare."""
    return () if any(isinstance(extension, Skills) for extension in gathered) else (Skills(),)


# The outer builders run in this order, their extensions first of all: telemetry outermost,
# so a call's span covers what the lock and the policy gate do (and the refusals they make).
register_option_builder(telemetry_extensions, outer=True)
register_option_builder(_guards, outer=True)
# Before the user's extensions too: their result hooks (and MCP Apps') see a checked result.
register_option_builder(output_validation, outer=True)
register_option_builder(_apps, outer=False)  # after the user's: their result hooks see the plain ToolResult
register_option_builder(_skills, outer=False)
register_option_builder(tasks_extension, outer=False)  # every client; after the user's result hooks, as before
register_option_builder(_headers, outer=False)
register_option_builder(_cache, outer=False)
