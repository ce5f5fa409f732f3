"""IncrementalAlterConfigs and AlterConfigs on topics, this broker and groups (``kafka-configs --alter``,
the admin client's ``incrementalAlterConfigs``), validated as Kafka's controller validates them and
persisted before the answer.

Incremental operations (Kafka's OpType): SET, DELETE, APPEND and SUBTRACT (the last two on list configs
only). The legacy AlterConfigs replaces the resource's whole set of overrides. A topic change applies to its
logs at once (retention, segment size, compaction, max message size); a broker change to the dynamic log
settings applies to every topic without its own override.
"""
from __future__ import annotations

import enum
from typing import Any, Iterable

from groupcoord.protocol.errors import ErrorCode
from groupcoord.storage.config import InvalidConfigError

from groupcoord.coordinator.dataplane import topic_configs
from groupcoord.coordinator.dataplane.configs import DYNAMIC_BROKER_CONFIGS, ResourceType
from groupcoord.coordinator.dataplane.dynamic_configs import CLUSTER_DEFAULT, DynamicConfigs
from groupcoord.coordinator.dataplane.group_configs import InvalidGroupConfig, validate_group_configs
from groupcoord.coordinator.dataplane.names import topic_name_error
from groupcoord.coordinator.dataplane.topic_configs import ConfigType
from groupcoord.coordinator.dataplane.topics import TopicCatalog
from groupcoord.protocol.frozen import frozen_dataclass


class OpType(enum.IntEnum):
    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@frozen_dataclass
class ConfigOp:
    name: str
    op: int
    value: str | None


@frozen_dataclass
class AlterResult:
    error: ErrorCode = ErrorCode.none
    message: str | None = None


