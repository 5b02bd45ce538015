"""The redactor itself: every form, the longest first, bounded, thread-safe, results untouched."""

from __future__ import annotations

import base64
import threading
from urllib.parse import quote

from mcpclient._core.credentials import Credentials
from mcpclient._core.redact import MIN_SECRET, RECENT, REDACTED, Redactor


def test_a_secret_inside_the_base64_of_a_longer_text_is_found_at_every_alignment():
    redactor = Redactor()
    secret = "tok/abc+def=ghi-0123456789"
    redactor.add(secret)
    for prefix in ("", "x", "xy", "Authorization: Bearer "):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode((prefix + secret + "!").encode()).decode()
            redacted = redactor.redact(encoded)
            assert REDACTED in redacted
            # At most one character on each side carries a few bits of the secret.
            assert len(redacted.replace(REDACTED, "")) <= len(encode(prefix.encode())) + 4


def test_percent_encoded_forms_and_basic_parts_are_redacted():
    credentials = Credentials()
    pair = "alice:" + quote("pa:ss/word", safe="")
    credentials.header("Authorization", "Basic " + base64.b64encode(pair.encode()).decode())
    redactor = credentials.redactor
    text = f"{quote('pa:ss/word', safe='')} {quote('pa:ss/word', safe='').lower()} pa:ss/word alice:pa:ss/word"
    assert redactor.redact(text) == " ".join([REDACTED] * 4)


def test_the_longest_secret_goes_first():
    redactor = Redactor()
    redactor.add("abcdef", "abcdefghijkl")
    assert redactor.redact("abcdefghijkl") == REDACTED


def test_short_secrets_are_not_kept_and_recent_ones_are_bounded():
    redactor = Redactor()
    redactor.add("x" * (MIN_SECRET - 1))
    assert redactor.redact("x" * (MIN_SECRET - 1)) == "x" * (MIN_SECRET - 1)
    redactor.add("permanent-secret", permanent=True)
    tokens = [f"token-{i:04d}" for i in range(RECENT + 5)]
    for token in tokens:
        redactor.add(token)
    assert redactor.redact(tokens[0]) == tokens[0]  # the oldest were dropped
    assert redactor.redact(tokens[-1]) == REDACTED
    assert redactor.redact("permanent-secret") == REDACTED
    assert "token" not in repr(redactor) and "permanent" not in repr(redactor)


def test_adding_while_redacting_from_many_threads():
    redactor = Redactor()
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(200):
                token = f"token-{n}-{i:04d}"
                redactor.add(token)
                assert redactor.redact(f"<{token}>") == f"<{REDACTED}>"
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_error_replies_are_redacted_and_results_are_not():
    redactor = Redactor()
    redactor.add("the-token-123")
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "the-token-123", "data": ["the-token-123"]}}
    assert redactor.redact_message(error)["error"] == {"code": 1, "message": REDACTED, "data": [REDACTED]}
    result = {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "the-token-123"}]}}
    assert redactor.redact_message(result) is result  # the data the user asked for
    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "the-token-123"}}
    assert redactor.redact_message(log)["params"]["data"] == REDACTED
    assert redactor.redact_message(["the-token-123"]) == [REDACTED]  # malformed: shown in a warning
