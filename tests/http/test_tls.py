"""Streamable HTTP over TLS, against an HTTPS server on 127.0.0.1 with a self-signed certificate.

The transport's urllib3 classes (sockets handed to the exchange, one write per small request)
and the end-of-stream check have TLS variants: a TLS socket cannot peek, so an end that is not
in the reader's buffer yet goes to a stream thread. The client trusts the certificate through
``REQUESTS_CA_BUNDLE``, as a user with a private CA would.
"""

from __future__ import annotations

import datetime
import functools
import ipaddress
import ssl
import threading
import time

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from mcpclient import Client, ClientClosedError, ConnectionClosed, StreamableHTTPTransport, TransportError

from ..faults.ending_http import EndingServer
from ..helpers import RELEASED_WITHIN, BackgroundCall


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1: (certificate path, key path)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ))
    return str(cert_path), str(key_path)


@pytest.fixture
def https(certificate, monkeypatch, ending_servers):
    """A factory of HTTPS ``EndingServer``s the client trusts; stopped after the test."""
    cert_path, key_path = certificate
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", cert_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    return functools.partial(ending_servers, tls=context)


def connect(server: EndingServer) -> Client:
    client = Client(StreamableHTTPTransport(server.url), timeout=10, protocol="legacy")
    client.initialize()
    return client


@pytest.mark.parametrize("reply", ["json", "sse"])
def test_calls_over_tls_keep_their_connection(https, reply):
    server = https(reply=reply)
    assert server.url.startswith("https://")
    with connect(server) as client:
        assert client.call_tool("work", {"text": "warm"}).text == "warm"
        accepted = server.accepted  # (the server closes the connection of the GET it refuses)
        for n in range(5):
            assert client.call_tool("work", {"text": f"tls {n}"}).text == f"tls {n}"
            assert client.call_tool("work", {"mode": "after_reply", "after": "end", "text": f"e{n}"}).text == f"e{n}"
        assert server.accepted == accepted, "a TLS connection was not reused"


@pytest.mark.parametrize("after", ["late", "split"])
def test_an_sse_stream_open_after_its_reply_frees_the_caller_over_tls(https, after):
    server = https(reply="sse")
    logged = threading.Event()
    with connect(server) as client:
        client.set_log_handler(lambda level, data, logger: logged.set())
        start = time.monotonic()
        # The rest comes 6 s after the reply: a caller that waited for it is 3 s past the bound.
        out = client.call_tool("work", {"mode": "after_reply", "after": after, "seconds": 6.0, "key": after})
        assert out.text == "done"
        assert time.monotonic() - start < 3.0, "the caller waited for the end of the stream"
        if after == "late":
            assert logged.wait(6 + RELEASED_WITHIN), "the event after the reply was lost"
        assert client.call_tool("work", {"text": "next"}).text == "next"


@pytest.mark.parametrize("mode", ["hold", "progress"])
def test_close_releases_a_call_waiting_over_tls_at_once(https, mode):
    server = https(reply="sse")
    client = connect(server)
    call = BackgroundCall(client, "work", {"mode": mode, "key": mode})
    assert server.arrived[mode].wait(5)
    time.sleep(0.3)  # headers and a first event or two for "progress"
    start = time.monotonic()
    client.close()
    assert isinstance(call.released_within(start), (ClientClosedError, ConnectionClosed, TransportError))
    assert server.gone[mode].wait(RELEASED_WITHIN), "the TLS connection was left open"


def test_a_session_of_your_own_with_verify_trusts_the_server(https, certificate, monkeypatch):
    monkeypatch.delenv("REQUESTS_CA_BUNDLE")  # (requests lets these override session.verify)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    server = https(reply="sse")
    session = requests.Session()
    session.verify = certificate[0]
    with Client(StreamableHTTPTransport(server.url, session=session), timeout=10, protocol="legacy") as client:
        client.initialize()
        assert client.call_tool("work", {"text": "own session"}).text == "own session"
    with pytest.raises(TransportError, match="(?i)certificate"):  # and without it, refused
        with Client(StreamableHTTPTransport(server.url), timeout=10, protocol="legacy") as client:
            client.initialize()
