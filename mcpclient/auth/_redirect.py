"""The user's part of the authorization code flow: showing the consent page, getting the code back.

A ``RedirectHandler`` has a ``redirect_uri`` and an ``authorize(url)`` that returns the full URL
the authorization server redirected to. Three are provided:

* ``LoopbackRedirectHandler``: opens the system browser (``webbrowser``, never a shell) and
  receives the redirect on ``http://127.0.0.1:<port>/callback`` (a random free port by default).
  The listener binds a loopback address only, exists only while one ``authorize`` call runs,
  and takes only the request that carries that flow's ``state``.
* ``PasteRedirectHandler``: for notebooks, SSH sessions and containers without a browser: shows
  the URL and reads back the address the browser ended on, pasted by the user.
* ``default_redirect_handler()`` picks one of the two for the current session.

Replace them with your own to drive a GUI, a device, or a test double.
"""

from __future__ import annotations

import abc
import hmac
import http.server
import logging
import os
import socket
import socketserver
import sys
import threading
import time
import webbrowser
from typing import Callable, TextIO
from urllib.parse import parse_qs, urlsplit

from .._core.text import clean, is_clean
from ._errors import AuthorizationError

__all__ = ["LoopbackRedirectHandler", "PasteRedirectHandler", "RedirectHandler", "default_redirect_handler"]

log = logging.getLogger(__name__)

_DONE_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>Authorization complete</title>"
    b"<p>Authorization complete. You can close this window and return to the application.</p>"
)


def check_authorization_url(url: str) -> str:
    """Refuse anything but an http(s) URL that is shown as it is: it is handed to a browser.

    A URL holding controls, invisible characters or spaces (from the authorization server's
    metadata) is refused: the browser would rewrite it, and the person would not see it as it is.
    """
    scheme = urlsplit(url).scheme.lower() if isinstance(url, str) else ""
    if scheme not in ("https", "http"):
        raise AuthorizationError(f"refusing to open a non-http(s) authorization URL (scheme {clean(scheme, 40)!r})")
    if not is_clean(url) or any(char.isspace() for char in url):
        raise AuthorizationError(
            "refusing an authorization URL holding control, invisible or space characters; "
            "the authorization server's metadata names it"
        )
    return url


class RedirectHandler(abc.ABC):
    """Shows the authorization page to the user and returns where the browser was sent back.

    ``redirect_uri`` must stay the same between ``authorize`` calls (it is registered with the
    authorization server). ``authorize`` blocks until the redirect arrives, up to ``timeout``
    seconds, and returns the full redirect URL (with ``code``, ``state`` and maybe ``iss``).
    It may be called from any thread, one call at a time.
    """

    @property
    @abc.abstractmethod
    def redirect_uri(self) -> str:
        """The redirect URI to register and send in the authorization request."""

    @abc.abstractmethod
    def authorize(self, authorization_url: str, *, timeout: float | None = None) -> str:
        """Let the user authorize at ``authorization_url``; return the URL redirected to."""

    def close(self) -> None:
        """Release what the handler holds (a listening socket); idempotent."""


#: The hosts the listener may bind: loopback only (RFC 8252 section 7.3). "localhost" is bound
#: as 127.0.0.1, so no name lookup decides where the listener is.
_LOOPBACK = {"127.0.0.1": ("127.0.0.1", socket.AF_INET), "localhost": ("127.0.0.1", socket.AF_INET),
             "::1": ("::1", socket.AF_INET6)}

#: How long one connection may take to send its request line and headers: a local process that
#: connects and says nothing must not hold the (one-at-a-time) listener past the flow's timeout.
_REQUEST_TIMEOUT = 5.0


def _state_of(url: str) -> str | None:
    """The single ``state`` value of a URL's query, or None (absent, repeated, unreadable)."""
    try:
        values = parse_qs(urlsplit(url).query, keep_blank_values=True).get("state")
    except (ValueError, TypeError):
        return None
    return values[0] if values is not None and len(values) == 1 else None


class _CallbackServer(http.server.HTTPServer):
    """One flow's listener: it knows the flow's ``state`` and keeps the matching request."""

    def __init__(self, address: tuple[str, int], family: socket.AddressFamily, *, base: str, path: str,
                 state: str) -> None:
        self.address_family = family
        self.base = base  # "http://host:port", as in the redirect URI
        self.path = path
        self.state = state
        self.callback: str | None = None
        self.request_timeout = _REQUEST_TIMEOUT
        super().__init__(address, _CallbackRequest)

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks the host up (getfqdn), which can stall; the name is unused.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.base, self.server_address[1]

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that hangs up or sends garbage is not the user's concern: no traceback on stderr.
        log.debug("callback listener: a request from %s failed", client_address, exc_info=True)


class _CallbackRequest(http.server.BaseHTTPRequestHandler):
    server: _CallbackServer

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.request_timeout)

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        if urlsplit(self.path).path != self.server.path:
            self.send_error(404)
            return
        state = _state_of(self.path)
        if state is None or not hmac.compare_digest(state.encode("utf-8"), self.server.state.encode("utf-8")):
            # Another local process, or a stale browser tab of an earlier flow: not this flow's
            # answer. Say so and keep waiting for the right one.
            log.warning("the authorization callback listener ignored a request without this flow's state")
            self.send_error(400, "not the redirect of the authorization in progress")
            return
        self.server.callback = self.server.base + self.path
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(_DONE_PAGE)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        # Never the request line: its query holds the authorization code and the state.
        log.debug("callback listener: %s %s answered %s", self.command, urlsplit(self.path).path[:200], code)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        log.debug("callback listener: " + format, *args)


