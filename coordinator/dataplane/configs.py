"""DescribeConfigs for topics and for this broker, the calls admin tools and librdkafka make.

Topic values come from the topic_configs table (override, else broker setting, else Kafka default) with
their source and, on request, the synonym chain; broker values come from the broker settings table, with
the dynamic log settings alterable (IncrementalAlterConfigs) and the rest read-only.
"""
from __future__ import annotations

import enum
from typing import Any

from groupcoord.protocol.errors import ErrorCode

from groupcoord.coordinator import config as broker_settings
from groupcoord.coordinator.dataplane import topic_configs
from groupcoord.coordinator.dataplane.group_configs import GROUP_CONFIGS
from groupcoord.coordinator.dataplane.names import topic_name_error
from groupcoord.coordinator.dataplane.topic_configs import ConfigSource, ConfigType
from groupcoord.coordinator.dataplane.topics import TopicCatalog


class ResourceType(enum.IntEnum):
    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


def _config_type(value: Any) -> ConfigType:
    if isinstance(value, bool):
        return ConfigType.BOOLEAN
    if isinstance(value, int):
        return ConfigType.INT if -2**31 <= value < 2**31 else ConfigType.LONG
    if isinstance(value, float):
        return ConfigType.DOUBLE
    return ConfigType.STRING


def _render(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return str(value.value)
    return str(value)


def _entry(name: str, value: str | None, source: ConfigSource, type_: ConfigType, read_only: bool,
           synonyms: list[dict]) -> dict:
    return {"name": name, "value": value, "read_only": read_only, "config_source": int(source),
            "is_default": source == ConfigSource.DEFAULT_CONFIG, "is_sensitive": False,
            "synonyms": synonyms, "config_type": int(type_), "documentation": None}


class DescribeConfigsService:
    def __init__(self, catalog: TopicCatalog, broker_config: Any) -> None:
        self._catalog = catalog
        self._config = broker_config

    def describe(self, resources: list[tuple[int, str, list[str] | None]], include_synonyms: bool) -> dict:
        """``resources``: (resource_type, resource_name, configuration_keys or None for all)."""
        results = []
        for resource_type, name, keys in resources:
            error, message, configs = self._describe_one(resource_type, name, include_synonyms)
            if keys is not None:
                wanted = set(keys)
                configs = [c for c in configs if c["name"] in wanted]
            # Kafka answers "" where it has no message (success, an unknown topic)
            results.append({"error_code": error, "error_message": "" if message is None else message,
                            "resource_type": resource_type,
                            "resource_name": name, "configs": configs})
        return {"throttle_time": 0, "results": results}

    def _describe_one(self, resource_type: int, name: str, synonyms: bool) -> tuple[ErrorCode, str | None, list]:
        if resource_type == ResourceType.TOPIC:
            problem = topic_name_error(name)
            if problem is not None:
                return ErrorCode.invalid_topic_exception, problem, []
            topic = self._catalog.get(name)
            if topic is None:
                return ErrorCode.unknown_topic_or_partition, "", []
            return ErrorCode.none, None, self.topic_configs(topic.configs, synonyms)
        if resource_type == ResourceType.BROKER:
            if name not in ("", str(self._config.node_id)):
                return (ErrorCode.invalid_request,
                        f"Unexpected broker id, expected {self._config.node_id} or empty string, but received "
                        f"{name}", [])
            return ErrorCode.none, None, self.broker_configs(synonyms)
        if resource_type == ResourceType.BROKER_LOGGER:
            return ErrorCode.none, None, []
        if resource_type == ResourceType.GROUP:
            dynamic = self._catalog.dynamic
            overrides = dynamic.groups.get(name, {}) if dynamic is not None else {}
            return ErrorCode.none, None, self.group_configs(overrides, synonyms)
        return ErrorCode.invalid_request, f"Unsupported resource type {resource_type}", []

    def topic_configs(self, overrides: dict[str, str], include_synonyms: bool) -> list[dict]:
        out = []
        dynamic = self._catalog.dynamic.broker_view() if self._catalog.dynamic is not None else None
        for eff in topic_configs.effective_all(overrides, self._config, dynamic):
            synonyms = ([{"name": n, "value": v, "source": int(s)} for n, v, s in eff.synonyms]
                        if include_synonyms else [])
            out.append(_entry(eff.name, eff.value, eff.source, eff.type, False, synonyms))
        return out

    def group_configs(self, overrides: dict[str, str], include_synonyms: bool) -> list[dict]:
        out = []
        for name in sorted(GROUP_CONFIGS):
            defn = GROUP_CONFIGS[name]
            default = defn.broker_default(self._config)
            source = ConfigSource.DEFAULT_CONFIG if default == defn.default else ConfigSource.STATIC_BROKER_CONFIG
            chain = [(defn.broker_synonym or name, _render(default), source)]
            if name in overrides:
                chain.insert(0, (name, overrides[name], ConfigSource.GROUP_CONFIG))
            synonyms = ([{"name": n, "value": v, "source": int(s)} for n, v, s in chain] if include_synonyms else [])
            chain = [(v, s) for _, v, s in chain]
            out.append(_entry(name, chain[0][0], chain[0][1], defn.type, False, synonyms))
        return out

    def broker_configs(self, include_synonyms: bool) -> list[dict]:
        """Every broker setting: static ones read-only, the dynamic log settings (the topic configs'
        broker synonyms) alterable, showing a dynamic value with its level when one is set."""
        dynamic = self._catalog.dynamic
        out: dict[str, dict] = {}
        for setting in broker_settings.SETTINGS:
            if not setting.kafka:
                continue
            value = getattr(self._config, setting.attr, setting.default)
            source = ConfigSource.DEFAULT_CONFIG if value == setting.default else ConfigSource.STATIC_BROKER_CONFIG
            out[setting.name] = self._broker_entry(setting.name, _render(value), source,
                                                   _config_type(setting.default), dynamic, include_synonyms)
        for defn in topic_configs.TOPIC_CONFIGS.values():
            name = defn.broker_synonym
            if name and name not in out:
                out[name] = self._broker_entry(name, defn.default, ConfigSource.DEFAULT_CONFIG, defn.type, dynamic,
                                               include_synonyms)
        return [out[name] for name in sorted(out)]

    @staticmethod
    def _broker_entry(name: str, value: str | None, source: ConfigSource, type_: ConfigType, dynamic: Any,
                      include_synonyms: bool) -> dict:
        chain = [(name, value, source)]
        if source == ConfigSource.DEFAULT_CONFIG and name in topic_configs.SIBLING_DEFAULTS:
            # as Kafka names the default: the sibling (log.retention.hours) carries it, the config itself none
            chain = [(*topic_configs.SIBLING_DEFAULTS[name], source)]
            value = None
        set_dynamically = dynamic.broker_source(name) if dynamic is not None else None
        if set_dynamically is not None:
            chain.insert(0, (name, *set_dynamically))
        synonyms = [{"name": n, "value": v, "source": int(s)} for n, v, s in chain] if include_synonyms else []
        shown = value if set_dynamically is None else set_dynamically[0]
        read_only = name not in DYNAMIC_BROKER_CONFIGS
        return _entry(name, shown, chain[0][2], type_, read_only, synonyms)


# The broker settings IncrementalAlterConfigs may change at run time: the topic configs' broker-level
# synonyms (Kafka's DynamicLogConfig.ReconfigurableConfigs).
DYNAMIC_BROKER_CONFIGS: frozenset[str] = frozenset(
    d.broker_synonym for d in topic_configs.TOPIC_CONFIGS.values() if d.broker_synonym)
