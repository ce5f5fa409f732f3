"""The requests the load generator can send, pre-encoded, plus any set-up they need (a group to
heartbeat in, a topic to commit to). Encoded once: the generator measures the server, not the encoder."""

from __future__ import annotations

import functools
import socket
import struct
import time
from dataclasses import dataclass
from typing import Any, Callable

from groupcoord.protocol.build import build
from groupcoord.protocol.headers import encode_request_header, parse_response_header
from groupcoord.protocol.registry import encode_entity, is_flexible, request_class, response_reader


@dataclass(frozen=True)
class Prepared:
    name: str
    api_key: int
    version: int
    frame: bytes  # size prefix included; correlation id 0 (answers are matched by order)
    large_answers: bool = False  # answers of megabytes, counted in bytes and not buffered (loadgen)


def encode(api_key: int, version: int, body: dict[str, Any], correlation_id: int = 0) -> bytes:
    header = encode_request_header(api_key, version, correlation_id, "bench", is_flexible(api_key, version))
    payload = header + encode_entity(build(request_class(api_key, version), body))
    return struct.pack(">i", len(payload)) + payload


def call(sock: socket.socket, api_key: int, version: int, body: dict[str, Any]) -> Any:
    """One blocking round trip, for set-up steps."""
    sock.sendall(encode(api_key, version, body))
    size = struct.unpack(">i", _read(sock, 4))[0]
    frame = _read(sock, size)
    _, pos = parse_response_header(frame, api_key, is_flexible(api_key, version))
    return response_reader(api_key, version)(frame, pos)[0]


def _read(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("server closed the connection during set-up")
        buf += chunk
    return buf


def _connect(bootstrap: str) -> socket.socket:
    host, _, port = bootstrap.rpartition(":")
    return socket.create_connection((host, int(port)), timeout=30)


def api_versions(bootstrap: str, tag: str) -> Prepared:
    return Prepared("ApiVersions", 18, 3, encode(18, 3, {"client_software_name": "bench", "client_software_version": "1"}))


def metadata(bootstrap: str, tag: str) -> Prepared:
    return Prepared("Metadata", 3, 12, encode(3, 12, {"topics": None, "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}))


def find_coordinator(bootstrap: str, tag: str) -> Prepared:
    return Prepared("FindCoordinator", 10, 4, encode(10, 4, {"key_type": 0, "coordinator_keys": [f"bench-{tag}"]}))


# COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: what a client retries after start-up.
_RETRIABLE_COORDINATOR_ERRORS = (14, 15, 16)


def _join_single_member_group(sock: socket.socket, group: str) -> tuple[str, int]:
    protocols = [{"name": "range", "metadata": b"\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00"}]
    body = {"group_id": group, "session_timeout": 30000, "rebalance_timeout": 30000, "member_id": "",
            "group_instance_id": None, "protocol_type": "consumer", "protocols": protocols, "reason": None}
    joined = call(sock, 11, 9, body)
    deadline = time.monotonic() + 30.0
    while joined.error_code in _RETRIABLE_COORDINATOR_ERRORS and time.monotonic() < deadline:
        time.sleep(0.05)  # a daemon just started may still be loading its offsets partitions, as any client retries
        joined = call(sock, 11, 9, body)
    if joined.error_code == 79:  # MEMBER_ID_REQUIRED: rejoin with the id we were given
        joined = call(sock, 11, 9, {**body, "member_id": joined.member_id})
    if joined.error_code != 0:
        raise RuntimeError(f"JoinGroup failed: {joined.error_code!r}")
    synced = call(sock, 14, 5, {"group_id": group, "generation_id": joined.generation_id, "member_id": joined.member_id,
                                "group_instance_id": None, "protocol_type": "consumer", "protocol_name": joined.protocol_name,
                                "assignments": [{"member_id": joined.member_id, "assignment": b""}]})
    if synced.error_code != 0:
        raise RuntimeError(f"SyncGroup failed: {synced.error_code!r}")
    return joined.member_id, joined.generation_id


def heartbeat(bootstrap: str, tag: str) -> Prepared:
    group = f"bench-hb-{tag}"
    body = {"group_id": group, "generation_id": 0, "member_id": "", "group_instance_id": None}
    with _connect(bootstrap) as sock:
        body["member_id"], body["generation_id"] = _join_single_member_group(sock, group)
        beat = call(sock, 12, 4, body)  # answers under load are not read: make sure this one is a success
        if beat.error_code != 0:
            raise RuntimeError(f"Heartbeat set-up failed: {beat.error_code!r}")
    return Prepared("Heartbeat", 12, 4, encode(12, 4, body))


def offset_commit(bootstrap: str, tag: str) -> Prepared:
    """A standalone commit (generation -1, no member) of one partition, as manual-assignment consumers do."""
    topic = "bench-commits"
    with _connect(bootstrap) as sock:
        call(sock, 19, 7, {"topics": [{"name": topic, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}],
                           "timeout": 10000, "validate_only": False})
    body = {"group_id": f"bench-oc-{tag}", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 42, "committed_leader_epoch": -1, "committed_metadata": ""}]}]}
    _commit_once(bootstrap, body)
    return Prepared("OffsetCommit", 8, 8, encode(8, 8, body))