class LoopbackRedirectHandler(RedirectHandler):
    """Opens the system browser and receives the redirect on a loopback listener.

    ``host`` must be a loopback name: ``127.0.0.1`` (the default), ``::1`` or ``localhost``
    (bound as 127.0.0.1); anything else raises ``ValueError``, since a listener on another
    interface would let the network deliver a forged redirect. ``port=0`` (the default) picks
    a free port the first time ``redirect_uri`` is read and keeps it while this handler lives,
    so a registration stays valid. ``open_browser`` defaults to ``webbrowser.open``; when it
    fails, the URL is logged at WARNING level for the user to open.

    The listener is opened by ``authorize`` (before the browser is sent anywhere) and closed
    when that call returns or raises, so between flows nothing listens and no request can
    wait in a queue for the next flow. It answers only the request whose ``state`` is the
    one in the authorization URL; other requests get 400 and the wait goes on, until
    ``timeout``.
    """

    def __init__(
        self,
        port: int = 0,
        *,
        host: str = "127.0.0.1",
        path: str = "/callback",
        open_browser: Callable[[str], bool] | None = None,
    ) -> None:
        if host.lower() not in _LOOPBACK:
            raise ValueError(
                f"the callback listener binds loopback addresses only (127.0.0.1, ::1 or localhost), not {host!r}"
            )
        self._host = host.lower()
        self._bind_host, self._family = _LOOPBACK[self._host]
        self._port = port
        self._path = path
        self._open = open_browser or webbrowser.open
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<LoopbackRedirectHandler {self._host}:{self._port or 'auto'}>"

    def _chosen_port(self) -> int:
        """The port, chosen once: the kernel's pick, released at once (no listener yet)."""
        with self._lock:
            if self._port == 0:
                with socket.socket(self._family, socket.SOCK_STREAM) as probe:
                    probe.bind((self._bind_host, 0))
                    self._port = probe.getsockname()[1]
            return self._port

    def _base(self, port: int) -> str:
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"http://{host}:{port}"

    @property
    def redirect_uri(self) -> str:
        return self._base(self._chosen_port()) + self._path

    def _listen(self, state: str) -> _CallbackServer:
        port = self._chosen_port()
        try:
            return _CallbackServer((self._bind_host, port), self._family, base=self._base(port),
                                   path=self._path, state=state)
        except OSError as exc:
            raise AuthorizationError(
                f"cannot listen for the authorization redirect on {self._base(port)}: {exc.strerror or exc}"
            ) from exc

    def authorize(self, authorization_url: str, *, timeout: float | None = 300.0) -> str:
        check_authorization_url(authorization_url)
        state = _state_of(authorization_url)
        if not state:
            raise AuthorizationError(
                "the authorization URL carries no state parameter; the listener could not tell its redirect from another"
            )
        server = self._listen(state)
        try:
            try:
                opened = self._open(authorization_url)
            except Exception:  # a broken browser setup must not hide the URL from the user
                opened = False
            if not opened:  # the user must act on it: shown whatever the application's logging
                sys.stderr.write(f"To authorize, open this URL in a browser: {clean(authorization_url, None)}\n")
                sys.stderr.flush()
            deadline = None if timeout is None else time.monotonic() + timeout
            while server.callback is None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise AuthorizationError("no authorization redirect arrived in time; try again")
                server.timeout = 0.5 if left is None else min(0.5, left)
                server.request_timeout = _REQUEST_TIMEOUT if left is None else max(0.1, min(_REQUEST_TIMEOUT, left))
                server.handle_request()
            return server.callback
        finally:
            server.server_close()

    def close(self) -> None:
        """Nothing to release: the listener lives only while ``authorize`` runs."""


class PasteRedirectHandler(RedirectHandler):
    """Shows the URL and asks the user to paste the address the browser ended on.

    For notebooks and headless sessions, where no browser or listener can be reached. The
    browser's redirect to ``redirect_uri`` fails to load; the user copies its address. Prompts
    go to ``output`` (standard error by default, so they never mix with program output) and
    the answer is read with ``read_line`` (``input``).
    """

    def __init__(
        self,
        redirect_uri: str = "http://127.0.0.1:8765/callback",
        *,
        output: TextIO | None = None,
        read_line: Callable[[str], str] | None = None,
    ) -> None:
        self._redirect_uri = redirect_uri
        self._output = output
        self._read_line = read_line or input

    def __repr__(self) -> str:
        return f"<PasteRedirectHandler {self._redirect_uri}>"

    @property
    def redirect_uri(self) -> str:
        return self._redirect_uri

    def authorize(self, authorization_url: str, *, timeout: float | None = None) -> str:
        check_authorization_url(authorization_url)
        out = self._output or sys.stderr
        out.write(
            "\nTo authorize, open this URL in a browser:\n\n    " + clean(authorization_url, None) + "\n\n"
            "After you approve, the browser goes to an address starting with " + clean(self._redirect_uri, None) + "\n"
            "(the page may fail to load). Copy that whole address and paste it here.\n"
        )
        out.flush()
        answer = self._read_line("Redirect URL: ").strip()
        if not answer.startswith(self._redirect_uri.split("?")[0]):
            raise AuthorizationError("the pasted address is not the redirect URL; start the authorization again")
        return answer


def _headless() -> bool:
    if "ipykernel" in sys.modules or "google.colab" in sys.modules:
        return True
    if os.environ.get("SSH_CONNECTION") or os.environ.get("SSH_TTY"):
        return True
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return True
    try:
        webbrowser.get()
    except webbrowser.Error:
        return True
    return False


def default_redirect_handler() -> RedirectHandler:
    """``PasteRedirectHandler`` in a notebook or headless session, else ``LoopbackRedirectHandler``."""
    if _headless():
        return PasteRedirectHandler()
    return LoopbackRedirectHandler()


