"""A hostile frame costs its sender the connection and nobody else anything.

The frames below each aborted the whole daemon once (kio's native reader sized an array from the count
on the wire). Against the real daemon: the sender's connection closes, the process stays up, and a
client that was already connected keeps being answered.
"""

import random
import socket

import pytest

from tests.support.daemon import Daemon
from tests.support.wire import WireClient
from tests.support.wire_fuzz import mutate, request_frame

KILLERS = [
    "0000001c000a0004000101f700016600c5e1f2db802f29ce65a317fbb4ef14a5",  # FindCoordinator v4
    "000000110003000c0000000700017800ffffffff0f",  # Metadata v12
]


def _closed_by_server(sock: socket.socket) -> bool:
    sock.settimeout(10)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


@pytest.fixture
def daemon(tmp_path):
    d = Daemon(tmp_path / "data").start()
    yield d
    d.kill()


@pytest.mark.parametrize("frame_hex", KILLERS)
def test_a_frame_that_once_aborted_the_broker_closes_only_its_connection(daemon, frame_hex):
    with WireClient(daemon.bootstrap_servers) as bystander:
        bystander.request(18, 3, {"client_software_name": "b", "client_software_version": "1"})
        attacker = socket.create_connection(("127.0.0.1", daemon.port))
        attacker.sendall(bytes.fromhex(frame_hex))
        assert _closed_by_server(attacker)
        attacker.close()
        assert daemon.proc.poll() is None
        answer = bystander.request(18, 3, {"client_software_name": "b", "client_software_version": "1"})
        assert answer.error_code == 0


def test_a_bounded_stream_of_mutated_frames_leaves_the_daemon_serving(daemon):
    """2,000 mutated frames over every API the daemon serves (a quick slice; `make fuzz` runs more)."""
    rng = random.Random(17)
    with WireClient(daemon.bootstrap_servers) as probe:
        served = probe.request(18, 3, {"client_software_name": "p", "client_software_version": "1"}).api_keys
        targets = [(k.api_key, v) for k in served for v in range(k.min_version, k.max_version + 1)]
        for i in range(2000):
            key, version = targets[i % len(targets)]
            sock = socket.create_connection(("127.0.0.1", daemon.port), timeout=10)
            try:
                sock.sendall(mutate(request_frame(key, version, rng), rng))
                sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            finally:
                sock.close()
            if i % 250 == 0:
                assert daemon.proc.poll() is None, f"daemon died after {i} frames"
        assert daemon.proc.poll() is None
        assert probe.request(18, 3, {"client_software_name": "p", "client_software_version": "1"}).error_code == 0
