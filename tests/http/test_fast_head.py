"""``FastHeadResponse`` reads a head into exactly what ``http.client`` builds, or lets it read.

Every generated head (plain ones, and every oddity the fast path must hand back: interim
responses, folded and malformed lines, control characters, multipart types, heads split over
reads) is read by both ``http.client.HTTPResponse`` and ``FastHeadResponse``; the status,
version, framing, the ``HTTPMessage`` attribute for attribute, and the bytes left for the body
must be the same, or both must fail with the same error.
"""

from __future__ import annotations

import http.client
import io
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpclient.transports import _sockets
from mcpclient.transports._fast_head import MAX_FAST_HEADERS, FastHeadResponse


class _Raw(io.RawIOBase):
    """A socket's reading side that hands out ``data`` in the given pieces."""

    def __init__(self, pieces: list[bytes]) -> None:
        self._pieces = [piece for piece in pieces if piece]

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        if not self._pieces:
            return 0
        piece = self._pieces.pop(0)
        n = min(len(buffer), len(piece))
        buffer[:n] = piece[:n]
        if n < len(piece):
            self._pieces.insert(0, piece[n:])
        return n


class _Sock:
    def __init__(self, pieces: list[bytes]) -> None:
        self._pieces = pieces

    def makefile(self, mode: str, *args, **kwargs):
        return io.BufferedReader(_Raw(list(self._pieces)))


def read_head(cls: type[http.client.HTTPResponse], pieces: list[bytes], method: str = "GET"):
    """What reading the head leaves behind: the response's state, its message, the body."""
    response = cls(_Sock(pieces), method=method)  # type: ignore[arg-type]
    try:
        response.begin()
    except Exception as exc:  # the same failure is the expected outcome for a bad head
        return ("failed", type(exc), str(exc))
    state = {key: value for key, value in vars(response).items() if key not in ("fp", "msg", "headers")}
    assert response.msg is response.headers
    return state, snapshot(response.msg), response.msg.items(), response.fp.read()


def snapshot(message) -> dict:
    """A message's attributes, comparable (defects and nested messages have no ``__eq__``)."""
    attributes = dict(vars(message))
    attributes["defects"] = [(type(defect), str(defect)) for defect in attributes["defects"]]
    if isinstance(attributes["_payload"], list):
        attributes["_payload"] = [snapshot(part) for part in attributes["_payload"]]
    return attributes


def assert_same(pieces: list[bytes], method: str = "GET") -> None:
    assert read_head(FastHeadResponse, pieces, method) == read_head(http.client.HTTPResponse, pieces, method)


STATUS_LINES = [
    "HTTP/1.1 200 OK", "HTTP/1.0 200 OK", "HTTP/1.1 202 Accepted", "HTTP/1.1 204 No Content",
    "HTTP/1.1 304 Not Modified", "HTTP/1.1 404  Not  Found ", "HTTP/1.1 503", "HTTP/1.1 200 ",
    "HTTP/1.1 100 Continue", "HTTP/1.1 101 Switching", "HTTP/2 200 OK", "HTTP/1.1\t200 OK",
    "HTTP/1.1 200\tOK", "HTTP/1.1 99 Low", "HTTP/1.1 600 High", "HTTP/1.1 abc", "", "ICY 200 OK",
    "HTTP/1.1 200 \xa0OK", "HTTP/1.1 200 caf\xe9", "HTTP/1.1 200 a\x0bb", "HTTP/1.1 200 \x85",
]
NAMES = [
    "Content-Type", "content-length", "Transfer-Encoding", "Connection", "Keep-Alive",
    "Proxy-Connection", "Mcp-Session-Id", "Set-Cookie", "X-A", "From", "From ", " Folded", "",
    "Bad Name", "N\xe9", "A\x00", ":colon", "x;y",
]
VALUES = [
    "chunked", "Chunked", "gzip, chunked", "close", "keep-alive", "Keep-Alive, close", "12", "0",
    "-1", "abc", " 5", "5 ", "multipart/mixed; boundary=x", "message/http", "text/event-stream",
    "application/json", "", "caf\xe9", "a\tb", "a\x0bb", "a\x0cb", "a\x1cb", "a\x85b", "a\rb",
    "a\nb", "a\x7fb", "\u00ff",
]
header_lines = st.tuples(
    st.sampled_from(NAMES) | st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=8),
    st.sampled_from(["", " ", "  ", "\t", " \t"]),
    st.sampled_from(VALUES) | st.text(st.characters(min_codepoint=0, max_codepoint=255), max_size=12),
    st.sampled_from(["\r\n"] * 12 + ["\n", "\r", "\r\n "]),
).map(lambda parts: f"{parts[0]}:{parts[1]}{parts[2]}{parts[3]}")


@st.composite
def heads(draw) -> tuple[list[bytes], str]:
    status = draw(st.sampled_from(STATUS_LINES))
    lines = draw(st.lists(header_lines, max_size=8))
    body = draw(st.sampled_from([b"", b"BODY", b"\r\nrest", b"5\r\nhello\r\n0\r\n\r\n"]))
    data = (status + "\r\n" + "".join(lines) + "\r\n").encode("latin-1") + body
    cut = draw(st.none() | st.integers(min_value=1, max_value=max(1, len(data) - 1)))
    pieces = [data] if cut is None else [data[:cut], data[cut:]]
    return pieces, draw(st.sampled_from(["GET", "POST", "HEAD"]))


