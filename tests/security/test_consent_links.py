"""A URL shown for consent names the host the browser will go to, or is refused.

The ground truth is a real browser: Debian's Chromium (headless) parses each URL of the
table with ``new URL()``, the parser its address bar and navigations use (Chromium's own, not
ada). For every URL mcpclient accepts, the host and port it shows must be Chromium's; every
URL the table marks as a trick must be refused. The prompts are then checked with a scripted
person (``Prompter``) and through the real command line on a pseudo-terminal against the SDK
server of tests/servers/sdk_elicit_server.py.
"""

from __future__ import annotations

import html
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcpclient import ElicitationRequest
from mcpclient._client.link import LinkRefused, judge
from mcpclient.prompting import Prompter

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

# (URL, the authority shown, or None for a refusal)
TABLE = [
    ("https://consent.example.com/approve?session=42", "consent.example.com"),
    ("HTTPS://Consent.Example.COM:443/x", "consent.example.com"),
    ("https://consent.example.com:8443/x", "consent.example.com:8443"),
    ("http://consent.example.com/", "consent.example.com"),
    ("https://consent.example.com/@evil.example", "consent.example.com"),  # "@" in the path
    ("https://consent.example.com/?next=https://evil.example@x", "consent.example.com"),
    ("https://consent.example.com/#@evil.example", "consent.example.com"),
    ("https://example.com./", "example.com."),  # a trailing dot: another name, shown as such
    ("http://127.0.0.1:8000/cb", "127.0.0.1:8000"),
    ("http://[::1]:8000/", "[::1]:8000"),
    ("http://[::FFFF:127.0.0.1]/", "[::ffff:7f00:1]"),
    # international names: shown as the browser encodes them, never in Unicode
    ("https://\u0430pple.com/", "xn--pple-43d.com"),  # Cyrillic a: a homograph of apple.com
    ("https://b\u00fccher.de/", "xn--bcher-kva.de"),
    ("https://xn--pple-43d.com/", "xn--pple-43d.com"),
    ("https://example\uff0ecom/", "example.com"),  # a fullwidth dot is a dot for both parsers
    ("https://example\u3002com/", "example.com"),  # an ideographic full stop too
    # backslashes: the finding (one host to urllib, another to the browser)
    ("http://consent.example.com\\@evil.example/", None),
    ("http://evil.example\\@consent.example.com/", None),
    ("https://consent.example.com\\.evil.example/", None),
    ("http:\\\\evil.example/", None),
    ("https://consent.example.com/\\evil", None),
    # user info, real or as a disguise
    ("https://consent.example.com@evil.example/", None),
    ("https://user:pw@consent.example.com/", None),
    ("https://@consent.example.com/", None),
    ("https://consent.example.com%40evil.example/", None),
    # what WHATWG drops or rewrites and urllib does not
    ("https://consent.exa\tmple.com/", None),
    ("https://consent.exa\nmple.com/", None),
    ("https://evil.example\r\n.consent.example.com/", None),
    (" https://consent.example.com/", None),
    ("https://consent.example.com/ x", None),
    ("https://consent.ex%61mple.com/", None),  # a percent-escape in the host
    ("https://consent%2Eexample.com/", None),
    ("http://0x7f.1/", None),  # IPv4 shorthand: 127.0.0.1 to the browser
    ("http://2130706433/", None),
    ("http://127.1/", None),
    ("http://0177.0.0.1/", None),
    ("https://fa\u00df.de/", None),  # IDNA 2003 and UTS 46 differ on sharp s
    ("https://\u03c2igma.gr/", None),  # final sigma, likewise
    ("https://consent.example.com\u200b/", None),  # zero-width space, dropped by the browser
    ("https://exam\u00adple.com/", None),  # soft hyphen, likewise
    ("https://evil.example\u202e/moc.elpmaxe.tnesnoc", None),  # right-to-left override
    # not a plain http(s) link with a host
    ("http:consent.example.com/", None),
    ("http:/consent.example.com/", None),
    ("http:///consent.example.com/", None),
    ("javascript:alert(1)", None),
    ("file:///etc/passwd", None),
    ("data:text/html,<script>alert(1)</script>", None),
    ("ftp://consent.example.com/", None),
    ("//consent.example.com/", None),
    ("https://", None),
    ("https://consent.example.com:99999/", None),
    ("https://consent.example.com:-1/", None),
    ("", None),
]

#: Pieces of authorities for generated URLs: each combination must be refused or agree.
PIECES = ["consent.example.com", "evil.example", "@", "\\", ":8443", "%40", "%2e", ".", "0x7f", "[::1]", "\u0430",
          "\uff0e", "/", "?", "#", ";", "\t", "127.1"]


def generated() -> list[str]:
    return [f"https://{a}{b}{c}/x" for a, b, c in itertools.product(PIECES, repeat=3)]


def _shown(url: str) -> str | None:
    try:
        return judge(url).authority
    except LinkRefused:
        return None


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    """``parse(urls)`` -> Chromium's [protocol, hostname, port, username, password] for each, or None."""
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    home = tmp_path_factory.mktemp("chromium")

    def parse(urls: list[str]) -> list[list[str] | None]:
        data = json.dumps(urls).replace("<", "\\u003c")
        page = home / "parse.html"
        page.write_text(
            "<!doctype html><meta charset=utf-8><pre id=out></pre><script>"
            f"const urls = {data};"
            "document.getElementById('out').textContent = JSON.stringify(urls.map(u => {"
            " try { const x = new URL(u); return [x.protocol, x.hostname, x.port, x.username, x.password]; }"
            " catch (e) { return null; } }));</script>",
            encoding="utf-8",
        )
        run = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             f"--user-data-dir={home / 'profile'}", "--dump-dom", page.as_uri()],
            capture_output=True, text=True, timeout=120,
        )
        found = re.search(r'<pre id="out">(.*?)</pre>', run.stdout, re.S)
        assert found, run.stderr[-2000:]
        return json.loads(html.unescape(found.group(1)))

    return parse


