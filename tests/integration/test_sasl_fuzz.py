"""A fuzzed SASL exchange against the real daemon on a SASL_PLAINTEXT listener: seeded, bounded in count and
time. Each connection is a plausible exchange with one lie somewhere — a mutated SaslHandshake or
SaslAuthenticate frame (flipped bytes, huge counts, cuts), a SCRAM or PLAIN token that is malformed,
enormous, not UTF-8, full of NULs or with a forged proof, raw tokens after a v0 handshake, or garbage in place
of a request. Every connection must be answered or closed within a bound (no hang), the daemon must stay up
and log no handler failure, and a real client must log in and be served throughout."""

from __future__ import annotations

import base64
import os
import random
import socket
import struct
import time

from groupcoord.coordinator.security.sasl_client import ScramClient
from tests.support.daemon import Daemon
from tests.support.sasl import sasl_client
from tests.support.wire import WireClient
from tests.support.wire_fuzz import mutate, request_frame

CONNECTIONS = 1000
TIME_LIMIT_S = 40
ANSWER_BOUND_S = 4.0
SEED = 23
METADATA = {"topics": None, "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}


def scram_tokens(rng: random.Random) -> list[bytes]:
    nonce = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(rng.randint(0, 40)))
    user = rng.choice(["alice", "nobody", "", "a=2Cb", "a=ZZ", "x" * 300, "\u00e9l\u00e8ve"])
    choices = [
        f"n,,n={user},r={nonce}".encode(),
        f"n,a={user},n={user},r={nonce}".encode(),
        f"n,,m=ext,n={user},r={nonce},tokenauth=true".encode(),
        f"p=tls-server-end-point,,n={user},r={nonce}".encode(),
        b"n,,n=alice,r=" + os.urandom(rng.randint(0, 64)),
        b"n,,n=alice,r=" + b"z" * rng.choice((1000, 100_000)),
        os.urandom(rng.randint(0, 200)),
        b"",
        b"\x00" * rng.randint(1, 50),
    ]
    first = rng.choice(choices)
    final = rng.choice([
        f"c=biws,r={nonce},p=".encode() + base64.b64encode(os.urandom(rng.choice((0, 32, 64, 65)))),
        f"c=biws,r={nonce}".encode(),
        f"c=!!!!,r={nonce},p=====".encode(),
        os.urandom(rng.randint(0, 300)),
    ])
    return [first, final]


def plain_tokens(rng: random.Random) -> list[bytes]:
    return [rng.choice([b"\x00alice\x00", b"\x00\x00", b"a\x00b\x00c\x00d", os.urandom(rng.randint(0, 300)),
                        b"\x00carol\x00" + b"p" * 70_000, "\x00\u00e9\x00\u00e9".encode()])]


def frame(api: int, version: int, body: dict, client: WireClient) -> bytes:
    return client.encode(api, version, body)[1]


def one_connection(bootstrap: str, rng: random.Random) -> str:
    """Plays one exchange; returns how it ended: 'answered', 'closed' — or 'hang' when the broker neither
    answered nor closed within ANSWER_BOUND_S."""
    host, port = bootstrap.rsplit(":", 1)
    client = WireClient(bootstrap, timeout=ANSWER_BOUND_S)
    try:
        mechanism = rng.choice(["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN", "GSSAPI", "", "x" * 1000])
        handshake_version = rng.choice((0, 1, 1, 1))
        frames: list[bytes] = []
        if rng.random() < 0.3:
            frames.append(frame(18, 3, {"client_software_name": "fuzz", "client_software_version": "1"}, client))
        hs = frame(17, handshake_version, {"mechanism": mechanism}, client)
        frames.append(mutate(hs, rng) if rng.random() < 0.2 else hs)
        tokens = (plain_tokens if mechanism == "PLAIN" else scram_tokens)(rng)
        for token in tokens:
            if handshake_version == 0:
                frames.append(struct.pack(">i", len(token)) + token)
                continue
            auth = frame(36, rng.choice((0, 1, 2)), {"auth_bytes": token}, client)
            frames.append(mutate(auth, rng) if rng.random() < 0.25 else auth)
        if rng.random() < 0.1:
            api, version = rng.choice(((3, 12), (10, 3), (11, 5), (36, 2), (17, 1), (18, 3)))
            frames.insert(rng.randrange(len(frames) + 1), request_frame(api, version, rng))
        for data in frames:
            client.send_raw(data)
            try:
                size = struct.unpack(">i", client._read_exact(4))[0]
                client._read_exact(size)
            except socket.timeout:
                return "hang"
            except (ConnectionError, OSError):
                return "closed"
        return "answered"
    except (ConnectionError, BrokenPipeError):
        return "closed"
    finally:
        client.close()


def test_a_fuzzed_sasl_exchange_leaves_the_daemon_serving(tmp_path):
    daemon = Daemon(tmp_path / "data", listeners="SASL_PLAINTEXT://127.0.0.1:0",
                    sasl_enabled_mechanisms="SCRAM-SHA-512,SCRAM-SHA-256,PLAIN", fsync="never",
                    connection_failed_authentication_delay_ms="0", authentication_timeout_ms="1000",
                    override=['listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.'
                              'plain.PlainLoginModule required user_carol="carol-secret";']).start()
    try:
        bootstrap = daemon.bootstrap_servers
        # a SCRAM user, made over the wire by the PLAIN user (PLAIN users come from the JAAS line)
        with sasl_client(bootstrap, "PLAIN", "carol", "carol-secret") as carol:
            scram = ScramClient("SCRAM-SHA-512", "alice", "alice-secret")
            salt = b"fuzz-salt"
            carol.request(51, 0, {"deletions": [], "upsertions": [{
                "name": "alice", "mechanism": 2, "iterations": 4096, "salt": salt,
                "salted_password": scram.scram.salted_password("alice-secret", salt, 4096)}]})
        rng = random.Random(SEED)
        outcomes: dict[str, int] = {}
        began = time.monotonic()
        done = 0
        while done < CONNECTIONS and time.monotonic() - began < TIME_LIMIT_S:
            outcome = one_connection(bootstrap, rng)
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            done += 1
            if done % 300 == 0:
                assert daemon.proc.poll() is None, "\n".join(daemon.output[-30:])
                with sasl_client(bootstrap, "SCRAM-SHA-512", "alice", "alice-secret") as good:
                    good.request(3, 12, METADATA)
        assert daemon.proc.poll() is None, "\n".join(daemon.output[-30:])
        print(f"fuzzed SASL connections: {done} in {time.monotonic() - began:.1f} s: {outcomes}")
        assert done >= 500, outcomes  # bounded by time on a busy machine, but a real amount of fuzzing
        assert outcomes.get("hang", 0) == 0, outcomes
        assert outcomes.get("closed", 0) > done // 2, outcomes  # lies end in a closed connection
        with sasl_client(bootstrap, "SCRAM-SHA-512", "alice", "alice-secret") as good:
            good.request(3, 12, METADATA)
        log = "\n".join(daemon.output)
        assert "handler failed" not in log and "Traceback" not in log
        assert "alice-secret" not in log and "carol-secret" not in log  # secrets are never logged
    finally:
        daemon.kill()
