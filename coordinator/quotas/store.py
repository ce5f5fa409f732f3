"""The client quotas of this broker: AlterClientQuotas' writes (validated as Kafka's ClientQuotaControlManager,
persisted in ``DATA_DIR/client-quotas.json`` before the answer, replaced crash-safely) and DescribeClientQuotas'
reads (ClientQuotasImage.describe). Every change is handed to the quota managers that enforce it.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from groupcoord.protocol.errors import ErrorCode

from groupcoord.coordinator.dataplane.atomic_json import write_json_atomically
from groupcoord.coordinator.quotas.entities import QuotaEntity, QuotaRefused, validate_entity, validate_value
from groupcoord.coordinator.quotas.managers import QuotaManagers

if TYPE_CHECKING:
    from groupcoord.coordinator.quotas.alterations import Alteration, AlterOutcome
    from groupcoord.coordinator.quotas.quota_filter import QuotaFilter

CLIENT_QUOTAS_FILE = "client-quotas.json"


def __getattr__(name: str) -> object:
    """``Alteration`` and ``AlterOutcome``, from alterations.py (imported by AlterClientQuotas only)."""
    if name in ("Alteration", "AlterOutcome"):
        from groupcoord.coordinator.quotas import alterations

        return getattr(alterations, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ClientQuotaStore:
    def __init__(self, path: Path | None, managers: QuotaManagers,
                 on_change: Callable[[], None] | None = None) -> None:
        self._path = path
        self.managers = managers
        self._on_change = on_change
        self.quotas: dict[QuotaEntity, dict[str, float]] = {}
        if path is not None and path.exists():
            for item in json.loads(path.read_text()).get("quotas", []):
                entity = QuotaEntity.of((kind, name) for kind, name in item["entity"].items())
                self.quotas[entity] = {k: float(v) for k, v in item["values"].items()}
        for entity, values in self.quotas.items():
            for key, value in values.items():
                managers.apply(entity, key, value)

    @classmethod
    def open(cls, data_dir: Path, managers: QuotaManagers, on_change: Callable[[], None] | None = None
             ) -> "ClientQuotaStore":
        return cls(Path(data_dir) / CLIENT_QUOTAS_FILE, managers, on_change)

    # -- AlterClientQuotas ------------------------------------------------------------------------
    def alter(self, alterations: list[Alteration], validate_only: bool) -> list[AlterOutcome]:
        """ClientQuotaControlManager.alterClientQuotas: each entity validated on its own, all valid ones applied
        together and persisted before the answer. An entity named twice (or a key twice in one entity) is answered
        INVALID_REQUEST "Ignoring duplicate entity"; as in Kafka, the first alteration of a twice-named entity is
        still applied."""
        from groupcoord.coordinator.quotas.alterations import AlterOutcome

        results: dict[QuotaEntity | tuple, AlterOutcome] = {}
        planned: list[tuple[QuotaEntity, dict[str, float | None]]] = []
        for alteration in alterations:
            # the request's entity is a map: a type given twice keeps its last name (AlterClientQuotasRequest.entries)
            as_map = dict(alteration.entity)
            key_of = QuotaEntity.of(as_map.items())
            wire = list(as_map.items())
            changes: dict[str, float | None] = {}
            duplicate_key = None
            for op_key, value in alteration.ops:
                if op_key in changes:
                    duplicate_key = op_key
                else:
                    changes[op_key] = value
            if key_of in results or duplicate_key is not None:
                results[key_of] = AlterOutcome(wire, ErrorCode.invalid_request,
                                               f"Ignoring duplicate entity {key_of}")
                continue
            try:
                entity, keys = validate_entity(list(alteration.entity))
                for op_key, value in changes.items():
                    if value is not None:
                        validate_value(keys, op_key, value)
            except QuotaRefused as refused:
                results[key_of] = AlterOutcome(wire, refused.error, refused.message)
                continue
            results[key_of] = AlterOutcome(wire, ErrorCode.none, None)
            planned.append((entity, changes))
        if not validate_only and planned:
            self._apply(planned)
        return list(results.values())

    def _apply(self, planned: list[tuple[QuotaEntity, dict[str, float | None]]]) -> None:
        for entity, changes in planned:
            values = self.quotas.setdefault(entity, {})
            for key, value in changes.items():
                if value is None:
                    values.pop(key, None)
                else:
                    values[key] = value
            if not values:
                del self.quotas[entity]
        self._persist()
        for entity, changes in planned:
            for key, value in changes.items():
                self.managers.apply(entity, key, value)
        if self._on_change is not None:
            self._on_change()

    def _persist(self) -> None:
        if self._path is None:
            return
        write_json_atomically(self._path, {"version": 1, "quotas": [
            {"entity": entity.to_json(), "values": values} for entity, values in self.quotas.items()]})

    # -- DescribeClientQuotas ---------------------------------------------------------------------
    def describe(self, quota_filter: QuotaFilter) -> list[tuple[QuotaEntity, dict[str, float]]]:
        return [(entity, dict(values)) for entity, values in self.quotas.items() if quota_filter.matches(entity)]
