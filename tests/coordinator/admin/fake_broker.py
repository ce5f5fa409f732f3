"""An in-process fake Kafka broker for the admin client's tests.

It decodes real request frames with kio and answers from a small in-memory cluster, so the client's framing,
version negotiation and request routing are exercised over a real socket without the project's broker.
"""

from __future__ import annotations

import asyncio
import struct
from dataclasses import dataclass, field
from typing import Any, Callable

from groupcoord.protocol import consumer_protocol
from groupcoord.protocol.build import build
from groupcoord.protocol.framing import FrameDecoder, encode_frame
from groupcoord.protocol.headers import encode_response_header, parse_request_header
from groupcoord.protocol.registry import encode_entity, is_flexible, request_reader, response_class

API_VERSIONS = 18
UNSUPPORTED_VERSION = 35


def encode_assignment(partitions: list[tuple[str, int]]) -> bytes:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    return consumer_protocol.encode_assignment(
        consumer_protocol.Assignment(tuple((t, tuple(ps)) for t, ps in by_topic.items()), version=0)
    )


@dataclass
class FakeMember:
    member_id: str
    client_id: str
    host: str
    assignment: list[tuple[str, int]]


@dataclass
class FakeGroup:
    state: str = "Empty"
    protocol: str = "range"
    members: list[FakeMember] = field(default_factory=list)
    offsets: dict[tuple[str, int], int] = field(default_factory=dict)


@dataclass
class FakeCluster:
    """Topic name -> [(earliest, latest)] per partition; timestamps map (topic, partition, ts) -> offset."""

    topics: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    groups: dict[str, FakeGroup] = field(default_factory=dict)
    offsets_by_time: dict[tuple[str, int, int], int] = field(default_factory=dict)


DEFAULT_RANGES = {
    2: (1, 9), 3: (1, 12), 8: (2, 9), 9: (1, 9), 10: (0, 6), 15: (0, 5), 16: (0, 5), 18: (0, 4),
    19: (2, 7), 20: (1, 6), 42: (0, 2),
}


