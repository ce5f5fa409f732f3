"""Dynamic broker and group configs set with IncrementalAlterConfigs/AlterConfigs, persisted in the data
directory (``dynamic-configs.json``, replaced atomically) so they survive restarts — Kafka keeps them as
ConfigRecords in its metadata log.

Broker configs come at two levels, as in Kafka: this broker's (resource name = node id) and the cluster-wide
default (empty resource name); the dynamic log settings among them (``log.retention.ms`` …) become the
defaults of every topic without its own override. Group configs (KIP-848's per-group settings) are kept per
group id.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping

from groupcoord.coordinator.dataplane.atomic_json import write_json_atomically
from groupcoord.coordinator.dataplane.topic_configs import ConfigSource

DYNAMIC_CONFIGS_FILE = "dynamic-configs.json"
CLUSTER_DEFAULT = ""


class DynamicConfigs:
    def __init__(self, data_dir: Path, node_id: int) -> None:
        self._path = Path(data_dir) / DYNAMIC_CONFIGS_FILE
        self._node = str(node_id)
        self.broker: dict[str, dict[str, str]] = {CLUSTER_DEFAULT: {}, self._node: {}}
        self.groups: dict[str, dict[str, str]] = {}
        # A Kafka 4.x cluster is formatted with min.insync.replicas as a cluster-wide dynamic default (the
        # controller's bootstrap records, for eligible leader replicas), so every topic reports it.
        self.broker[CLUSTER_DEFAULT]["min.insync.replicas"] = "1"
        if self._path.exists():
            data = json.loads(self._path.read_text())
            for level, values in data.get("broker", {}).items():
                self.broker[level] = dict(values)
            self.groups = {name: dict(values) for name, values in data.get("groups", {}).items()}

    def broker_level(self, resource_name: str) -> dict[str, str]:
        return self.broker.setdefault(resource_name, {})

    def broker_view(self) -> Mapping[tuple[str, ConfigSource], str]:
        """(broker config name, source) -> value, what topic_configs.effective consults."""
        view = {(name, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG): value
                for name, value in self.broker.get(CLUSTER_DEFAULT, {}).items()}
        view.update({(name, ConfigSource.DYNAMIC_BROKER_CONFIG): value
                     for name, value in self.broker.get(self._node, {}).items()})
        return view

    def broker_source(self, name: str) -> tuple[str, ConfigSource] | None:
        """The dynamic value of a broker config and its level, if one is set."""
        if name in self.broker.get(self._node, {}):
            return self.broker[self._node][name], ConfigSource.DYNAMIC_BROKER_CONFIG
        if name in self.broker.get(CLUSTER_DEFAULT, {}):
            return self.broker[CLUSTER_DEFAULT][name], ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
        return None

    def persist(self) -> None:
        data = {"version": 1, "broker": {level: values for level, values in self.broker.items() if values},
                "groups": {name: values for name, values in self.groups.items() if values}}
        write_json_atomically(self._path, data)
