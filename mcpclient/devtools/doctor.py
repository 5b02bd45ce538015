"""The server doctor: check a server from the client side and report what it breaks.

``diagnose(target, **options)`` opens ``target`` (a command, a URL, a config entry: what
``connect`` takes, with ``connect``'s ``options``) and returns a ``Report`` of ``Finding``s, each
"ok", "info", "warning" or "error"::

    report = diagnose(["python", "server.py"])
    print(report.text())           # readable, server text cleaned (_text.clean)
    report.to_json()               # for CI; report.errors is what makes `mcpclient doctor` fail

What is checked, in order:

* ``start``: the server opened with the era probe (``protocol="auto"``) and again with its era
  known; both timed. A known-era open over ``SLOW_START`` seconds is a warning. The difference
  between the two (``era probe``) is shown, not judged: two process starts differ by as much on a
  busy machine; the ``unknown method`` check judges the same behaviour (a server should answer
  a method it does not know at once, with -32601) without a clock;
* ``era``: the era and protocol version; ``capabilities``: what the server declares;
* ``tool names``: the specification's format (SEP-986, the rule the client warns about) and
  duplicates; ``input schemas`` / ``output schemas``: an object schema, valid JSON Schema
  (with ``jsonschema`` installed; the check the client's output validation relies on);
* ``x-mcp-header``: the headers the tools' parameters declare, and the annotations that break
  the rules (the client refuses such tools on modern HTTP);
* ``cache hints``: ``ttlMs`` / ``cacheScope`` on ``tools/list`` (modern), ``listChanged``;
* ``listing order``: ``tools/list`` twice: the same tools in the same order;
* ``unknown method``: a method no server has gets -32601 (not a result, silence or a crash);
* ``cancel``: a request cancelled in flight, then a ``ping``: the server keeps serving (name a
  slow tool, ``cancel_call``, for a cancel that surely lands; else a ``tools/list`` is cancelled
  at once, which its reply may beat: "info");
* ``session`` (Streamable HTTP): a request with an unknown ``Mcp-Session-Id`` gets 404, and the
  client, holding that id, starts a new session and is answered (``_session``);
* ``stdout`` / ``stderr`` (stdio servers): lines on stdout that are not protocol (an error: the
  client skips them, but a line that happens to parse would be taken as a message), and how
  much the server writes to stderr while the doctor runs;
* ``client warnings``: whatever mcpclient itself logged as a warning meanwhile.

Each check runs whatever the others found; a server that cannot be opened gives one error.
* ``output``: the result of a tool you name (``output_call``: the doctor calls no tool of its
  own accord) held against its ``outputSchema``;
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any, Mapping, Sequence

import attrs

from .._build.open import ServerEntry, Target, describe_target, open_client, opening
from .._client.settings import Stdio
from .._core.exceptions import (
    ConnectionClosed,
    MCPError,
    OutputValidationError,
    RequestCancelled,
    RequestTimeout,
    RPCError,
)
from .._core.text import clean
from ..transports._requester import safe_url
from ._checks import LEVELS, Finding, cache_hints, listing_order, tool_findings
from ._session import session_check
from .stubs import list_tools_raw

__all__ = ["LEVELS", "Finding", "Report", "diagnose"]

#: A known-era open slower than this (seconds) is a slow start-up.
SLOW_START = 5.0
#: More stderr than this (lines, bytes) while the doctor runs is a warning.
STDERR_LINES, STDERR_BYTES = 200, 64 * 1024
#: How long the unknown-method and cancel probes wait (seconds).
PROBE_TIMEOUT = 5.0
UNKNOWN_METHOD = "mcpclient-doctor/no-such-method"
#: How long a ``cancel_call`` runs before it is cancelled (seconds).
CANCEL_AFTER = 0.3


@attrs.frozen(kw_only=True)
class Report:
    """What ``diagnose`` found about ``target``; ``server`` is its serverInfo (or None)."""

    target: str
    server: Mapping[str, Any] | None
    findings: tuple[Finding, ...]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "warning"]

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "server": dict(self.server) if self.server else None,
                "findings": [attrs.asdict(f) for f in self.findings],
                "errors": len(self.errors), "warnings": len(self.warnings)}

    def text(self) -> str:
        """The report for a terminal: one cleaned line a finding, its details indented."""
        name = " ".join(str(self.server.get(k)) for k in ("name", "version") if self.server and self.server.get(k))
        lines = [f"server doctor: {clean(name or '(server not opened)', 200)}  [{clean(self.target, 200)}]"]
        width = max((len(f.check) for f in self.findings), default=0)
        for finding in self.findings:
            lines.append(f"  {finding.level:<8}{finding.check:<{width}}  {clean(finding.message, 500)}")
            lines += [f"  {'':<8}{'':<{width}}    {clean(line, 300)}" for line in finding.details[:20]]
            if len(finding.details) > 20:
                lines.append(f"  {'':<8}{'':<{width}}    ... and {len(finding.details) - 20} more")
        lines.append(f"{len(self.errors)} error(s), {len(self.warnings)} warning(s)")
        return "\n".join(lines)


class _Stderr:
    """A stdio server's stderr sink that counts what it writes (thread-safe)."""

    def __init__(self) -> None:
        self.lines = 0
        self.bytes = 0
        self.last: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, line: str) -> None:
        with self._lock:
            self.lines += 1
            self.bytes += len(line.encode("utf-8", "replace")) + 1
            self.last = (self.last + [line])[-3:]