def _commit_once(bootstrap: str, body: dict[str, Any], limit_s: float = 30.0) -> None:
    """The load generator counts answers without reading them, so the commit is tried once for real first:
    a broker answering every commit with an error would otherwise be measured as fast. A broker may not
    know a topic for a moment after creating it (Kafka's metadata cache), hence the bounded retry."""
    deadline = time.monotonic() + limit_s
    with _connect(bootstrap) as sock:
        while True:
            answer = call(sock, 8, 8, body)
            error = int(answer.topics[0].partitions[0].error_code)
            if error == 0:
                return
            if error not in _RETRIABLE_COMMIT_ERRORS or time.monotonic() > deadline:
                raise RuntimeError(f"OffsetCommit set-up failed: error {error}")
            time.sleep(0.1)


_RETRIABLE_COMMIT_ERRORS = {3, 14, 15, 16}  # unknown topic (yet), coordinator loading / not available / moved


FETCH_TOPIC = "bench-fetch"
FETCH_PARTITION_MAX_BYTES = 8 * 1024 * 1024  # bench.dataplane_bench's consumer asks the same
_FETCH_MIN_ANSWER = 1024 * 1024


def fetch(bootstrap: str, tag: str) -> Prepared:
    """`_fetch` once per broker and process: every connection sends the same request, so one real answer
    checks them all (each check reads and decodes 8 MiB)."""
    return _fetch(bootstrap)


@functools.lru_cache(maxsize=None)
def _fetch(bootstrap: str) -> Prepared:
    """A consumer's Fetch (v12, names, no fetch session) of partition 0 of FETCH_TOPIC from offset 0, up to
    8 MiB: the same records on every request, from the page cache on either broker, so the figure is what
    serving a fetch costs the broker. The topic must already hold at least 1 MiB of records (the fetch
    figure produces them first); the set-up reads one real answer to check it, because the load generator
    does not read the answers it counts."""
    body = {"cluster_id": None, "replica_id": -1, "max_wait": 0, "min_bytes": 1, "max_bytes": 50 * 1024 * 1024,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": FETCH_TOPIC, "partitions": [
                {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                 "log_start_offset": -1, "partition_max_bytes": FETCH_PARTITION_MAX_BYTES}]}],
            "forgotten_topics_data": [], "rack_id": ""}
    with _connect(bootstrap) as sock:
        answer = call(sock, 1, 12, body)
    partition = answer.responses[0].partitions[0]
    if answer.error_code or partition.error_code or len(partition.records or b"") < _FETCH_MIN_ANSWER:
        raise RuntimeError(f"Fetch set-up: error {answer.error_code}/{partition.error_code}, "
                           f"{len(partition.records or b''):,} bytes of records (produce to {FETCH_TOPIC} first)")
    return Prepared("Fetch", 1, 12, encode(1, 12, body), large_answers=True)


REQUESTS: dict[str, Callable[[str, str], Prepared]] = {
    "api_versions": api_versions,
    "metadata": metadata,
    "find_coordinator": find_coordinator,
    "heartbeat": heartbeat,
    "offset_commit": offset_commit,
    "fetch": fetch,
}
