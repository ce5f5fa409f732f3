"""The SASL exchange itself, differentially: the same conversations with Kafka 4.3.1's SASL_PLAINTEXT listener
(SCRAM-SHA-512 and PLAIN, users made at format time) and with groupcoord's, compared step by step — the error
code of every answer, Kafka's error texts, and whether and when the connection closes.
"""

from __future__ import annotations

import os
import socket

import pytest

from groupcoord.coordinator.broker import run_in_thread
from groupcoord.coordinator.security.sasl_client import ScramClient
from groupcoord.coordinator.security.scram import ScramMechanism, b64
from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.framing import frame_parts
from tests.reference.fixtures import acquired_or_skip
from tests.reference.kafka_broker import KafkaBrokerConfig, KafkaSecurity, SharedKafkaBroker
from tests.support.wire import WireClient

pytestmark = [pytest.mark.reference, pytest.mark.timeout(300)]

MECHANISMS = ("SCRAM-SHA-512", "PLAIN")
SCRAM_USERS = (("SCRAM-SHA-512", "alice", "alice-secret"),)
PLAIN_USERS = (("carol", "carol-secret"),)
SECURITY = KafkaSecurity(mechanisms=MECHANISMS, scram_users=SCRAM_USERS, plain_users=PLAIN_USERS)
SHARED_SASL_BROKER = SharedKafkaBroker(KafkaBrokerConfig(security=SECURITY))
METADATA = {"topics": None, "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}
VERSIONS = {"client_software_name": "sasl-diff", "client_software_version": "1"}


@pytest.fixture(scope="module")
def kafka_sasl():
    with acquired_or_skip(SHARED_SASL_BROKER) as broker:
        yield broker.sasl_bootstrap_servers


@pytest.fixture(scope="module")
def groupcoord_sasl():
    users = " ".join(f'user_{u}="{p}"' for u, p in PLAIN_USERS)
    jaas = f"org.apache.kafka.common.security.plain.PlainLoginModule required {users};"
    with run_in_thread(listeners="SASL_PLAINTEXT://127.0.0.1:0", sasl_enabled_mechanisms=",".join(MECHANISMS),
                       override=[f"listener.name.sasl_plaintext.plain.sasl.jaas.config={jaas}"]) as broker:
        for mechanism, user, password in SCRAM_USERS:
            broker.credentials.set_password(user, ScramMechanism.by_name(mechanism), password, 4096)
        yield broker.bootstrap_servers


class Conversation:
    """One connection; every step appends what was observed (codes, texts, 'closed')."""

    def __init__(self, bootstrap: str) -> None:
        self.client = WireClient(bootstrap, timeout=10)
        self.seen: list[object] = []

    def ask(self, api: int, version: int, body: dict, *fields: str) -> object | None:
        try:
            answer = self.client.request(api, version, body)
        except (ConnectionError, OSError):
            self.seen.append("closed")
            return None
        self.seen.append((ApiKey(api).name, int(getattr(answer, "error_code", 0)), *(_plain(getattr(answer, f)) for f in fields)))
        return answer

    def raw(self, token: bytes) -> bytes | None:
        try:
            self.client.send_raw(frame_parts(token))
            answer = self.client.read_frame()
        except (ConnectionError, OSError):
            self.seen.append("closed")
            return None
        self.seen.append("raw token")
        return answer

    def closed_after(self) -> None:
        """Whether the broker closes the connection by itself (within 3 s), recorded as the last step."""
        self.client.sock.settimeout(3)
        try:
            self.seen.append("closed" if self.client.sock.recv(1) == b"" else "data")
        except (ConnectionResetError, BrokenPipeError):
            self.seen.append("closed")
        except socket.timeout:
            self.seen.append("open")
        self.client.close()


def _plain(value: object) -> object:
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return value


def scram_login(c: Conversation, user: str, password: str, forge_proof: bool = False) -> None:
    answer = c.ask(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-512"}, "mechanisms")
    if answer is None or answer.error_code:
        return
    scram = ScramClient("SCRAM-SHA-512", user, password)
    first = c.ask(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": scram.first()}, "error_message")
    if first is None or first.error_code:
        return
    if forge_proof:
        nonce = bytes(first.auth_bytes).split(b",")[0][2:].decode()
        final = f"c=biws,r={nonce},p={b64(os.urandom(64))}".encode()
    else:
        final = scram.respond(bytes(first.auth_bytes))
    last = c.ask(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": final}, "error_message")
    if last is not None and last.error_code == 0:
        scram.respond(bytes(last.auth_bytes))
        c.seen.append(("server signature verified", scram.complete))


def plain_login(c: Conversation, user: str, password: str) -> None:
    answer = c.ask(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
    if answer is not None and answer.error_code == 0:
        c.ask(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": f"\x00{user}\x00{password}".encode()}, "error_message")


def good_scram(c):
    c.ask(ApiKey.API_VERSIONS, 3, VERSIONS)
    scram_login(c, "alice", "alice-secret")
    c.ask(ApiKey.METADATA, 12, METADATA)


def bad_password(c):
    scram_login(c, "alice", "wrong-password")
    c.closed_after()


def forged_proof(c):
    scram_login(c, "alice", "x", forge_proof=True)
    c.closed_after()


def unknown_user(c):
    scram_login(c, "nobody", "whatever")
    c.closed_after()


def good_plain(c):
    plain_login(c, "carol", "carol-secret")
    c.ask(ApiKey.METADATA, 12, METADATA)


def bad_plain(c):
    plain_login(c, "carol", "wrong")
    c.closed_after()


def unknown_plain_user(c):
    plain_login(c, "nobody", "x")
    c.closed_after()


def unsupported_mechanism(c):
    c.ask(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "GSSAPI"}, "mechanisms")
    c.closed_after()


def unknown_mechanism_name(c):
    c.ask(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-1"}, "mechanisms")
    c.closed_after()


def metadata_before_authentication(c):
    c.client.send_raw(c.client.encode(ApiKey.METADATA, 12, METADATA)[1])
    c.closed_after()


def find_coordinator_before_authentication(c):
    c.ask(ApiKey.API_VERSIONS, 3, VERSIONS)
    c.client.send_raw(c.client.encode(ApiKey.FIND_COORDINATOR, 3, {"key": "g", "key_type": 0})[1])
    c.closed_after()


def authenticate_before_handshake(c):
    c.client.send_raw(c.client.encode(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": b"n,,n=alice,r=abc"})[1])
    c.closed_after()


def request_during_authentication(c):
    c.ask(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-512"})
    c.ask(ApiKey.FIND_COORDINATOR, 3, {"key": "g", "key_type": 0})
    c.closed_after()


def api_versions_twice(c):
    c.ask(ApiKey.API_VERSIONS, 3, VERSIONS)
    c.client.send_raw(c.client.encode(ApiKey.API_VERSIONS, 3, VERSIONS)[1])
    c.closed_after()


def authenticate_after_authentication(c):
    scram_login(c, "alice", "alice-secret")
    c.ask(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": b""}, "error_message")
    c.ask(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-512"}, "mechanisms")


def handshake_v0_raw_tokens(c):
    c.ask(ApiKey.SASL_HANDSHAKE, 0, {"mechanism": "SCRAM-SHA-512"}, "mechanisms")
    scram = ScramClient("SCRAM-SHA-512", "alice", "alice-secret")
    server_first = c.raw(scram.first())
    if server_first is not None:
        server_final = c.raw(scram.respond(server_first))
        if server_final is not None:
            scram.respond(server_final)
            c.seen.append(("server signature verified", scram.complete))
    c.ask(ApiKey.METADATA, 12, METADATA)


def handshake_v0_bad_password(c):
    c.ask(ApiKey.SASL_HANDSHAKE, 0, {"mechanism": "PLAIN"})
    c.raw(b"\x00carol\x00wrong")
    c.closed_after()


def malformed_scram_first_message(c):
    c.ask(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-512"})
    c.ask(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": b"y,,n=alice,r=abc"}, "error_message")
    c.closed_after()


def authzid_other_than_user(c):
    c.ask(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
    c.ask(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": b"admin\x00carol\x00carol-secret"}, "error_message")
    c.closed_after()


def authenticate_v0_and_v1(c):
    c.ask(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
    c.ask(ApiKey.SASL_AUTHENTICATE, 0, {"auth_bytes": b"\x00carol\x00carol-secret"}, "error_message")
    c.ask(ApiKey.METADATA, 12, METADATA)


def api_versions_too_new_then_retried(c):
    frame = c.client.encode(ApiKey.API_VERSIONS, 3, VERSIONS)[1].replace(b"\x00\x12\x00\x03", b"\x00\x12\x00\x63", 1)
    c.client.send_raw(frame)
    answer = c.client.read_frame()
    c.seen.append(("API_VERSIONS v99", int.from_bytes(answer[4:6], "big")))
    c.ask(ApiKey.API_VERSIONS, 3, VERSIONS)
    scram_login(c, "alice", "alice-secret")


def api_versions_invalid_software_then_retried(c):
    c.ask(ApiKey.API_VERSIONS, 3, {"client_software_name": "-bad name-", "client_software_version": "1"})
    c.ask(ApiKey.API_VERSIONS, 3, VERSIONS)
    scram_login(c, "alice", "alice-secret")


SCENARIOS = [api_versions_too_new_then_retried, api_versions_invalid_software_then_retried, good_scram, bad_password, forged_proof, unknown_user, good_plain, bad_plain, unknown_plain_user,
             unsupported_mechanism, unknown_mechanism_name, metadata_before_authentication,
             find_coordinator_before_authentication, authenticate_before_handshake, request_during_authentication,
             api_versions_twice, authenticate_after_authentication, handshake_v0_raw_tokens,
             handshake_v0_bad_password, malformed_scram_first_message, authzid_other_than_user,
             authenticate_v0_and_v1]


def observe(bootstrap: str, scenario) -> list[object]:
    c = Conversation(bootstrap)
    try:
        scenario(c)
    finally:
        c.client.close()
    return c.seen


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
def test_the_sasl_exchange_matches_kafka(kafka_sasl, groupcoord_sasl, scenario):
    kafka = observe(kafka_sasl, scenario)
    ours = observe(groupcoord_sasl, scenario)
    assert ours == kafka, f"\nkafka:      {kafka}\ngroupcoord: {ours}"


def _results(answer) -> list[tuple]:
    out = []
    for r in answer.results:
        infos = tuple((int(i.mechanism), int(i.iterations)) for i in getattr(r, "credential_infos", ()))
        out.append((r.user, int(r.error_code), r.error_message or None, infos))
    return sorted(out)


def scram_admin_transcript(bootstrap: str) -> list[object]:
    """Describe/AlterUserScramCredentials as an admin client uses them, every answer recorded; Kafka applies
    an alteration through its controller, so a read-back is retried briefly until it shows."""
    import time

    seen: list[object] = []
    salt = b"0123456789abcdef0123"
    scram = ScramMechanism.SCRAM_SHA_256
    salted = scram.salted_password("zed-secret", salt, 8192)

    def upsert(name, mechanism=1, iterations=8192):
        return {"name": name, "mechanism": mechanism, "iterations": iterations, "salt": salt, "salted_password": salted}

    def describe(client, users):
        return client.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0,
                              {"users": None if users is None else [{"name": u} for u in users]})

    def settled(client, users, want):
        deadline = time.monotonic() + 15
        while True:
            answer = describe(client, users)
            if want(answer) or time.monotonic() > deadline:
                return answer
            time.sleep(0.1)

    with WireClient(bootstrap) as client:
        from tests.support.sasl import sasl_login

        sasl_login(client, "SCRAM-SHA-512", "alice", "alice-secret")
        seen.append(_results(describe(client, None)))
        seen.append(_results(describe(client, ["nobody", "alice", "alice"])))
        bad = client.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, {"deletions": [{"name": "ghost", "mechanism": 1}],
                                                                     "upsertions": [upsert("few", iterations=1000),
                                                                                    upsert("many", iterations=20000),
                                                                                    upsert(""), upsert("mech", mechanism=0),
                                                                                    upsert("twice"), upsert("twice")]})
        seen.append(_results(bad))
        good = client.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, {"deletions": [], "upsertions": [upsert("zed")]})
        seen.append(_results(good))
        seen.append(_results(settled(client, ["zed"], lambda a: a.results[0].error_code == 0)))
        gone = client.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, {"upsertions": [], "deletions": [
            {"name": "zed", "mechanism": 1}]})
        seen.append(_results(gone))
        seen.append(_results(settled(client, ["zed"], lambda a: a.results[0].error_code != 0)))
    return seen


def test_scram_credential_administration_matches_kafka(kafka_sasl, groupcoord_sasl):
    kafka = scram_admin_transcript(kafka_sasl)
    ours = scram_admin_transcript(groupcoord_sasl)
    assert ours == kafka, f"\nkafka:      {kafka}\ngroupcoord: {ours}"