class _Warnings(logging.Handler):
    """Keeps the warnings mcpclient logs while the doctor runs."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []
        self._lock_records = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        with self._lock_records:
            self.records.append(record)

    def messages(self) -> list[str]:
        with self._lock_records:
            records = list(self.records)
        return [record.getMessage() for record in records]

    def forget_since(self, count: int, start: str) -> None:
        """Forget the warnings starting with ``start`` logged after the first ``count``: the
        doctor's own doing."""
        with self._lock_records:
            self.records[count:] = [r for r in self.records[count:] if not r.getMessage().startswith(start)]


def diagnose(target: Target, *, timeout: float = 30.0, cancel_call: tuple[str, Mapping[str, Any]] | None = None,
             output_call: tuple[str, Mapping[str, Any]] | None = None, **options: Any) -> Report:
    """Check the server ``target`` (see the module docstring); never raises for the server's
    faults, which are findings. It collects every warning mcpclient logs while it runs, so run
    it alone (the command line does), not beside other clients of the process. ``timeout`` bounds each opening and listing; ``cancel_call``
    (a tool that takes a while, and its arguments) is the call the cancel check cancels;
    ``output_call`` (a tool with an ``outputSchema``, and its arguments) is called, its result
    checked against the schema;
    ``options`` are ``connect``'s (``http``, ``stdio``, ...; ``protocol`` and the server's
    stderr are the doctor's)."""
    options = {k: v for k, v in opening("diagnose()", options).items() if k != "protocol"}
    stdio = not isinstance(target, str)
    sink = _Stderr()
    catcher = _Warnings()
    logger = logging.getLogger("mcpclient")
    logger.addHandler(catcher)
    findings: list[Finding] = []
    server: dict[str, Any] | None = None
    try:
        server = _run(target, timeout, options, sink if stdio else None, findings, (cancel_call, output_call),
                      catcher)
    finally:
        logger.removeHandler(catcher)
    warnings = catcher.messages()
    if stdio and server is not None:
        findings += _stdio_findings(sink, warnings)
    others = [w for w in warnings if not _is_noise(w)]
    findings.append(Finding(check="client warnings", level="warning" if others else "ok",
                            message=f"mcpclient logged {len(others)} warning(s)" if others
                            else "mcpclient logged no warning", details=tuple(others[:20])))
    return Report(target=_shown(target), server=server, findings=tuple(findings))


def _shown(target: Target) -> str:
    """The target for the report: a URL without its user info, query and fragment (where a
    token may stand)."""
    if not isinstance(target, str):
        return describe_target(target)
    try:
        return safe_url(target)
    except ValueError:
        return "<invalid URL>"


def _open(target: Target, protocol: str, timeout: float, options: dict[str, Any], sink: Any) -> tuple[Any, float]:
    if sink is not None:
        options = {**options, "stdio": attrs.evolve(options.get("stdio") or Stdio(), stderr=sink)}
    start = time.perf_counter()
    client = open_client(target, {**options, "protocol": protocol, "timeout": timeout})
    return client, time.perf_counter() - start


Call = tuple[str, Mapping[str, Any]]