@settings(max_examples=600, deadline=None)
@given(heads())
def test_any_head_reads_as_http_client_reads_it(head):
    pieces, method = head
    assert_same(pieces, method)


plain_lines = st.tuples(
    st.sampled_from(NAMES[:10]) | st.text(st.characters(min_codepoint=33, max_codepoint=126, exclude_characters=":"), min_size=1, max_size=8),
    st.sampled_from(["", " ", "  ", "\t"]),
    st.sampled_from([value for value in VALUES[:16] if "multipart" not in value and "message" not in value])
    | st.text(st.characters(codec="latin-1", exclude_categories=["Cc"]) | st.just("\t"), max_size=12).filter(
        lambda text: "multipart" not in text.lower() and "message" not in text.lower()
    ),
).map(lambda parts: f"{parts[0]}:{parts[1]}{parts[2]}\r\n")


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([
        line for line in STATUS_LINES
        if line.startswith("HTTP/1.") and line[8:9] == " " and line[9:10] in "2345" and line[12:13] in ("", " ")
        and not any(ord(char) < 32 or char in "\x7f\x85" for char in line)
    ]),
    st.lists(plain_lines, max_size=MAX_FAST_HEADERS),
    st.sampled_from(["GET", "POST", "HEAD"]),
)
def test_a_plain_head_is_read_on_the_fast_path_as_http_client_reads_it(status, lines, method):
    data = (status + "\r\n" + "".join(lines) + "\r\n").encode("latin-1") + b"BODY"
    expected = read_head(http.client.HTTPResponse, [data], method)
    with mock.patch.object(http.client, "parse_headers", side_effect=AssertionError("not the fast path")):
        assert read_head(FastHeadResponse, [data], method) == expected


PLAIN = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    b"Mcp-Session-Id: 4f2a\r\nTransfer-Encoding: chunked\r\nDate: Tue, 01 Dec 2026 10:00:00 GMT\r\n\r\n"
    b"5\r\nhello\r\n0\r\n\r\n"
)


@pytest.mark.parametrize(
    "data, method",
    [
        (PLAIN, "POST"),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 4\r\n\r\nBODY", "GET"),
        (b"HTTP/1.0 200 OK\r\nKeep-Alive: timeout=5\r\nContent-Length: 4\r\n\r\nBODY", "GET"),
        (b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", "POST"),
        (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}", "POST"),  # close-delimited
        (b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nBODY", "POST"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nBODY", "HEAD"),
        (b"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 0\r\n\r\n", "GET"),
        (b"HTTP/1.1 204 No Content\r\n\r\n", "DELETE"),
        (b"HTTP/1.1 200 OK\r\n\r\n", "GET"),
    ],
)
def test_a_plain_head_is_read_without_the_email_parser(data, method, monkeypatch):
    expected = read_head(http.client.HTTPResponse, [data], method)

    def no_email_parser(*args, **kwargs):
        raise AssertionError("the fast path used http.client's parse_headers")

    monkeypatch.setattr(http.client, "parse_headers", no_email_parser)
    assert read_head(FastHeadResponse, [data], method) == expected


def test_an_interim_response_goes_to_http_client():
    data = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    response = FastHeadResponse(_Sock([data]), method="POST")  # type: ignore[arg-type]
    response.begin()
    assert (response.status, response.length, response.read()) == (200, 2, b"ok")


def test_a_head_split_over_reads_is_read_by_http_client():
    pieces = [PLAIN[:40], PLAIN[40:]]
    assert_same(pieces, "POST")
    response = FastHeadResponse(_Sock(pieces), method="POST")  # type: ignore[arg-type]
    response.begin()
    assert response.status == 200 and response.chunked and response.read() == b"hello"


@pytest.mark.parametrize("count, fast", [(MAX_FAST_HEADERS, True), (MAX_FAST_HEADERS + 1, False), (99, False), (100, False)])
def test_many_headers_keep_http_client_limits(count, fast, monkeypatch):
    """``count`` header lines: the fast path takes up to 64, http.client refuses 100."""
    data = b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(count - 1)) + b"Content-Length: 0\r\n\r\n"
    expected = read_head(http.client.HTTPResponse, [data])
    if fast:
        monkeypatch.setattr(http.client, "parse_headers", None)  # would fail if called
    assert read_head(FastHeadResponse, [data]) == expected
    assert (expected[0] == "failed") is (count >= 100)  # http.client refuses that many, and so do we


def test_a_huge_header_line_keeps_http_client_limit():
    data = b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n"
    assert read_head(FastHeadResponse, [data])[:2] == ("failed", http.client.LineTooLong)


def test_our_connections_read_heads_this_way():
    assert _sockets._Connection.response_class is FastHeadResponse
    assert _sockets._HTTPSConnection.response_class is FastHeadResponse