class _Refused(Exception):
    def __init__(self, error: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


# Broker configs whose values are lists (APPEND/SUBTRACT allowed), from the topic configs' types.
_BROKER_LIST_CONFIGS = frozenset(d.broker_synonym for d in topic_configs.TOPIC_CONFIGS.values()
                                 if d.broker_synonym and d.type == ConfigType.LIST)
_BROKER_DEFS = {d.broker_synonym: d for d in topic_configs.TOPIC_CONFIGS.values() if d.broker_synonym}


class ConfigChangeService:
    def __init__(self, catalog: TopicCatalog, dynamic: DynamicConfigs, broker_config: Any) -> None:
        self._catalog = catalog
        self._dynamic = dynamic
        self._config = broker_config

    async def incremental(self, resource_type: int, name: str, ops: list[ConfigOp], validate_only: bool) -> AlterResult:
        try:
            names = [op.name for op in ops]
            if len(set(names)) != len(names):
                raise _Refused(ErrorCode.invalid_request, "Error due to duplicate config keys")
            current = self._current(resource_type, name)
            updated = dict(current)
            for op in ops:
                self._apply(resource_type, updated, op)
            return await self._commit(resource_type, name, updated, validate_only)
        except _Refused as refused:
            return AlterResult(refused.error, refused.message)

    async def replace(self, resource_type: int, name: str, configs: list[tuple[str, str | None]],
                      validate_only: bool) -> AlterResult:
        """The legacy AlterConfigs: ``configs`` become the resource's whole set of dynamic values."""
        try:
            names = [n for n, _ in configs]
            if len(set(names)) != len(names):
                raise _Refused(ErrorCode.invalid_request, "Error due to duplicate config keys")
            self._current(resource_type, name)
            for key, value in configs:
                if value is None:
                    raise _Refused(ErrorCode.invalid_request, f"Null value not supported for : {key}")
            return await self._commit(resource_type, name, dict(configs), validate_only)
        except _Refused as refused:
            return AlterResult(refused.error, refused.message)

    # ---- the resource's current dynamic values --------------------------------------------------

    def _current(self, resource_type: int, name: str) -> dict[str, str]:
        if resource_type == ResourceType.TOPIC:
            problem = topic_name_error(name)
            if problem is not None:
                raise _Refused(ErrorCode.invalid_topic_exception, problem)
            topic = self._catalog.get(name)
            if topic is None:
                raise _Refused(ErrorCode.unknown_topic_or_partition, f"The topic '{name}' does not exist.")
            return dict(topic.configs)
        if resource_type == ResourceType.BROKER:
            if name not in (CLUSTER_DEFAULT, str(self._config.node_id)):
                raise _Refused(ErrorCode.invalid_request,
                               f"Unexpected broker id, expected {self._config.node_id}, but received {name}")
            return dict(self._dynamic.broker_level(name))
        if resource_type == ResourceType.GROUP:
            if not name:
                raise _Refused(ErrorCode.invalid_request, "Group name must not be empty")
            return dict(self._dynamic.groups.get(name, {}))
        raise _Refused(ErrorCode.invalid_request, f"Unexpected resource type {resource_type}")

    def _apply(self, resource_type: int, values: dict[str, str], op: ConfigOp) -> None:
        if op.op == OpType.SET:
            if op.value is None:
                raise _Refused(ErrorCode.invalid_request, f"Null value not supported for : {op.name}")
            values[op.name] = op.value
        elif op.op == OpType.DELETE:
            values.pop(op.name, None)
        elif op.op in (OpType.APPEND, OpType.SUBTRACT):
            if not self._is_list(resource_type, op.name):
                raise _Refused(ErrorCode.invalid_config,
                               f"Can't {OpType(op.op).name} to key {op.name} because its type is not LIST.")
            items = [i.strip() for i in values.get(op.name, self._default(resource_type, op.name)).split(",")
                     if i.strip()]
            given = [i.strip() for i in (op.value or "").split(",") if i.strip()]
            if op.op == OpType.APPEND:
                items += [i for i in given if i not in items]
            else:
                items = [i for i in items if i not in given]
            values[op.name] = ",".join(items)
        else:
            raise _Refused(ErrorCode.invalid_request, f"Unknown alter configs operation type {op.op}")

    def _is_list(self, resource_type: int, name: str) -> bool:
        if resource_type == ResourceType.TOPIC:
            defn = topic_configs.TOPIC_CONFIGS.get(name)
            return defn is not None and defn.type == ConfigType.LIST
        if resource_type == ResourceType.BROKER:
            return name in _BROKER_LIST_CONFIGS
        return False

    def _default(self, resource_type: int, name: str) -> str:
        if resource_type == ResourceType.TOPIC:
            return topic_configs.effective(name, {}, self._config, self._dynamic.broker_view()).value
        defn = _BROKER_DEFS.get(name)
        return defn.default if defn is not None else ""

    # ---- validation and the write -------------------------------------------------------------

    async def _commit(self, resource_type: int, name: str, values: dict[str, str], validate_only: bool) -> AlterResult:
        if resource_type == ResourceType.TOPIC:
            try:
                normalised = topic_configs.validate(values)
                topic_configs.log_config_for(normalised, self._config, self._dynamic.broker_view())
            except InvalidConfigError as exc:
                raise _Refused(ErrorCode.invalid_config, str(exc)) from None
            if not validate_only:
                await self._catalog.replace_configs(name, normalised)
            return AlterResult()
        if resource_type == ResourceType.BROKER:
            not_dynamic = sorted(n for n in values if n not in DYNAMIC_BROKER_CONFIGS)
            if not_dynamic:
                raise _Refused(ErrorCode.invalid_request,
                               f"Cannot update these configs dynamically: [{', '.join(not_dynamic)}]")
            for key, value in values.items():
                self._validate_broker_value(key, value)
            if not validate_only:
                level = self._dynamic.broker_level(name)
                level.clear()
                level.update(values)
                self._dynamic.persist()
                await self._catalog.refresh_log_configs()
            return AlterResult()
        try:
            validate_group_configs(values, self._config)
        except InvalidGroupConfig as exc:
            raise _Refused(ErrorCode.invalid_config, str(exc)) from None
        if not validate_only:
            self._dynamic.groups[name] = dict(values)
            self._dynamic.persist()
        return AlterResult()

    @staticmethod
    def _validate_broker_value(key: str, value: str) -> None:
        defn = _BROKER_DEFS[key]
        try:
            topic_configs.parse_value(defn.name, value)
        except InvalidConfigError as exc:
            # Kafka 4.3's controller answers a broker config's bad value INVALID_REQUEST (a topic's: INVALID_CONFIG)
            raise _Refused(ErrorCode.invalid_request, str(exc).replace(f"configuration {defn.name}",
                                                                       f"configuration {key}")) from None


def ops_from_request(configs: Iterable[Any]) -> list[ConfigOp]:
    return [ConfigOp(c.name, int(c.config_operation), c.value) for c in configs]