def _run(target: Target, timeout: float, options: dict[str, Any], sink: Any, findings: list[Finding],
         calls: tuple[Call | None, Call | None], catcher: _Warnings) -> dict[str, Any] | None:
    cancel_call, output_call = calls
    try:
        probing, probed = _open(target, "auto", timeout, options, sink)
    except MCPError as exc:
        findings.append(Finding(check="start", level="error", message=f"the server could not be opened: {exc}"))
        return None
    try:
        modern = probing.protocol_version == "2026-07-28"
        version = probing.protocol_version
    finally:
        probing.close()
    try:
        client, known = _open(target, "2026-07-28" if modern else "legacy", timeout, options, sink)
    except MCPError as exc:
        findings.append(Finding(check="start", level="error",
                                message=f"opened once, but not again with its era known: {exc}"))
        return None
    with client:
        info = client.server_info
        server = {"name": info.name, "version": info.version} if info else None
        findings += _start_findings(probed, known, modern, version)
        findings.append(_capabilities(client.server_capabilities))
        tools = _listing(client, timeout, findings)
        if tools is not None:
            findings += tool_findings(tools)
        findings.append(_output(client, output_call, timeout))
        findings.append(_unknown_method(client))
        findings.append(_cancel(client, cancel_call))
        url = target if isinstance(target, str) else target.target() if isinstance(target, ServerEntry) else None
        if isinstance(url, str):
            headers = {**(target.headers if isinstance(target, ServerEntry) else {}), **(options.get("headers") or {})}
            before = len(catcher.messages())
            session = session_check(client, url, headers, PROBE_TIMEOUT)
            catcher.forget_since(before, "the server lost the MCP session")  # the check's own doing
            if session is not None:
                findings.append(session)
    return server


def _start_findings(probed: float, known: float, modern: bool, version: str) -> list[Finding]:
    era = "modern (server/discover)" if modern else "legacy (initialize)"
    found = [Finding(check="era", level="ok", message=f"{era}, protocol version {version}")]
    level = "warning" if known > SLOW_START else "ok"
    found.append(Finding(check="start", level=level,
                         message=f"opened in {known * 1000:.0f} ms with the era known"
                         + (f" (over {SLOW_START:.0f} s: slow)" if level == "warning" else "")))
    # Two process starts differ by as much as the probe costs on a busy machine, so the
    # difference is shown, not judged: the unknown-method check judges the same answer exactly.
    cost = probed - known
    found.append(Finding(
        check="era probe", level="info",
        message=f"opened in {probed * 1000:.0f} ms with the era probe (protocol auto): "
                + (f"{cost * 1000:+.0f} ms; the probe is this era's own handshake" if modern else
                   f"{cost * 1000:+.0f} ms for server/discover (see unknown method: a server silent to it "
                   "costs a second here)"),
    ))
    return found


def _capabilities(capabilities: Mapping[str, Any]) -> Finding:
    names = sorted(str(name) for name in capabilities)
    return Finding(check="capabilities", level="info" if names else "warning",
                   message=", ".join(names) if names else "the server declares no capability")


def _listing(client: Any, timeout: float, findings: list[Finding]) -> list[dict[str, Any]] | None:
    if "tools" not in client.server_capabilities:
        findings.append(Finding(check="tools", level="info", message="no tools capability: tool checks skipped"))
        return None
    try:
        first = client.request("tools/list", None, timeout=timeout)
        tools = list_tools_raw(client, timeout=timeout)
        again = list_tools_raw(client, timeout=timeout)
    except MCPError as exc:
        findings.append(Finding(check="tools", level="error", message=f"tools/list failed: {exc}"))
        return None
    findings.append(Finding(check="tools", level="ok", message=f"{len(tools)} tool(s) listed"))
    findings.append(listing_order(tools, again))
    findings.append(cache_hints(first, client.server_capabilities))
    return tools


def _output(client: Any, call: Call | None, timeout: float) -> Finding:
    """``call``'s result held against its tool's ``outputSchema`` (the client's own check)."""
    if call is None:
        return Finding(check="output", level="info", message="no tool called: name one with an outputSchema "
                       "(output_call, --check-tool) to check a result against it")
    name, arguments = call
    shown = json.dumps(name)
    try:
        client.list_tools()  # the client learns the output schemas it checks results against
        result = client.call_tool(name, dict(arguments), timeout=timeout)
    except OutputValidationError as exc:
        return Finding(check="output", level="error", message=f"the result of {shown} breaks its outputSchema",
                       details=tuple(exc.errors[:10]))
    except MCPError as exc:
        return Finding(check="output", level="error", message=f"calling {shown} failed: {exc}")
    if result.is_error:
        return Finding(check="output", level="warning", message=f"{shown} reported an error: {result.text[:200]}")
    if result.output_schema is None:
        return Finding(check="output", level="info", message=f"{shown} declares no outputSchema: nothing to check")
    return Finding(check="output", level="ok", message=f"the result of {shown} matches its outputSchema")


