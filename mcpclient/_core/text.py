"""Server text made inert for a terminal or a log line: the one cleaning function.

Whatever a server sends (names, descriptions, instructions, error messages, log data, URLs)
may hold bytes a terminal obeys or a log reader trusts: ESC sequences (CSI to move the cursor
or recolour, OSC to set the title, write the clipboard (OSC 52) or draw a hyperlink (OSC 8),
DCS), the 8-bit C1 forms of the same introducers (U+009B is CSI), carriage returns that
overwrite a line, newlines that forge a log line or a prompt line, bidi controls that show
text in another order than it is (``evil.com\\u202e...``), invisible format characters, and
lone surrogates that no terminal encoding can write (a traceback instead of output).

``clean(text)`` returns one line in which every such character is *shown* as an escape, the
way Python's ``repr`` shows it, so nothing reaches the terminal as a control and nothing is
silently hidden from the person reading:

* C0 controls U+0000-U+001F (NUL, BEL, BS, TAB, LF, CR, ESC, ...), DEL U+007F and C1 controls
  U+0080-U+009F: ``\\n``, ``\\r``, ``\\t``, ``\\x1b``, ``\\x9b``. An escape sequence thereby
  loses its introducer and arrives as plain text (``\\x1b]52;c;...``);
* line and paragraph separators U+2028 and U+2029: ``\\u2028``;
* every format character (Unicode category Cf): the bidi controls U+061C, U+200E, U+200F,
  U+202A-U+202E and U+2066-U+2069, zero-width space, joiners and word joiner, soft hyphen,
  byte order mark, the invisible tag characters U+E0000-U+E007F, ...: ``\\u202e``;
* lone surrogates U+D800-U+DFFF (a JSON ``\\ud800`` escape): ``\\ud800``.

Everything else (letters of any script, emoji, spaces, backslashes) is kept as it is. The
result is cut to ``limit`` characters (``...`` marks a cut). ``clean`` is idempotent: its
output has nothing left to escape.

``clean_lines(text)`` is for text whose line breaks are part of what is shown (a tool's
long description, a server's instructions, a tool result on a terminal): the text is split
at every line break ``str.splitlines`` knows (so a lone ``\\r`` starts a new line instead of
overwriting one), tabs become spaces, and each line is cleaned. The caller prints the lines
under its own structure (indented under a heading, say), so they cannot pose as its lines.

``inert_json(text)`` is for JSON text (``json.dumps(..., ensure_ascii=False)``, which escapes
C0 controls but passes C1 controls, bidi controls, format characters and lone surrogates
raw): each of those is written as a JSON ``\\uXXXX`` escape (a surrogate pair above U+FFFF),
which is the same JSON value, so ``--json`` output is inert on a terminal and unchanged for
a program. Such characters can only stand inside JSON strings; newlines of the layout stay.

``CleanFormatter`` is a ``logging.Formatter`` whose messages are cleaned: the command line's
log handler uses it. Library code does not rely on it (an application's handlers are its
own): server values are cleaned where they enter a log line, and ``MCPError`` messages are
cleaned by ``MCPError.__str__``.
"""

from __future__ import annotations

import logging
import unicodedata
from typing import Any

__all__ = ["DEFAULT_LIMIT", "CleanFormatter", "clean", "clean_lines", "inert_json", "is_clean"]

#: How many characters ``clean`` keeps by default.
DEFAULT_LIMIT = 2000
#: The Unicode categories shown as escapes: controls, format characters, surrogates, and the
#: line and paragraph separators.
_ESCAPED = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _shown(char: str) -> str:
    if char.isprintable() or unicodedata.category(char) not in _ESCAPED:
        return char
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def clean(text: Any, limit: int | None = DEFAULT_LIMIT) -> str:
    """``text`` (``str()`` of it if it is not a string) as one inert line, at most ``limit`` long.

    See the module docstring for what is escaped. ``limit=None`` keeps the whole text.
    """
    shown: str = text if isinstance(text, str) else f"{text}"
    cut = limit is not None and len(shown) > limit
    if cut:
        shown = shown[:limit]  # each character is shown as one or more: no need to escape more
    if not shown.isprintable():  # the fast path: nothing printable needs escaping
        shown = "".join(map(_shown, shown))
    if limit is not None and len(shown) > limit:
        shown, cut = shown[:limit], True
    return shown + "..." if cut else shown


def clean_lines(text: Any, limit: int | None = DEFAULT_LIMIT) -> list[str]:
    """``text`` split at its line breaks, tabs expanded, each line ``clean``ed (``limit`` each)."""
    text = text if isinstance(text, str) else f"{text}"
    return [clean(line.expandtabs(), limit) for line in text.splitlines()]


def _json_escaped(char: str) -> str:
    if char == "\n" or char.isprintable() or unicodedata.category(char) not in _ESCAPED:
        return char
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def inert_json(text: str) -> str:
    """JSON ``text`` with every character ``clean`` escapes written as a JSON escape (same value)."""
    return text if text.replace("\n", "").isprintable() else "".join(map(_json_escaped, text))


def is_clean(text: str) -> bool:
    """Whether ``clean`` would leave ``text`` as it is (no limit): nothing in it to escape."""
    return text.isprintable() or clean(text, None) == text


class CleanFormatter(logging.Formatter):
    """A ``logging.Formatter`` that cleans each record's message (tracebacks stay multi-line)."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - the logging API
        record.message = clean(record.message, None)
        return super().formatMessage(record)
