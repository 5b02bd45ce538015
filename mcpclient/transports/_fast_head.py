"""Reading a response's head without the email parser, in the usual case.

``http.client`` hands every response's header block to the ``email`` package's feed parser
(a few hundred Python function calls for five headers) and then finds each header it needs
by walking the list. For the heads nearly every server sends, ``FastHeadResponse.begin``
builds the same ``HTTPMessage`` directly and looks its few headers up once.

The fast path takes a head only when all of it is in the connection's read buffer already
(one ``peek``, which reads from the socket only if the buffer is empty, as ``readline``
would) and it is plain:

- an ``HTTP/1.x`` status line with a status from 200 to 599 and a single space after the
  version and after the status;
- at most ``MAX_FAST_HEADERS`` header lines, each ``name:value`` ending in CRLF, the name made
  of the characters the feed parser accepts in one (``!`` to ``~`` without ``:``); no folded
  lines, no control character but tab anywhere (so no bare CR or LF);
- a ``Content-Type`` that is not ``multipart/*`` or ``message/*`` (the feed parser reads those
  differently);
- the connection's ``debuglevel`` is 0.

Anything else (an interim ``1xx`` response, a trickled head split over reads, a malformed or
huge one) goes to ``http.client``'s own ``begin``, which reads it from the untouched buffer:
its limits and errors apply as before. What the fast path builds is what ``http.client``
builds, attribute for attribute (``tests/http/test_fast_head.py`` compares the two on
generated heads).
"""

from __future__ import annotations

import http.client
import re

__all__ = ["FastHeadResponse", "MAX_FAST_HEADERS"]

#: More header lines than this go to http.client (which refuses more than 100).
MAX_FAST_HEADERS = 64

#: Text without control characters but tab (nor NEL, a line break to ``str.splitlines``).
_TEXT = r"[\t -~\x80-\x84\x86-\xff]*"
_STATUS_LINE = re.compile(r"HTTP/1\.([0-9]) ([2-5][0-9][0-9])(?: (" + _TEXT + r"))?")
#: A name the feed parser takes as a header's (``[\041-\071\073-\176]``), its colon, a value.
_HEADER_LINE = re.compile(r"[!-9;-~]+:" + _TEXT)
_END = b"\r\n\r\n"


class FastHeadResponse(http.client.HTTPResponse):
    """An ``http.client.HTTPResponse`` that reads a plain head without the email parser."""

    def begin(self) -> None:
        if self.headers is not None:  # started already (as http.client checks)
            return
        if self.debuglevel > 0 or not self._begin_fast():
            super().begin()

    def _begin_fast(self) -> bool:
        """Read the head if it is plain and buffered; False (nothing consumed) otherwise."""
        fp = self.fp
        try:
            data = fp.peek(1)  # (fp is the connection's buffered reader, as http.client makes it)
        except ValueError:  # closed: http.client says how
            return False
        end = data.find(_END)
        if end < 0:
            return False
        head = data[: end + 2].decode("iso-8859-1")
        lines = head.split("\r\n")
        lines.pop()  # the empty string after the last CRLF
        if len(lines) > MAX_FAST_HEADERS + 1:
            return False
        status_match = _STATUS_LINE.fullmatch(lines[0])
        if status_match is None:
            return False
        fields: list[tuple[str, str]] = []
        first: dict[str, str] = {}
        match_header = _HEADER_LINE.fullmatch
        for line in lines[1:]:
            if match_header(line) is None:
                return False
            name, _, value = line.partition(":")
            value = value.lstrip(" \t")
            fields.append((name, value))
            first.setdefault(name.lower(), value)
        content_type = first.get("content-type")
        if content_type is not None:
            kind = content_type.lower()
            if "multipart" in kind or "message" in kind:
                return False
        fp.read(end + 4)  # consume the head: all of it is in the buffer
        message = http.client.HTTPMessage()
        message._headers = fields  # type: ignore[attr-defined]  # as the feed parser stores them
        message.set_payload("")  # ... and the nothing that followed the head in its input
        self._finish(status_match, message, first)
        return True

    def _finish(self, status_match: re.Match[str], message: http.client.HTTPMessage, first: dict[str, str]) -> None:
        """Set what ``http.client``'s ``begin`` sets once it has parsed the head."""
        minor, code, reason = status_match.groups()
        status = int(code)
        self.code = self.status = status
        self.reason = (reason or "").strip()
        self.version = 10 if minor == "0" else 11
        self.headers = self.msg = message
        transfer_encoding = first.get("transfer-encoding")
        if transfer_encoding and transfer_encoding.lower() == "chunked":
            self.chunked = True
            self.chunk_left = None
        else:
            self.chunked = False
        self.will_close = self._will_close(first)
        self.length = None
        length = first.get("content-length")
        if length and not self.chunked:
            try:
                self.length = int(length)
            except ValueError:
                self.length = None
            else:
                if self.length < 0:
                    self.length = None
        if status in (204, 304) or self._method == "HEAD":  # type: ignore[attr-defined]
            self.length = 0
        if not self.will_close and not self.chunked and self.length is None:
            self.will_close = True  # no length and not chunked: the body ends with the connection

    def _will_close(self, first: dict[str, str]) -> bool:
        """``http.client``'s ``_check_close``, on the headers looked up once."""
        connection = first.get("connection")
        if self.version == 11:
            return bool(connection and "close" in connection.lower())
        if first.get("keep-alive"):
            return False
        if connection and "keep-alive" in connection.lower():
            return False
        proxy_connection = first.get("proxy-connection")
        return not (proxy_connection and "keep-alive" in proxy_connection.lower())
