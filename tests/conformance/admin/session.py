"""An admin session: the data-plane session plus recorded admin calls (configs, DeleteRecords, DescribeLogDirs,
DescribeTopicPartitions, DescribeProducers, client quotas).

Recorded: error names and error messages (run-unique names in them replaced by their labels), config values
with their source, read-only and sensitive flags, offsets, partition layouts, producer state (producer ids
as "given", timestamps relative to the scenario's base time). Not recorded: log directory paths and sizes
(each broker's own disk), topic ids, throttle times.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from tests.conformance.admin import requests as aq
from tests.conformance.consumer import message
from tests.conformance.dataplane.session import DataSession
from tests.conformance.session import POLL_INTERVAL_S, SETTLE_TIMEOUT_S, ScenarioError
from tests.conformance.transcript import error_name

NODE = "1"  # both brokers run as node 1


@dataclass
class AdminSession(DataSession):
    _quota_model: dict = field(default_factory=dict)  # entity -> the quota values applied so far this run

    def msg(self, text: str | None) -> str | None:
        return message(self, text)

    def resource(self, name: str) -> str:
        return NODE if name == NODE else (self.transcript.alias(name) if name else name)

    # -- configs --------------------------------------------------------------------------------
    async def incremental_alter(self, step: str, resources: list, validate_only: bool = False) -> None:
        response = await self.admin(aq.incremental_alter_configs(resources, validate_only))
        self._record_alter(step, response)
        if not validate_only:
            await self._settle(resources, response)

    async def alter(self, step: str, resources: list, validate_only: bool = False) -> None:
        response = await self.admin(aq.alter_configs(resources, validate_only))
        self._record_alter(step, response)
        if not validate_only:
            await self._settle([(kind, name, [(k, aq.SET, v) for k, v in configs.items()])
                                for kind, name, configs in resources], response, whole_set=True)

    async def _settle(self, resources: list, response: Any, whole_set: bool = False) -> None:
        """Kafka's controller answers before the broker's metadata image (which DescribeConfigs and the group
        coordinator read) has the change; waits, unrecorded, until DescribeConfigs shows every change made."""
        dynamic = {aq.TOPIC: {1}, aq.GROUP: {8}, aq.BROKER: {2, 3}}
        for (kind, name, ops), result in zip(resources, response.responses):
            if result.error_code != 0 or (not ops and not whole_set):
                continue
            deadline = time.monotonic() + SETTLE_TIMEOUT_S
            while True:
                described = (await self.admin(aq.describe_configs([(kind, name, None)]))).results[0]
                shown = {c.name: (c.value, int(c.config_source)) for c in described.configs}
                own = dynamic.get(kind, set())
                extra = whole_set and any(s in own and n not in {o[0] for o in ops} for n, (_, s) in shown.items())
                if not extra and all(self._shows(shown.get(n), op, v, own) for n, op, v in ops):
                    break
                if time.monotonic() > deadline:
                    raise ScenarioError(f"{name}'s config change never showed: {ops}")
                await asyncio.sleep(POLL_INTERVAL_S)

    @staticmethod
    def _shows(entry: tuple | None, op: int, value: str | None, dynamic: set[int]) -> bool:
        if entry is None:
            return op == aq.DELETE
        shown, source = entry
        items = set((shown or "").split(","))
        if op == aq.SET:
            return shown == value and source in dynamic
        if op == aq.DELETE:
            return source not in dynamic
        if op == aq.APPEND:
            return set((value or "").split(",")) <= items
        return not (set((value or "").split(",")) & items)

    def _record_alter(self, step: str, response: Any) -> None:
        self.transcript.record(step, results=[
            [int(r.resource_type), self.resource(r.resource_name), error_name(r.error_code), self.msg(r.error_message)]
            for r in response.responses])

    async def describe_configs(self, step: str, resources: list, synonyms: bool = False,
                               only: tuple[str, ...] | None = None) -> None:
        """``only``: the config names kept in the transcript (a broker lists hundreds; scenarios name theirs)."""
        response = await self.admin(aq.describe_configs(resources, synonyms))
        self.transcript.record(step, results=[
            [int(r.resource_type), self.resource(r.resource_name), error_name(r.error_code), self.msg(r.error_message),
             sorted([c.name, c.value, int(c.config_source), bool(c.read_only), bool(c.is_sensitive),
                     [[s.name, s.value, int(s.source)] for s in c.synonyms] if synonyms else None]
                    for c in r.configs if only is None or c.name in only)]
            for r in response.results])

    async def wait_for_broker_config(self, name: str, value: str, source: int) -> None:
        """Kafka applies a dynamic broker config when its metadata image reaches the broker, a little after the
        controller answered; waits, unrecorded, until DescribeConfigs shows it."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while True:
            response = await self.admin(aq.describe_configs([(aq.BROKER, NODE, (name,))]))
            shown = {c.name: (c.value, int(c.config_source)) for c in response.results[0].configs}
            if shown.get(name) == (value, source):
                return
            if time.monotonic() > deadline:
                raise ScenarioError(f"broker config {name} never became {value} (source {source}): {shown}")
            await asyncio.sleep(POLL_INTERVAL_S)

    async def wait_for_group_config(self, group: str, name: str, value: str | None) -> None:
        """Kafka's group coordinator learns a group config from its metadata image a little after the
        controller accepts it; DescribeConfigs (served from the same image) shows when it has. Unrecorded."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while True:
            response = await self.admin(aq.describe_configs([(aq.GROUP, group, (name,))]))
            configs = {c.name: c for c in response.results[0].configs}
            current = configs.get(name)
            shown = None if current is None or int(current.config_source) != 8 else current.value  # 8: GROUP_CONFIG
            if shown == value:
                await asyncio.sleep(0.5)  # and the coordinator's copy of the image
                return
            if time.monotonic() > deadline:
                raise ScenarioError(f"group config {name} never became {value}")
            await asyncio.sleep(POLL_INTERVAL_S)

    # -- records and logs -----------------------------------------------------------------------
    async def delete_records(self, step: str, offsets: dict[tuple[str, int], int]) -> None:
        response = await self.admin(aq.delete_records(offsets))
        t = self.transcript
        t.record(step, partitions=sorted([t.alias(topic.name), int(p.partition_index), error_name(p.error_code),
                                          int(p.low_watermark)] for topic in response.topics for p in topic.partitions))

    async def describe_log_dirs(self, step: str, topics: dict[str, tuple[int, ...]] | None) -> None:
        response = await self.admin(aq.describe_log_dirs(topics))
        t = self.transcript
        mine = [[t.alias(topic.name), sorted([int(p.partition_index), int(p.offset_lag), bool(p.is_future_key)]
                                             for p in topic.partitions)]
                for r in response.results for topic in r.topics if topic.name in t.aliases]
        t.record(step, error=error_name(response.error_code), dirs=len(response.results),
                 dir_errors=[error_name(r.error_code) for r in response.results], topics=sorted(mine))

    async def describe_topic_partitions(self, step: str, topics: tuple[str, ...], limit: int,
                                        cursor: tuple[str, int] | None = None) -> Any:
        response = await self.admin(aq.describe_topic_partitions(topics, limit, cursor))
        t = self.transcript
        t.record(step, topics=[[t.alias(x.name), error_name(x.error_code), bool(x.is_internal),
                                [[int(p.partition_index), error_name(p.error_code), int(p.leader_id),
                                  int(p.leader_epoch), list(p.replica_nodes), list(p.isr_nodes),
                                  list(p.eligible_leader_replicas or ()), list(p.last_known_elr or ()),
                                  list(p.offline_replicas)] for p in x.partitions]]
                               for x in response.topics],
                 next_cursor=None if response.next_cursor is None else
                 [t.alias(response.next_cursor.topic_name), int(response.next_cursor.partition_index)])
        return response

    async def describe_producers(self, step: str, partitions: dict[str, tuple[int, ...]]) -> None:
        response = await self.admin(aq.describe_producers(partitions))
        t = self.transcript
        t.record(step, partitions=sorted(
            [t.alias(topic.name), int(p.partition_index), error_name(p.error_code), self.msg(p.error_message),
             sorted([int(s.producer_id) >= 0, int(s.producer_epoch), int(s.last_sequence),
                     self.relative(int(s.last_timestamp)), int(s.coordinator_epoch),
                     int(s.current_txn_start_offset)] for s in p.active_producers)]
            for topic in response.topics for p in topic.partitions))

    # -- client quotas --------------------------------------------------------------------------
    def entity_name(self, name: str | None) -> str | None:
        return None if name is None else (self.transcript.aliases.get(name, name))

    async def alter_quotas(self, step: str, entries: list, validate_only: bool = False) -> None:
        """Kafka lists the answers in its HashMap's order of the entities (which depends on the run's names), so
        they are recorded sorted. Then waits, unrecorded, until DescribeClientQuotas (served from the broker's
        metadata image, updated a little after the controller answers) shows what was applied."""
        response = await self.admin(aq.alter_client_quotas(entries, validate_only))
        self.transcript.record(step, entries=sorted(
            ([sorted([e.entity_type, self.entity_name(e.entity_name)] for e in r.entity), error_name(r.error_code),
              self.msg(r.error_message)] for r in response.entries), key=json.dumps))
        if validate_only:
            return
        outcome = {tuple(sorted((e.entity_type, e.entity_name) for e in r.entity)): r for r in response.entries}
        for entity, ops in entries:
            key = tuple(sorted(entity.items()))
            answer = outcome.get(key)
            if answer is None or answer.error_code != 0 or not entity:
                continue
            expected = dict(self._quota_model.get(key, {}))
            for k, v in ops.items():
                if v is None:
                    expected.pop(k, None)
                else:
                    expected[k] = float(v)
            await self.wait_for_quota(entity, expected)

    async def wait_for_quota(self, entity: dict, expected: dict) -> None:
        """Waits, unrecorded, until the entity's quotas read back as ``expected``."""
        key = tuple(sorted(entity.items()))
        self._quota_model[key] = expected
        components = [(t, aq.MATCH_DEFAULT if n is None else aq.MATCH_EXACT, n) for t, n in key]
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while True:
            response = await self.admin(aq.describe_client_quotas(components, strict=True))
            shown = {v.key: float(v.value) for entry in response.entries or () for v in entry.values}
            if shown == expected:
                return
            if time.monotonic() > deadline:
                raise ScenarioError(f"quota of {key} never became {expected}: {shown}")
            await asyncio.sleep(POLL_INTERVAL_S)

    async def describe_quotas(self, step: str, components: list, strict: bool = False) -> None:
        """Only this run's entities (and defaults) are recorded: the reference broker is shared."""
        response = await self.admin(aq.describe_client_quotas(components, strict))
        entries = []
        for entry in response.entries or ():
            names = [e.entity_name for e in entry.entity]
            if any(n is not None and n not in self.transcript.aliases for n in names):
                continue
            entries.append([sorted([e.entity_type, self.entity_name(e.entity_name)] for e in entry.entity),
                            sorted([v.key, float(v.value)] for v in entry.values)])
        self.transcript.record(step, error=error_name(response.error_code), message=self.msg(response.error_message),
                               entries=None if response.entries is None else sorted(entries, key=json.dumps))