def _unknown_method(client: Any) -> Finding:
    start = time.perf_counter()
    try:
        result = client.request(UNKNOWN_METHOD, None, timeout=PROBE_TIMEOUT)
    except RPCError as exc:
        ms = (time.perf_counter() - start) * 1000
        if exc.code == -32601:
            return Finding(check="unknown method", level="ok", message=f"-32601 (method not found) in {ms:.0f} ms")
        return Finding(check="unknown method", level="warning",
                       message=f"error {exc.code} in {ms:.0f} ms, not -32601 (method not found): {exc.message}")
    except RequestTimeout:
        return Finding(check="unknown method", level="error",
                       message=f"no answer in {PROBE_TIMEOUT:.0f} s: a server must answer every request (-32601)")
    except ConnectionClosed as exc:
        return Finding(check="unknown method", level="error", message=f"the server went away: {exc.reason}")
    except MCPError as exc:
        return Finding(check="unknown method", level="error", message=f"{type(exc).__name__}: {exc}")
    return Finding(check="unknown method", level="error",
                   message=f"answered with a result, not -32601: {json.dumps(result)[:200]}")


def _cancel(client: Any, call: tuple[str, Mapping[str, Any]] | None) -> Finding:
    """A request cancelled once sent, then a ``ping``: ``call`` (a slow tool and its arguments)
    cancelled after ``CANCEL_AFTER``; without one, a ``tools/list`` cancelled at once, which
    races with its reply."""
    token = threading.Event()
    timer = threading.Timer(0.0 if call is None else CANCEL_AFTER, token.set)
    cancelled = False
    timer.start()
    try:
        if call is not None:
            client.call_tool(call[0], dict(call[1]), timeout=PROBE_TIMEOUT + CANCEL_AFTER, cancel=token)
        else:
            client.request("tools/list" if "tools" in client.server_capabilities else UNKNOWN_METHOD, None,
                           timeout=PROBE_TIMEOUT, cancel=token)
    except RequestCancelled as exc:
        cancelled = exc.delivered
    except MCPError:
        pass  # answered (an error reply included) before the cancel
    finally:
        timer.cancel()
    start = time.perf_counter()
    try:
        client.ping(timeout=PROBE_TIMEOUT)
    except MCPError as exc:
        return Finding(check="cancel", level="error",
                       message=f"after {'a cancel' if cancelled else 'a request'}, ping failed: {exc}")
    ms = (time.perf_counter() - start) * 1000
    if cancelled:
        return Finding(check="cancel", level="ok",
                       message=f"a request cancelled in flight (notifications/cancelled), then ping answered in {ms:.0f} ms")
    if call is not None:
        return Finding(check="cancel", level="warning",
                       message=f"the tool {json.dumps(call[0])} answered within {CANCEL_AFTER} s, before its cancel; "
                               "name a slower one")
    return Finding(check="cancel", level="info",
                   message=f"the request was answered before its cancel went out (name a slow tool to cancel: "
                           f"cancel_call, --cancel-tool); ping answered in {ms:.0f} ms")


def _is_noise(message: str) -> bool:
    return message.startswith(("skipping a malformed message", "skipping a message", "the server sent a line of over"))


def _stdio_findings(sink: _Stderr, warnings: Sequence[str]) -> list[Finding]:
    noise = [w for w in warnings if _is_noise(w)]
    found = [Finding(check="stdout", level="error" if noise else "ok",
                     message=f"{len(noise)} line(s) on stdout that are not protocol messages (log to stderr)"
                     if noise else "protocol messages only", details=tuple(noise[:5]))]
    loud = sink.lines > STDERR_LINES or sink.bytes > STDERR_BYTES
    found.append(Finding(check="stderr", level="warning" if loud else "ok",
                         message=f"{sink.lines} line(s), {sink.bytes} byte(s) while the doctor ran"
                         + (" (a lot: is it logging every message?)" if loud else ""),
                         details=tuple(sink.last if loud else ())))
    return found
