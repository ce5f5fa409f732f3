"""The share-group offsets admin (KIP-932): DescribeShareGroupOffsets, AlterShareGroupOffsets and
DeleteShareGroupOffsets, as Kafka 4.3's GroupCoordinatorService runs them — the group side (the group must
exist and be empty to alter or delete; which topics are initialised) through the group coordinator, the
state through the persister.

- Describe reads each share partition's summary: its start offset and leader epoch, and (v1, KIP-1226) its
  lag = the partition's end offset - start offset - records delivered past the start; -1 offsets for an
  unknown topic or a partition never initialised (absence of data, not an error, as OffsetFetch).
- Alter (an empty or new group) initialises the state of each named partition afresh at the given start
  offset, with the group epoch as the state epoch, and records the partitions as initialised.
- Delete (an empty group) deletes the state of the named topics' initialised partitions.
The cached share partitions of the group are dropped after an alter or delete, so the next fetch reloads.
"""

from __future__ import annotations

import uuid
from typing import Any

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import ZERO_UUID

UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."
NO_OFFSETS_MESSAGE = "There is no offset information to delete."


class ShareOffsetsAdmin:
    def __init__(self, groups: Any, persister: Any, catalog: Any, partitions: Any) -> None:
        self.groups = groups
        self.persister = persister
        self.catalog = catalog
        self.partitions = partitions

    def _group_call(self, name: str, *args: Any, default: Any = None) -> Any:
        fn = getattr(self.groups, name, None)
        return default if fn is None else fn(*args)

    # ------------------------------------------------------------------ describe

    async def describe(self, group_id: str, topics: list[tuple[str, list[int]]] | None) -> dict:
        if topics is None:
            state = self._group_call("share_state_partitions", group_id)
            topics = [] if state is None else [(name, sorted(parts)) for _tid, (name, parts) in state.initialized.items()]
        out = []
        for name, partitions in topics:
            topic = self.catalog.get(name)
            if topic is None:
                out.append({"topic_name": name, "topic_id": ZERO_UUID, "partitions": [
                    {"partition_index": p, "start_offset": -1, "leader_epoch": 0, "lag": -1,
                     "error_code": ErrorCode.none, "error_message": None} for p in partitions]})
                continue
            summaries = await self.persister.read_summary(group_id, [(topic.topic_id, p) for p in partitions])
            rows = []
            for p in partitions:
                s = summaries[(topic.topic_id, p)]
                row = {"partition_index": p, "start_offset": -1, "leader_epoch": 0, "lag": -1,
                       "error_code": ErrorCode.none, "error_message": None}
                if s.error == ErrorCode.none:
                    row.update(start_offset=s.start_offset, leader_epoch=s.leader_epoch)
                    log = self.catalog.log(name, p)
                    if s.start_offset != -1 and s.delivery_complete_count != -1 and log is not None:
                        row["lag"] = log.high_watermark - s.start_offset - s.delivery_complete_count
                rows.append(row)
            out.append({"topic_name": name, "topic_id": topic.topic_id, "partitions": rows})
        return {"group_id": group_id, "topics": out, "error_code": ErrorCode.none, "error_message": None}

    # ------------------------------------------------------------------ alter

    async def alter(self, group_id: str, topics: list[tuple[str, list[tuple[int, int]]]]) -> dict:
        if not group_id:
            return alter_error(ErrorCode.invalid_group_id)
        responses = []
        wanted: dict[uuid.UUID, tuple[str, dict[int, int]]] = {}
        for name, partitions in topics:
            topic = self.catalog.get(name)
            rows = []
            for p, offset in partitions:
                if topic is not None and 0 <= p < topic.partitions:
                    rows.append({"partition_index": p, "error_code": ErrorCode.none, "error_message": None})
                    wanted.setdefault(topic.topic_id, (name, {}))[1][p] = offset
                else:
                    rows.append({"partition_index": p, "error_code": ErrorCode.unknown_topic_or_partition,
                                 "error_message": UNKNOWN_TOPIC_MESSAGE})
            responses.append({"topic_name": name, "topic_id": ZERO_UUID if topic is None else topic.topic_id,
                              "partitions": rows})
        begin = getattr(self.groups, "begin_alter_share_group_offsets", None)
        if begin is not None:
            error, epoch = await begin(group_id, {tid: (name, set(parts)) for tid, (name, parts) in wanted.items()})
        else:  # the group side's current state: a non-empty group refuses, the group epoch is the state epoch
            empty = self._group_call("share_group_is_empty", group_id)
            group = self._group_call("_share_group", group_id)
            error = ErrorCode.non_empty_group if empty is False else ErrorCode.none
            epoch = getattr(group, "group_epoch", 0)
        if error != ErrorCode.none:
            return alter_error(error)
        done: dict[uuid.UUID, set[int]] = {}
        failed: dict[tuple[uuid.UUID, int], ErrorCode] = {}
        for tid, (_name, parts) in wanted.items():
            for p, offset in parts.items():
                code = (await self.persister.initialize(group_id, [(tid, p)], start_offset=offset,
                                                        state_epoch=epoch))[(tid, p)]
                if code == ErrorCode.none:
                    done.setdefault(tid, set()).add(p)
                else:
                    failed[(tid, p)] = code
        if done:
            mark = getattr(self.groups, "mark_share_partitions_initialized", None)
            if mark is not None:
                await mark(group_id, done)
        self.partitions.forget(group_id, [(tid, p) for tid, (_n, parts) in wanted.items() for p in parts])
        for topic in responses:
            for row in topic["partitions"]:
                code = failed.get((topic["topic_id"], row["partition_index"]))
                if code is not None:
                    row.update(error_code=code, error_message=None)
        return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None, "responses": responses}

    # ------------------------------------------------------------------ delete

    async def delete(self, group_id: str, topic_names: list[str]) -> dict:
        if not group_id:
            return delete_error(ErrorCode.invalid_group_id)
        if not self._group_call("share_group_exists", group_id, default=False):
            return delete_error(ErrorCode.group_id_not_found, f"Group {group_id} not found.")
        if self._group_call("share_group_is_empty", group_id) is False:
            return delete_error(ErrorCode.non_empty_group, f"Share group {group_id} is not empty.")
        state = self._group_call("share_state_partitions", group_id)
        initialized = {} if state is None else dict(state.initialized)
        deleting = frozenset() if state is None else state.deleting
        responses = []
        targets: dict[uuid.UUID, tuple[str, list[int]]] = {}
        for name in topic_names:
            topic = self.catalog.get(name)
            if topic is not None and topic.topic_id in initialized:
                targets[topic.topic_id] = (name, sorted(initialized[topic.topic_id][1]))
            elif topic is not None and topic.topic_id in deleting:
                targets[topic.topic_id] = (name, list(range(topic.partitions)))
            else:
                responses.append({"topic_name": name, "topic_id": ZERO_UUID,
                                  "error_code": ErrorCode.unknown_topic_or_partition, "error_message": NO_OFFSETS_MESSAGE})
        if not targets:
            return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None, "responses": responses}
        mark = getattr(self.groups, "mark_share_topics_deleting", None)
        if mark is not None:
            await mark(group_id, {tid: name for tid, (name, _p) in targets.items()})
        deleted = []
        for tid, (name, parts) in targets.items():
            results = await self.persister.delete(group_id, [(tid, p) for p in parts])
            self.partitions.forget(group_id, [(tid, p) for p in parts])
            errors = [code for code in results.values() if code != ErrorCode.none]
            if errors:
                responses.append({"topic_name": name, "topic_id": tid, "error_code": errors[0], "error_message": None})
            else:
                deleted.append(tid)
                responses.insert(0, {"topic_name": name, "topic_id": tid, "error_code": ErrorCode.none,
                                     "error_message": None})
        forget = getattr(self.groups, "forget_share_topics_deleting", None)
        if deleted and forget is not None:
            await forget(group_id, set(deleted))
        return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None, "responses": responses}


def alter_error(code: ErrorCode, message: str | None = None) -> dict:
    return {"throttle_time": 0, "error_code": code, "error_message": message, "responses": []}


def delete_error(code: ErrorCode, message: str | None = None) -> dict:
    return {"throttle_time": 0, "error_code": code, "error_message": message, "responses": []}
