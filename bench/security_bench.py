"""What security costs, measured in one run against one daemon (server pinned to core 0, client to core 1):

- Heartbeat requests/s over TLS as a ratio of plaintext: the same pipelined heartbeats of already joined
  members, on a PLAINTEXT and an SSL listener of the same daemon, alternated round by round (medians);
- SCRAM-SHA-512 and SCRAM-SHA-256 authentications/s on a SASL_PLAINTEXT listener: concurrent clients each
  connecting, SaslHandshake, the two SaslAuthenticate round trips, and the server signature checked. The
  client caches its SaltedPassword per salt (RFC 5802 allows it), so what is measured is the broker's side.

    python -m bench.security_bench --seconds 3 --rounds 3        # quick run: about half a minute

Certificates are made on the spot with ``cryptography`` (the test extra).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from groupcoord.coordinator.security.credentials import CredentialStore
from groupcoord.coordinator.security.scram import (
    ClientFinal,
    ClientFirst,
    ScramMechanism,
    ServerFinal,
    ServerFirst,
    secure_random_string,
    xor,
)

from .loadgen import _LoadConnection
from .requests import encode, heartbeat
from .servers import stop

_LISTENER = re.compile(r"^listener (\S+) on (\S+):(\d+)$")
USER, PASSWORD = "bench", "bench-secret"


def _cores() -> tuple[list[int] | None, list[int] | None]:
    if not hasattr(os, "sched_getaffinity"):
        return None, None
    cores = sorted(os.sched_getaffinity(0))
    return ([cores[0]], cores[1:]) if len(cores) >= 2 else (None, None)


@contextmanager
def secured_daemon(workdir: Path, cores: list[int] | None) -> Iterator[dict[str, tuple[str, int]]]:
    from tests.support.certs import make_pki

    pki = make_pki(workdir / "pki")
    data = workdir / "data"
    store = CredentialStore.open(data)
    for mechanism in ScramMechanism:
        store.set_password(USER, mechanism, PASSWORD, 4096)
    cmd = [sys.executable, "-m", "groupcoord", "serve", "--data-dir", str(data), "--fsync", "never",
           "--metrics-port", "0", "--log-level", "error", "--log-format", "json",
           "--listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
           "--sasl-enabled-mechanisms", "SCRAM-SHA-512,SCRAM-SHA-256",
           "--ssl-keystore-location", str(pki.broker.combined), "--connection-failed-authentication-delay-ms", "0"]

    def pin() -> None:
        if cores and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, cores)

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, preexec_fn=pin)
    listeners: dict[str, tuple[str, int]] = {}
    ready = threading.Event()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            m = _LISTENER.match(line.strip())
            if m:
                listeners[m.group(1)] = (m.group(2), int(m.group(3)))
                if len(listeners) == 3:
                    ready.set()

    threading.Thread(target=pump, daemon=True).start()
    try:
        if not ready.wait(30):
            raise RuntimeError("the daemon did not start")
        listeners["_ca"] = (str(pki.ca), 0)
        yield listeners
    finally:
        stop(proc)


async def _heartbeat_load(address: tuple[str, int], frames: list[bytes], pipeline: int, seconds: float,
                          context: ssl.SSLContext | None) -> float:
    loop = asyncio.get_running_loop()
    latencies: list[float] = []
    budget = [10_000_000]
    t0 = time.perf_counter()
    deadline = t0 + seconds
    conns = []
    for frame in frames:
        done = loop.create_future()
        transport, _ = await loop.create_connection(
            lambda f=frame, d=done: _LoadConnection(f, pipeline, deadline, budget, latencies, d), address[0], address[1],
            ssl=context, server_hostname=address[0] if context else None)
        conns.append((transport, done))
    await asyncio.wait([d for _, d in conns], timeout=seconds + 30)
    elapsed = time.perf_counter() - t0
    for transport, _ in conns:
        transport.close()
    return len(latencies) / elapsed


class _CachedScram:
    """A SCRAM client that keeps SaltedPassword per (salt, iterations), as RFC 5802 lets a client do."""

    cache: dict[tuple[str, bytes, int], bytes] = {}

    def __init__(self, mechanism: ScramMechanism) -> None:
        self.m = mechanism
        self.first = ClientFirst(USER, secure_random_string())

    def final(self, server_first_bytes: bytes) -> bytes:
        sf = ServerFirst.parse(server_first_bytes)
        key = (self.m.mechanism_name, sf.salt, sf.iterations)
        salted = self.cache.get(key)
        if salted is None:
            salted = self.cache[key] = self.m.salted_password(PASSWORD, sf.salt, sf.iterations)
        cf = ClientFinal(b"n,,", sf.nonce)
        message = f"{self.first.bare},{server_first_bytes.decode()},{cf.without_proof}".encode()
        client_key = self.m.client_key(salted)
        self.signature = self.m.hmac(self.m.server_key(salted), message)
        return ClientFinal(cf.channel_binding, cf.nonce, xor(client_key, self.m.hmac(self.m.hash(client_key), message))).to_bytes()

    def verify(self, server_final: bytes) -> None:
        if ServerFinal.parse(server_final).signature != self.signature:
            raise RuntimeError("server signature mismatch")


async def _roundtrip(reader, writer, api: int, version: int, body: dict) -> object:
    from groupcoord.protocol.headers import parse_response_header
    from groupcoord.protocol.registry import is_flexible, response_reader

    writer.write(encode(api, version, body))
    size = int.from_bytes(await reader.readexactly(4), "big")
    frame = await reader.readexactly(size)
    _, pos = parse_response_header(frame, api, is_flexible(api, version))
    return response_reader(api, version)(frame, pos)[0]


async def _scram_logins(address: tuple[str, int], mechanism: ScramMechanism, clients: int, seconds: float) -> float:
    deadline = time.perf_counter() + seconds
    count = [0]

    async def one_client() -> None:
        while time.perf_counter() < deadline:
            reader, writer = await asyncio.open_connection(*address)
            try:
                hs = await _roundtrip(reader, writer, 17, 1, {"mechanism": mechanism.mechanism_name})
                assert hs.error_code == 0, hs
                scram = _CachedScram(mechanism)
                first = await _roundtrip(reader, writer, 36, 2, {"auth_bytes": scram.first.to_bytes()})
                assert first.error_code == 0, first
                last = await _roundtrip(reader, writer, 36, 2, {"auth_bytes": scram.final(bytes(first.auth_bytes))})
                assert last.error_code == 0, last
                scram.verify(bytes(last.auth_bytes))
                count[0] += 1
            finally:
                writer.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(one_client() for _ in range(clients)))
    return count[0] / (time.perf_counter() - t0)


def _run(coro):
    try:
        import uvloop

        return uvloop.run(coro)
    except ImportError:
        return asyncio.run(coro)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.security_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="alternated plaintext/TLS rounds (medians)")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--pipeline", type=int, default=8)
    parser.add_argument("--scram-clients", type=int, default=16)
    ns = parser.parse_args(argv)
    server_cores, client_cores = _cores()
    if client_cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, client_cores)
    with tempfile.TemporaryDirectory(prefix="groupcoord-secbench-") as tmp, secured_daemon(Path(tmp), server_cores) as listeners:
        plain, tls = listeners["PLAINTEXT"], listeners["SSL"]
        context = ssl.create_default_context(cafile=listeners["_ca"][0])
        bootstrap = f"{plain[0]}:{plain[1]}"
        frames = [heartbeat(bootstrap, f"sec-{i}").frame for i in range(ns.connections)]
        plain_rates, tls_rates = [], []
        for _ in range(ns.rounds):
            plain_rates.append(_run(_heartbeat_load(plain, frames, ns.pipeline, ns.seconds, None)))
            tls_rates.append(_run(_heartbeat_load(tls, frames, ns.pipeline, ns.seconds, context)))
        p, t = statistics.median(plain_rates), statistics.median(tls_rates)
        print("rounds (req/s): plaintext " + ", ".join(f"{r:,.0f}" for r in plain_rates)
              + " | TLS " + ", ".join(f"{r:,.0f}" for r in tls_rates))
        print(f"Heartbeat   plaintext {p:>10,.0f} req/s   TLS {t:>10,.0f} req/s   TLS/plaintext = {t / p:.2f}"
              f"   ({ns.connections} conns x pipeline {ns.pipeline}, median of {ns.rounds} alternated rounds of {ns.seconds:g} s)")
        for mechanism in (ScramMechanism.SCRAM_SHA_512, ScramMechanism.SCRAM_SHA_256):
            rate = _run(_scram_logins(listeners["SASL_PLAINTEXT"], mechanism, ns.scram_clients, ns.seconds))
            print(f"{mechanism.mechanism_name:<13} {rate:>8,.0f} authentications/s   ({ns.scram_clients} concurrent clients, "
                  f"a new connection each, 4096 iterations)")


if __name__ == "__main__":
    main()
