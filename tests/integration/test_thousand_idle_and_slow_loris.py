"""1,000 idle and 1,000 slow-loris connections against the daemon do not lock out a new client (issue 17's
must-show, at that scale; tests/coordinator/server/test_connection_limits.py covers the rules at 50+50),
and max.connections.per.ip.overrides gives one address its own limit."""

from __future__ import annotations

import resource
import socket
import struct
import time

import pytest

from tests.support.daemon import Daemon
from tests.support.wire import WireClient

HALF_FRAME = struct.pack(">ihhi", 100, 18, 3, 1)  # an ApiVersions whose size promises bytes never sent


def answered_from(source: str, port: int) -> float:
    started = time.perf_counter()
    sock = socket.socket()
    sock.settimeout(5)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    client = WireClient.__new__(WireClient)
    client.sock, client._correlation = sock, 0
    with client:
        assert client.request(18, 3, {"client_software_name": "probe", "client_software_version": "1"}).error_code == 0
    return time.perf_counter() - started


def open_from(source: str, port: int) -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


@pytest.fixture
def descriptors():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 5000:
        pytest.skip(f"2,000 client sockets need ulimit -n >= 5000 (hard limit {hard})")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 5000), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_thousand_idle_and_a_thousand_slow_loris_connections(tmp_path, descriptors):
    daemon = Daemon(tmp_path, **{"max-connections": "2100", "max-connections-per-ip": "1800",
                                 "max-connections-per-ip-overrides": "127.0.0.3:3",
                                 "socket-request-read-timeout-ms": "3000", "connections-max-idle-ms": "4000"}).start()
    held: list[socket.socket] = []
    try:
        idle = [open_from("127.0.0.1", daemon.port) for _ in range(1000)]
        loris = [open_from("127.0.0.1", daemon.port) for _ in range(1000)]
        held = idle + loris
        for sock in loris:
            sock.sendall(HALF_FRAME)
        assert answered_from("127.0.0.2", daemon.port) < 1.0, "a new client is answered at once"
        # the override: 127.0.0.3 may hold 3 connections, the fourth is closed at accept
        three = [open_from("127.0.0.3", daemon.port) for _ in range(3)]
        fourth = open_from("127.0.0.3", daemon.port)
        fourth.settimeout(5)
        assert fourth.recv(1) == b""
        held += three + [fourth]
        # the deadlines free 127.0.0.1 again: slow-loris after 3 s, idle after 4 s
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if answered_from("127.0.0.1", daemon.port) < 1.0:
                    break
            except (ConnectionError, OSError):
                pass
            time.sleep(0.5)
        else:
            pytest.fail("127.0.0.1 was not served again after the deadlines closed its connections")
    finally:
        for sock in held:
            sock.close()
        daemon.kill()
