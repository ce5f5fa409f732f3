"""TLS listeners against an embedded broker: the mutual-TLS principal reaches the handlers, and every
mismatch — a plaintext client on a TLS port, a TLS client on a plaintext port, a handshake that stalls, an
old TLS version, a certificate no mapping rule accepts — closes that connection with one log line, in
bounded time, while the broker keeps serving."""

from __future__ import annotations

import socket
import ssl
import time

import pytest

from groupcoord.coordinator.broker import run_in_thread
from groupcoord.protocol.api_keys import ApiKey
from tests.support.certs import make_pki
from tests.support.wire import WireClient

FIND = {"key": "g", "key_type": 0}


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"), {"alice": ("alice", "eng"), "mallory": ("mallory", "ops")})


@pytest.fixture(scope="module")
def broker(pki):
    with run_in_thread(listeners="SSL://127.0.0.1:0,PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
                       ssl_keystore_location=str(pki.broker.combined), ssl_truststore_location=str(pki.ca),
                       override=["listener.name.ssl.ssl.client.auth=required"],
                       ssl_principal_mapping_rules="RULE:^CN=([^,]*),OU=eng,.*$/$1/U", authentication_timeout_ms=1000) as b:
        yield b


class TlsWire(WireClient):
    def __init__(self, bootstrap: str, context: ssl.SSLContext) -> None:
        host, _, port = bootstrap.rpartition(":")
        raw = socket.create_connection((host, int(port)), timeout=10)
        self.sock = context.wrap_socket(raw, server_hostname=host)
        self._correlation = 0


def client_context(pki, who: str | None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki.ca))
    if who is not None:
        context.load_cert_chain(str(pki.clients[who].cert), str(pki.clients[who].key))
    return context


def eof_within(sock, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, ssl.SSLError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def test_the_mutual_tls_principal_is_the_mapped_certificate_subject(broker, pki):
    seen = []
    original = broker.dispatcher._handlers[ApiKey.FIND_COORDINATOR]
    broker.dispatcher._handlers[ApiKey.FIND_COORDINATOR] = lambda ctx, req: seen.append(
        (str(ctx.principal), ctx.listener)) or original(ctx, req)
    try:
        with TlsWire(broker.bootstrap_for("SSL"), client_context(pki, "alice")) as client:
            answer = client.request(ApiKey.FIND_COORDINATOR, 3, FIND)
            assert f"{answer.host}:{answer.port}" == broker.bootstrap_for("SSL")
        with TlsWire(broker.bootstrap_for("SASL_SSL"), client_context(pki, None)) as client:
            versions = client.request(ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
            assert versions.error_code == 0  # TLS without a client certificate, SASL next
    finally:
        broker.dispatcher._handlers[ApiKey.FIND_COORDINATOR] = original
    assert seen == [("User:ALICE", "SSL")]


def test_a_certificate_no_rule_maps_is_closed(broker, pki):
    with TlsWire(broker.bootstrap_for("SSL"), client_context(pki, "mallory")) as client:
        client.send_raw(client.encode(ApiKey.FIND_COORDINATOR, 3, FIND)[1])
        assert eof_within(client.sock, 5)


def test_a_client_without_a_certificate_is_refused_where_one_is_required(broker, pki):
    try:
        with TlsWire(broker.bootstrap_for("SSL"), client_context(pki, None)) as client:
            client.send_raw(client.encode(ApiKey.FIND_COORDINATOR, 3, FIND)[1])
            assert eof_within(client.sock, 5)
    except (ssl.SSLError, ConnectionResetError):
        pass  # TLS 1.2 refuses during the handshake itself


def test_a_plaintext_client_on_a_tls_port_is_closed_in_bounded_time(broker, capsys):
    began = time.monotonic()
    with WireClient(broker.bootstrap_for("SSL")) as client:
        client.send_raw(client.encode(ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})[1])
        assert eof_within(client.sock, 5)
    assert time.monotonic() - began < 5


def test_a_tls_client_on_a_plaintext_port_is_closed(broker, pki):
    raw = socket.create_connection(broker.bootstrap_for("PLAINTEXT").rsplit(":", 1), timeout=5)
    with pytest.raises((ssl.SSLError, ConnectionResetError, socket.timeout, OSError)):
        client_context(pki, "alice").wrap_socket(raw, server_hostname="127.0.0.1")
    raw.close()


def test_a_stalled_tls_handshake_is_dropped_after_the_authentication_timeout(broker):
    began = time.monotonic()
    with socket.create_connection(broker.bootstrap_for("SSL").rsplit(":", 1), timeout=10) as sock:
        assert eof_within(sock, 8)  # sends nothing at all: no ClientHello
    assert time.monotonic() - began < 6


def test_tls_before_1_2_is_refused(broker, pki):
    context = client_context(pki, "alice")
    context.minimum_version = ssl.TLSVersion.TLSv1
    context.maximum_version = ssl.TLSVersion.TLSv1_1
    context.set_ciphers("ALL:@SECLEVEL=0")
    with pytest.raises((ssl.SSLError, ConnectionResetError, OSError)):
        TlsWire(broker.bootstrap_for("SSL"), context)


def test_the_broker_still_serves_after_all_that(broker, pki):
    """Counted on both sides: this test makes its own refused handshake (a certificate no rule maps) rather than
    relying on the tests before it, and waits for the count, since the broker's thread counts a handshake it
    refuses after the client may already have seen the close."""
    with TlsWire(broker.bootstrap_for("SSL"), client_context(pki, "mallory")) as refused:
        refused.send_raw(refused.encode(ApiKey.FIND_COORDINATOR, 3, FIND)[1])
        assert eof_within(refused.sock, 5)
    with TlsWire(broker.bootstrap_for("SSL"), client_context(pki, "alice")) as client:
        assert client.request(ApiKey.FIND_COORDINATOR, 3, FIND).error_code == 0
    wanted = [f'groupcoord_authentications_total{{listener="SSL",mechanism="SSL",result="{result}"}}'
              for result in ("success", "failure")]
    deadline = time.monotonic() + 10
    while True:
        text = broker.metrics.exposition().decode()
        missing = [line for line in wanted if line not in text]
        if not missing or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not missing, f"not in the metrics after 10 s: {missing}"