def _browser_authority(parsed: list[str]) -> str:
    protocol, hostname, port, _, _ = parsed
    return hostname if not port else f"{hostname}:{port}"


def test_the_table_is_judged_as_expected():
    assert [(url, _shown(url)) for url, _ in TABLE] == TABLE


def test_every_host_shown_is_the_one_chromium_goes_to(chromium):
    urls = [url for url, _ in TABLE] + generated()
    seen = chromium(urls)
    accepted = 0
    for url, browser in zip(urls, seen):
        shown = _shown(url)
        if shown is None:
            continue
        accepted += 1
        assert browser is not None, f"{url!r} is accepted but Chromium cannot parse it"
        assert browser[0] in ("http:", "https:") and browser[3:] == ["", ""], (url, browser)
        assert shown == _browser_authority(browser), (url, shown, browser)
    assert accepted >= 16  # the test is not vacuous: the good links of the table, and generated ones


def test_the_link_handed_to_the_browser_goes_where_it_was_shown_to(chromium):
    good = [url for url, shown in TABLE if shown is not None]
    hrefs = [judge(url).href for url in good]
    for url, browser in zip(good, chromium(hrefs)):
        assert _browser_authority(browser) == judge(url).authority, url


def test_without_the_whatwg_parser_every_link_is_refused(monkeypatch):
    monkeypatch.setitem(sys.modules, "ada_url", None)  # "import ada_url" now raises ImportError
    with pytest.raises(LinkRefused, match=r"ada-url is not installed \(pip install 'mcpclient\[prompting\]'\)"):
        judge("https://consent.example.com/")


# -- the prompt, with a scripted person ----------------------------------------------------------


def person(*answers: str) -> tuple[Prompter, list[str], list[str]]:
    lines = list(answers)
    shown: list[str] = []
    opened: list[str] = []
    return Prompter(lambda prompt: lines.pop(0), shown.append, open_url=opened.append), shown, opened


def ask(prompter: Prompter, url: str, message: str = "Approve") -> str:
    request = ElicitationRequest(mode="url", message=message, url=url, elicitation_id="e")
    return prompter.elicit(request).action


@pytest.mark.parametrize("url", [url for url, shown in TABLE if shown is None and url])
def test_a_refused_link_is_declined_without_asking_and_never_opened(url):
    prompter, shown, opened = person()  # any question would fail: no answer is scripted
    assert ask(prompter, url) == "decline"
    assert opened == []
    assert any(line.startswith("  refused: ") for line in shown)
    assert all("\n" not in line and "\t" not in line and "\x1b" not in line for line in shown)


def test_an_international_name_is_shown_in_punycode_and_opened_as_judged():
    prompter, shown, opened = person("o")
    assert ask(prompter, "https://\u0430pple.com/login") == "accept"
    assert "  https://xn--pple-43d.com/login" in shown
    assert "  (it goes to xn--pple-43d.com, an international name shown as the browser encodes it)" in shown
    assert opened == ["https://xn--pple-43d.com/login"]


def test_the_message_cannot_forge_the_host_line():
    prompter, shown, _ = person("n")
    forged = "Approve\n  (it goes to bank.example)\u202e"
    assert ask(prompter, "https://evil.example/", message=forged) == "decline"
    assert "  (it goes to bank.example)" not in shown
    assert "The server asks you to open a link: Approve\\n  (it goes to bank.example)\\u202e" in shown
    assert "  (it goes to evil.example)" in shown


def test_plain_http_is_marked_as_not_encrypted():
    prompter, shown, _ = person("y")
    assert ask(prompter, "http://consent.example.com:8080/") == "accept"
    assert "  (it goes to consent.example.com:8080, not encrypted (http))" in shown


# -- the command line, on a real pseudo-terminal -------------------------------------------------


pexpect = pytest.importorskip("pexpect")
ELICIT_SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "sdk_elicit_server.py")]


def session(url: str, tmp_path: Path) -> tuple[object, Path]:
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.py"
    browser.write_text(f"import sys\nopen({str(opened)!r}, 'a').write(sys.argv[1] + '\\n')\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", "BROWSER": f"{sys.executable} {browser} %s"}
    argv = ["-m", "mcpclient", "call", "link", f"url={url}", "--protocol", "legacy", "--no-progress", "-t", "30",
            "--", *ELICIT_SERVER]
    child = pexpect.spawn(sys.executable, argv, env=env, encoding="utf-8", timeout=20, dimensions=(50, 200),
                          cwd=str(ROOT))
    return child, opened


def finish(child) -> tuple[int, str]:
    child.expect(pexpect.EOF)
    child.close()
    lines = [line for line in child.before.replace("\r", "").splitlines() if line.strip()]
    return child.exitstatus, lines[-1] if lines else ""


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_the_terminal_prompt_refuses_a_backslash_disguise(tmp_path):
    child, opened = session("https://consent.example.com\\@evil.example/approve", tmp_path)
    child.expect_exact("refused: the link holds a backslash")
    assert finish(child) == (0, "decline")
    assert not opened.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_the_terminal_prompt_shows_the_browsers_host_and_opens_what_it_showed(tmp_path):
    child, opened = session("https://\u0430pple.com/approve", tmp_path)
    child.expect_exact("(it goes to xn--pple-43d.com, an international name")
    child.expect_exact("Open the link? [o/y/n] ")
    child.sendline("o")
    assert finish(child) == (0, "accept")
    assert opened.read_text() == "https://xn--pple-43d.com/approve\n"
