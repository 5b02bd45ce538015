"""The user's part of the authorization code flow: showing the consent page, getting the code back.

A ``RedirectHandler`` has a ``redirect_uri`` and an ``authorize(url)`` that returns the full URL
the authorization server redirected to. Three are provided:

* ``LoopbackRedirectHandler``: opens the system browser (``webbrowser``, never a shell) and
  receives the redirect on ``http://127.0.0.1:<port>/callback`` (a random free port by default).
* ``PasteRedirectHandler``: for notebooks, SSH sessions and containers without a browser: shows
  the URL and reads back the address the browser ended on, pasted by the user.
* ``default_redirect_handler()`` picks one of the two for the current session.

Replace them with your own to drive a GUI, a device, or a test double.
"""

from __future__ import annotations

import abc
import http.server
import logging
import os

import sys
import threading
import time
import webbrowser
from typing import Callable, TextIO
from urllib.parse import urlsplit

from ._errors import AuthorizationError

__all__ = ["LoopbackRedirectHandler", "PasteRedirectHandler", "RedirectHandler", "default_redirect_handler"]

log = logging.getLogger(__name__)

_DONE_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>Authorization complete</title>"
    b"<p>Authorization complete. You can close this window and return to the application.</p>"
)


def check_authorization_url(url: str) -> str:
    """Refuse anything but an http(s) URL: it is handed to a browser."""
    scheme = urlsplit(url).scheme.lower() if isinstance(url, str) else ""
    if scheme not in ("https", "http"):
        raise AuthorizationError(f"refusing to open a non-http(s) authorization URL (scheme {scheme!r})")
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


class _CallbackServer(http.server.HTTPServer):
    callback: str | None = None
    path: str = "/callback"


class _CallbackRequest(http.server.BaseHTTPRequestHandler):
    server: _CallbackServer

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        if urlsplit(self.path).path != self.server.path:
            self.send_error(404)
            return
        host, port = self.server.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else host
        self.server.callback = f"http://{host}:{port}{self.path}"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(_DONE_PAGE)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        log.debug("callback listener: " + format, *args)


class LoopbackRedirectHandler(RedirectHandler):
    """Opens the system browser and receives the redirect on a loopback listener.

    ``port=0`` (the default) picks a free port the first time ``redirect_uri`` is read and keeps
    it while this handler lives, so a registration stays valid. ``open_browser`` defaults to
    ``webbrowser.open``; when it fails, the URL is logged at WARNING level for the user to open.
    """

    def __init__(
        self,
        port: int = 0,
        *,
        host: str = "127.0.0.1",
        path: str = "/callback",
        open_browser: Callable[[str], bool] | None = None,
    ) -> None:
        self._host = host
        self._port = port
        self._path = path
        self._open = open_browser or webbrowser.open
        self._server: _CallbackServer | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<LoopbackRedirectHandler {self._host}:{self._port or 'auto'}>"

    def _bind(self) -> _CallbackServer:
        with self._lock:
            if self._server is None:
                server = _CallbackServer((self._host, self._port), _CallbackRequest)
                server.path = self._path
                self._port = server.server_address[1]
                self._server = server
            return self._server

    @property
    def redirect_uri(self) -> str:
        server = self._bind()
        return f"http://{self._host}:{server.server_address[1]}{self._path}"

    def authorize(self, authorization_url: str, *, timeout: float | None = 300.0) -> str:
        check_authorization_url(authorization_url)
        server = self._bind()
        server.callback = None
        try:
            opened = self._open(authorization_url)
        except Exception:  # a broken browser setup must not hide the URL from the user
            opened = False
        if not opened:
            log.warning("open this URL in a browser to authorize: %s", authorization_url)
        deadline = None if timeout is None else time.monotonic() + timeout
        while server.callback is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise AuthorizationError("no authorization redirect arrived in time; try again")
            server.timeout = 0.5 if left is None else min(0.5, left)
            server.handle_request()
        return server.callback

    def close(self) -> None:
        with self._lock:
            if self._server is not None:
                self._server.server_close()
                self._server = None


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
            "\nTo authorize, open this URL in a browser:\n\n    " + authorization_url + "\n\n"
            "After you approve, the browser goes to an address starting with " + self._redirect_uri + "\n"
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


