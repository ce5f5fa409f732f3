"""The SASL exchange on a SASL_PLAINTEXT listener, request by request, against an embedded broker.

Kafka's SaslServerAuthenticator is the reference for every step: what may come before authentication, the
error codes and texts, when the connection closes, re-authentication (KIP-368) and the bounded exchange.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time

import pytest

from groupcoord.coordinator.broker import run_in_thread
from groupcoord.coordinator.security.sasl_client import ScramClient
from groupcoord.coordinator.security.scram import ScramMechanism, b64
from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.framing import frame_parts
from tests.support.sasl import SaslRefused, sasl_client, sasl_login
from tests.support.wire import WireClient

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="admin-secret" user_admin="admin-secret" user_carol="carol-secret";')
METADATA = {"topics": None, "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}


@pytest.fixture(scope="module")
def broker():
    with run_in_thread(listeners="SASL_PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
                       sasl_enabled_mechanisms="SCRAM-SHA-512,SCRAM-SHA-256,PLAIN",
                       override=[f"listener.name.sasl_plaintext.plain.sasl.jaas.config={JAAS}"],
                       connection_failed_authentication_delay_ms=0, authentication_timeout_ms=1500) as b:
        for mechanism in ScramMechanism:
            b.credentials.set_password("alice", mechanism, "alice-secret", 4096)
        yield b


@pytest.fixture
def sasl(broker):
    return broker.bootstrap_for("SASL_PLAINTEXT")


def closed(client: WireClient, timeout: float = 5.0) -> bool:
    """True when the broker closed the connection (EOF or reset) within ``timeout``."""
    client.sock.settimeout(timeout)
    try:
        return client.sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


@pytest.mark.parametrize("mechanism,user,password", [
    ("SCRAM-SHA-512", "alice", "alice-secret"),
    ("SCRAM-SHA-256", "alice", "alice-secret"),
    ("PLAIN", "carol", "carol-secret"),    # a PlainLoginModule user_carol entry
    ("PLAIN", "alice", "alice-secret"),    # not in the JAAS config: checked against her SCRAM credential
])
def test_each_mechanism_authenticates_and_then_serves_requests(sasl, mechanism, user, password):
    with sasl_client(sasl, mechanism, user, password) as client:
        answer = client.request(ApiKey.METADATA, 12, METADATA)
        assert [(b.host, b.port) for b in answer.brokers] == [tuple([sasl.split(":")[0], int(sasl.split(":")[1])])]


def test_apiversions_may_come_first_and_lists_the_sasl_apis(sasl):
    with WireClient(sasl) as client:
        versions = client.request(ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
        served = {k.api_key: (k.min_version, k.max_version) for k in versions.api_keys}
        assert served[ApiKey.SASL_HANDSHAKE] == (0, 1) and served[ApiKey.SASL_AUTHENTICATE] == (0, 2)
        sasl_login(client, "SCRAM-SHA-512", "alice", "alice-secret")


@pytest.mark.parametrize("mechanism,user,password", [
    ("SCRAM-SHA-512", "alice", "wrong"), ("SCRAM-SHA-512", "nobody", "x"), ("PLAIN", "carol", "wrong"),
    ("PLAIN", "nobody", "x")])
def test_bad_credentials_get_sasl_authentication_failed_then_the_connection_closes(sasl, mechanism, user, password):
    with WireClient(sasl) as client:
        with pytest.raises(SaslRefused) as refused:
            sasl_login(client, mechanism, user, password)
        assert refused.value.error_code == ErrorCode.sasl_authentication_failed
        if mechanism.startswith("SCRAM"):  # the same text for a wrong password and an unknown user
            assert refused.value.message == ("Authentication failed during authentication due to invalid "
                                             f"credentials with SASL mechanism {mechanism}")
        else:
            assert refused.value.message == "Authentication failed: Invalid username or password"
        assert closed(client)


def test_an_unsupported_mechanism_gets_the_enabled_list_then_closes(broker, sasl):
    with WireClient(sasl) as client:
        answer = client.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "GSSAPI"})
        assert answer.error_code == ErrorCode.unsupported_sasl_mechanism
        assert list(answer.mechanisms) == ["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"]
        assert closed(client)
    text = broker.metrics.exposition().decode()
    assert 'mechanism="unsupported",result="failure"' in text and "GSSAPI" not in text  # no label a client chose


@pytest.mark.parametrize("api,version,body", [
    (ApiKey.METADATA, 12, METADATA),
    (ApiKey.FIND_COORDINATOR, 3, {"key": "g", "key_type": 0}),
    (ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": b"n,,n=alice,r=x"}),
])
def test_a_request_before_authentication_closes_the_connection_unanswered(sasl, api, version, body):
    with WireClient(sasl) as client:
        client.send_raw(client.encode(api, version, body)[1])
        assert closed(client)


def test_another_request_during_the_exchange_gets_illegal_sasl_state_then_close(sasl):
    with WireClient(sasl) as client:
        assert client.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-512"}).error_code == 0
        answer = client.request(ApiKey.FIND_COORDINATOR, 3, {"key": "g", "key_type": 0})
        assert answer.error_code == ErrorCode.illegal_sasl_state
        assert closed(client)


def test_sasl_apis_outside_an_exchange_get_illegal_sasl_state(broker, sasl):
    with WireClient(broker.bootstrap_for("PLAINTEXT")) as client:
        assert client.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}).error_code == ErrorCode.illegal_sasl_state
    with sasl_client(sasl, "SCRAM-SHA-512", "alice", "alice-secret") as client:  # no re-authentication here
        answer = client.request(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": b""})
        assert answer.error_code == ErrorCode.illegal_sasl_state
        assert answer.error_message == "SaslAuthenticate request received after successful authentication"


def test_handshake_v0_is_followed_by_raw_tokens(sasl):
    with WireClient(sasl) as client:
        assert client.request(ApiKey.SASL_HANDSHAKE, 0, {"mechanism": "SCRAM-SHA-512"}).error_code == 0
        scram = ScramClient("SCRAM-SHA-512", "alice", "alice-secret")
        client.send_raw(frame_parts(scram.first()))
        client.send_raw(frame_parts(scram.respond(client.read_frame())))
        scram.respond(client.read_frame())
        assert scram.complete
        client.request(ApiKey.METADATA, 12, METADATA)
    with WireClient(sasl) as client:  # a wrong password: no way to answer raw tokens with an error, only close
        client.request(ApiKey.SASL_HANDSHAKE, 0, {"mechanism": "PLAIN"})
        client.send_raw(frame_parts(b"\x00carol\x00nope"))
        assert closed(client)


def test_a_client_that_stops_mid_handshake_is_dropped_after_the_authentication_timeout(sasl):
    for step in ("nothing", "handshake", "first message"):
        with WireClient(sasl) as client:
            if step != "nothing":
                client.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-512"})
            if step == "first message":
                client.request(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": ScramClient("SCRAM-SHA-512", "alice", "x").first()})
            began = time.monotonic()
            assert closed(client, timeout=10), step
            assert time.monotonic() - began < 5, step


def test_a_huge_frame_before_authentication_is_refused(sasl):
    with WireClient(sasl) as client:
        client.send_raw(struct.pack(">i", 10 * 1024 * 1024))  # within socket.request.max.bytes, not the SASL limit
        assert closed(client)


def test_a_thousand_wrong_passwords_leave_the_broker_serving(broker, sasl):
    """Each attempt is a connection with a forged proof (the client's PBKDF2 is not what is tested); a good
    client keeps authenticating and being answered in between."""
    host, port = sasl.rsplit(":", 1)
    failures = 0
    for attempt in range(1000):
        with WireClient(sasl) as client:
            client.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-512"})
            first = ScramClient("SCRAM-SHA-512", "alice", "x")
            server_first = client.request(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": first.first()}).auth_bytes
            nonce = bytes(server_first).split(b",")[0][2:].decode()
            forged = f"c=biws,r={nonce},p={b64(os.urandom(64))}".encode()
            answer = client.request(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": forged})
            failures += answer.error_code == ErrorCode.sasl_authentication_failed
        if attempt % 250 == 0:
            with sasl_client(sasl, "SCRAM-SHA-512", "alice", "alice-secret") as good:
                good.request(ApiKey.METADATA, 12, METADATA)
    assert failures == 1000
    with sasl_client(sasl, "SCRAM-SHA-512", "alice", "alice-secret") as good:
        good.request(ApiKey.METADATA, 12, METADATA)
    text = broker.metrics.exposition().decode()
    line = [l for l in text.splitlines() if l.startswith("groupcoord_authentications_total{")
            and 'result="failure"' in l and 'mechanism="SCRAM-SHA-512"' in l]
    assert line and float(line[0].rsplit(" ", 1)[1]) >= 1000


def test_scram_credentials_are_described_and_altered_over_the_wire(sasl):
    scram = ScramMechanism.SCRAM_SHA_256
    salt = b"0123456789abcdef"
    with sasl_client(sasl, "SCRAM-SHA-512", "alice", "alice-secret") as client:
        altered = client.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, {"deletions": [], "upsertions": [
            {"name": "dave", "mechanism": 1, "iterations": 8192, "salt": salt,
             "salted_password": scram.salted_password("dave-secret", salt, 8192)},
            {"name": "erin", "mechanism": 1, "iterations": 100, "salt": salt, "salted_password": b"x" * 32}]})
        assert {(r.user, r.error_code) for r in altered.results} == {
            ("dave", ErrorCode.none), ("erin", ErrorCode.unacceptable_credential)}
        described = client.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, {"users": [{"name": "dave"}, {"name": "zed"}]})
        by_user = {r.user: r for r in described.results}
        assert [(c.mechanism, c.iterations) for c in by_user["dave"].credential_infos] == [(1, 8192)]
        assert by_user["zed"].error_code == ErrorCode.resource_not_found
    with sasl_client(sasl, "SCRAM-SHA-256", "dave", "dave-secret") as dave:
        dave.request(ApiKey.METADATA, 12, METADATA)
    with sasl_client(sasl, "SCRAM-SHA-512", "alice", "alice-secret") as client:
        gone = client.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, {"upsertions": [], "deletions": [
            {"name": "dave", "mechanism": 1}]})
        assert gone.results[0].error_code == ErrorCode.none
    with pytest.raises(SaslRefused):
        sasl_client(sasl, "SCRAM-SHA-256", "dave", "dave-secret")


def test_reauthentication_within_the_session_and_an_expired_session_closes():
    with run_in_thread(listeners="SASL_PLAINTEXT://127.0.0.1:0", sasl_enabled_mechanisms="SCRAM-SHA-512,PLAIN",
                       connections_max_reauth_ms=1500, connection_failed_authentication_delay_ms=0) as b:
        b.credentials.set_password("alice", ScramMechanism.SCRAM_SHA_512, "alice-secret", 4096)
        b.credentials.set_password("bob", ScramMechanism.SCRAM_SHA_512, "bob-secret", 4096)
        with sasl_client(b.bootstrap_servers, "SCRAM-SHA-512", "alice", "alice-secret") as client:
            assert client.session_lifetime_ms.total_seconds() == 1.5  # told to v1+ clients (KIP-368)
            time.sleep(0.8)
            sasl_login(client, "SCRAM-SHA-512", "alice", "alice-secret")  # re-authenticated: a new session
            time.sleep(0.8)
            client.request(ApiKey.METADATA, 12, METADATA)  # 1.6 s after the first login, within the second
            time.sleep(1.0)
            client.send_raw(client.encode(ApiKey.METADATA, 12, METADATA)[1])
            assert closed(client)  # expired: closed instead of answered
        with sasl_client(b.bootstrap_servers, "SCRAM-SHA-512", "alice", "alice-secret") as client:
            with pytest.raises(SaslRefused) as refused:  # another principal may not take over the connection
                sasl_login(client, "SCRAM-SHA-512", "bob", "bob-secret")
            assert refused.value.error_code == ErrorCode.sasl_authentication_failed
            assert "Cannot change principals" in (refused.value.message or "")
        with sasl_client(b.bootstrap_servers, "SCRAM-SHA-512", "alice", "alice-secret") as client:
            with pytest.raises(SaslRefused) as refused:  # nor another mechanism
                sasl_login(client, "PLAIN", "alice", "alice-secret")
            assert "not supported for re-authentication" in (refused.value.message or "")


def test_the_principal_and_listener_reach_the_handlers(broker, sasl):
    seen = []
    dispatcher = broker.dispatcher
    original = dispatcher._handlers[ApiKey.FIND_COORDINATOR]

    def spy(ctx, request):
        seen.append((str(ctx.principal), ctx.listener))
        return original(ctx, request)

    dispatcher._handlers[ApiKey.FIND_COORDINATOR] = spy
    try:
        with sasl_client(sasl, "SCRAM-SHA-512", "alice", "alice-secret") as client:
            answer = client.request(ApiKey.FIND_COORDINATOR, 3, {"key": "g", "key_type": 0})
            assert f"{answer.host}:{answer.port}" == sasl
        with WireClient(broker.bootstrap_for("PLAINTEXT")) as client:
            answer = client.request(ApiKey.FIND_COORDINATOR, 3, {"key": "g", "key_type": 0})
            assert f"{answer.host}:{answer.port}" == broker.bootstrap_for("PLAINTEXT")
    finally:
        dispatcher._handlers[ApiKey.FIND_COORDINATOR] = original
    assert seen == [("User:alice", "SASL_PLAINTEXT"), ("User:ANONYMOUS", "PLAINTEXT")]


def test_an_apiversions_version_too_new_may_be_retried_lower_before_the_handshake(sasl):
    with WireClient(sasl) as client:
        client.send_raw(client.encode(ApiKey.API_VERSIONS, 3, {"client_software_name": "t",
                                                               "client_software_version": "1"})[1].replace(
            b"\x00\x12\x00\x03", b"\x00\x12\x00\x63", 1))  # ApiVersions v99
        frame = client.read_frame()
        assert frame[4:6] == b"\x00\x23"  # UNSUPPORTED_VERSION (35), answered as v0
        client.request(ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
        sasl_login(client, "SCRAM-SHA-512", "alice", "alice-secret")