class FakeBroker:
    def __init__(self, cluster: FakeCluster | None = None, ranges: dict[int, tuple[int, int]] | None = None):
        self.cluster = cluster or FakeCluster()
        self.ranges = dict(DEFAULT_RANGES if ranges is None else ranges)
        self.requests: list[tuple[int, int, int, str | None]] = []  # api key, version, correlation id, client id
        self.commits: list[tuple[str, int, str, dict]] = []  # group, generation, member id, offsets
        self.answer_delay: float = 0.0
        self.corrupt_correlation = False
        self._server: asyncio.base_events.Server | None = None
        self.port = 0
        self._handlers: dict[int, Callable[[int, Any], dict]] = {
            2: self._list_offsets, 3: self._metadata, 8: self._offset_commit, 9: self._offset_fetch,
            10: self._find_coordinator, 15: self._describe_groups, 16: self._list_groups, 42: self._delete_groups,
            19: self._create_topics, 20: self._delete_topics,
        }

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def __aenter__(self) -> "FakeBroker":
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        decoder = FrameDecoder()
        try:
            while data := await reader.read(65536):
                for frame in decoder.feed(data):
                    writer.write(encode_frame(await self._answer(frame)))
                    await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _answer(self, frame: bytes) -> bytes:
        api_key, version = struct.unpack_from(">hh", frame, 0)
        supported = self.ranges.get(api_key)
        if api_key == API_VERSIONS and (supported is None or not supported[0] <= version <= supported[1]):
            (correlation_id,) = struct.unpack_from(">i", frame, 4)
            self.requests.append((api_key, version, correlation_id, None))
            return self._encode(api_key, 0, correlation_id, {
                "error_code": UNSUPPORTED_VERSION,
                "api_keys": [{"api_key": API_VERSIONS, "min_version": self.ranges[API_VERSIONS][0],
                              "max_version": self.ranges[API_VERSIONS][1]}],
            })
        header = parse_request_header(frame, is_flexible(api_key, version))
        self.requests.append((api_key, version, header.correlation_id, header.client_id))
        request, _ = request_reader(api_key, version)(frame, header.body_offset)
        if api_key == API_VERSIONS:
            body = {"error_code": 0, "api_keys": [
                {"api_key": k, "min_version": lo, "max_version": hi} for k, (lo, hi) in sorted(self.ranges.items())
            ]}
        else:
            body = self._handlers[api_key](version, request)
        if self.answer_delay:
            await asyncio.sleep(self.answer_delay)
        correlation_id = header.correlation_id + (1000 if self.corrupt_correlation else 0)
        return self._encode(api_key, version, correlation_id, body)

    def _encode(self, api_key: int, version: int, correlation_id: int, body: dict) -> bytes:
        response_cls = response_class(api_key, version)
        header = encode_response_header(correlation_id, api_key, response_cls.__flexible__)
        return header + encode_entity(build(response_cls, body, fill_missing=True))

    # --- handlers: version-neutral dicts, shaped per version by protocol.build ---

    def _metadata(self, version: int, request: Any) -> dict:
        names = sorted(self.cluster.topics) if request.topics is None else [t.name for t in request.topics]
        topics = []
        for name in names:
            parts = self.cluster.topics.get(name)
            topics.append({
                "name": name,
                "error_code": 0 if parts is not None else 3,
                "partitions": [
                    {"partition_index": i, "leader_id": 1, "replica_nodes": [1], "isr_nodes": [1]}
                    for i in range(len(parts or []))
                ],
            })
        return {"brokers": [{"node_id": 1, "host": "127.0.0.1", "port": self.port}], "controller_id": 1,
                "cluster_id": "fake", "topics": topics}

    def _find_coordinator(self, version: int, request: Any) -> dict:
        return {"error_code": 0, "node_id": 1, "host": "127.0.0.1", "port": self.port}

    def _list_groups(self, version: int, request: Any) -> dict:
        states = set(getattr(request, "states_filter", ()) or ())
        return {"error_code": 0, "groups": [
            {"group_id": g, "protocol_type": "consumer", "group_state": grp.state}
            for g, grp in sorted(self.cluster.groups.items()) if not states or grp.state in states
        ]}

    def _describe_groups(self, version: int, request: Any) -> dict:
        groups = []
        for group_id in request.groups:
            grp = self.cluster.groups.get(group_id)
            if grp is None:  # v6+ names the error; older versions answer with state Dead
                groups.append({"error_code": 69 if version >= 6 else 0, "group_id": group_id, "group_state": "Dead"})
                continue
            groups.append({
                "error_code": 0, "group_id": group_id, "group_state": grp.state, "protocol_type": "consumer",
                "protocol_data": grp.protocol if grp.members else "",
                "members": [
                    {"member_id": m.member_id, "client_id": m.client_id, "client_host": m.host,
                     "member_metadata": b"", "member_assignment": encode_assignment(m.assignment)}
                    for m in grp.members
                ],
            })
        return {"groups": groups}

    def _offset_fetch(self, version: int, request: Any) -> dict:
        grp = self.cluster.groups.get(request.group_id, FakeGroup())
        by_topic: dict[str, list[dict]] = {}
        for (topic, partition), offset in sorted(grp.offsets.items()):
            by_topic.setdefault(topic, []).append(
                {"partition_index": partition, "committed_offset": offset, "committed_leader_epoch": -1,
                 "metadata": "", "error_code": 0}
            )
        return {"error_code": 0, "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()]}

    def _offset_commit(self, version: int, request: Any) -> dict:
        grp = self.cluster.groups.setdefault(request.group_id, FakeGroup())
        committed = {}
        for topic in request.topics:
            for p in topic.partitions:
                committed[(topic.name, int(p.partition_index))] = int(p.committed_offset)
        self.commits.append((request.group_id, int(request.generation_id_or_member_epoch), request.member_id, committed))
        grp.offsets.update(committed)
        return {"topics": [
            {"name": t.name, "partitions": [{"partition_index": p.partition_index, "error_code": 0} for p in t.partitions]}
            for t in request.topics
        ]}

    def _list_offsets(self, version: int, request: Any) -> dict:
        topics = []
        for topic in request.topics:
            parts = []
            for p in topic.partitions:
                earliest, latest = self.cluster.topics[topic.name][p.partition_index]
                ts = int(p.timestamp)
                if ts == -1:
                    offset = latest
                elif ts == -2:
                    offset = earliest
                else:
                    offset = self.cluster.offsets_by_time.get((topic.name, int(p.partition_index), ts), -1)
                parts.append({"partition_index": p.partition_index, "error_code": 0, "timestamp": -1, "offset": offset})
            topics.append({"name": topic.name, "partitions": parts})
        return {"topics": topics}

    def _delete_groups(self, version: int, request: Any) -> dict:
        results = []
        for group_id in request.groups_names:
            grp = self.cluster.groups.get(group_id)
            if grp is None:
                code = 69  # GROUP_ID_NOT_FOUND
            elif grp.state != "Empty":
                code = 68  # NON_EMPTY_GROUP
            else:
                code = 0
                del self.cluster.groups[group_id]
            results.append({"group_id": group_id, "error_code": code})
        return {"results": results}

    def _create_topics(self, version: int, request: Any) -> dict:
        results = []
        for topic in request.topics:
            if topic.name in self.cluster.topics:
                code = 36  # TOPIC_ALREADY_EXISTS
            else:
                code = 0
                self.cluster.topics[topic.name] = [(0, 0)] * int(topic.num_partitions)
            results.append({"name": topic.name, "error_code": code, "num_partitions": topic.num_partitions,
                            "replication_factor": 1})
        return {"topics": results}

    def _delete_topics(self, version: int, request: Any) -> dict:
        names = list(getattr(request, "topic_names", ()) or ()) or [t.name for t in getattr(request, "topics", ())]
        results = []
        for name in names:
            code = 0 if self.cluster.topics.pop(name, None) is not None else 3
            results.append({"name": name, "error_code": code})
        return {"responses": results}
