"""The ACL set, kept in the data directory and matched against requests.

Kafka keeps ACLs as metadata records (``AccessControlEntryRecord``) replayed into the StandardAuthorizer's
cache; a single broker has no metadata log, so the whole set is one JSON file (``__acls.json``), rewritten
write-fsync-rename on every change (a crash leaves the old file or the new one, never half of one) and read
back at start. ACL changes are rare and the set small; lookups are what must be fast, so the set is
indexed by resource type and name: literal names in a dict, the ``*`` wildcard apart, prefixes in a dict
probed with each prefix of the name asked for.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable, Iterator

from .acl import AclBinding, AclBindingFilter, PatternType, ResourceType, WILDCARD_RESOURCE

ACL_FILE = "__acls.json"
FORMAT_VERSION = 1


class AclIndex:
    """Bindings by resource type: ``literal[name]``, ``prefixed[prefix]`` (lists, insertion ordered)."""

    def __init__(self, bindings: Iterable[AclBinding] = ()) -> None:
        self.literal: dict[ResourceType, dict[str, list[AclBinding]]] = {}
        self.prefixed: dict[ResourceType, dict[str, list[AclBinding]]] = {}
        self.prefix_lengths: dict[ResourceType, set[int]] = {}
        for b in bindings:
            self.add(b)

    def add(self, b: AclBinding) -> None:
        rtype, name = b.pattern.resource_type, b.pattern.name
        if b.pattern.pattern_type == PatternType.PREFIXED:
            self.prefixed.setdefault(rtype, {}).setdefault(name, []).append(b)
            self.prefix_lengths.setdefault(rtype, set()).add(len(name))
        else:
            self.literal.setdefault(rtype, {}).setdefault(name, []).append(b)

    def covering(self, rtype: ResourceType, name: str) -> Iterator[AclBinding]:
        """Every binding whose pattern covers ``name``: its literal ACLs, the wildcard's, its prefixes'."""
        literal = self.literal.get(rtype)
        if literal:
            yield from literal.get(name, ())
            if name != WILDCARD_RESOURCE:
                yield from literal.get(WILDCARD_RESOURCE, ())
        prefixed = self.prefixed.get(rtype)
        if prefixed:
            for n in self.prefix_lengths[rtype]:
                if n <= len(name):
                    yield from prefixed.get(name[:n], ())


class AclStore:
    """The persisted set of bindings; no duplicates (Kafka's AclControlManager keeps a set)."""

    def __init__(self, data_dir: Path | None) -> None:
        self.path = None if data_dir is None else Path(data_dir) / ACL_FILE
        self._bindings: dict[AclBinding, None] = {}
        self.index = AclIndex()
        self.generation = 0  # bumped on every change: the authorizer's remembered decisions are then dropped
        if self.path is not None and self.path.exists():
            self._load()

    def _load(self) -> None:
        assert self.path is not None
        doc = json.loads(self.path.read_text())
        if doc.get("version") != FORMAT_VERSION:
            raise ValueError(f"{self.path}: unknown ACL file version {doc.get('version')!r}")
        self._bindings = {AclBinding.from_json(d): None for d in doc["acls"]}
        self.index = AclIndex(self._bindings)
        self.generation += 1

    def _commit(self, bindings: dict[AclBinding, None]) -> None:
        """Write the new set durably, then serve it: a failed write (full disk) changes nothing."""
        self._save(bindings)
        self._bindings = bindings
        self.index = AclIndex(bindings)
        self.generation += 1

    def _save(self, bindings: dict[AclBinding, None]) -> None:
        if self.path is None:
            return
        tmp = self.path.with_suffix(".json.tmp")
        body = json.dumps({"version": FORMAT_VERSION, "acls": [b.to_json() for b in bindings]}, indent=1)
        with open(tmp, "w") as f:
            f.write(body)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def __len__(self) -> int:
        return len(self._bindings)

    def bindings(self) -> list[AclBinding]:
        return list(self._bindings)

    def matching(self, flt: AclBindingFilter) -> list[AclBinding]:
        return [b for b in self._bindings if flt.matches(b)]

    def add(self, bindings: Iterable[AclBinding]) -> None:
        """Add the new ones (an existing binding is already there: success, nothing written)."""
        new = [b for b in bindings if b not in self._bindings]
        if new:
            self._commit({**self._bindings, **dict.fromkeys(new)})

    def remove(self, filters: Iterable[AclBindingFilter]) -> list[list[AclBinding]]:
        """Per filter, the bindings it removed (a binding matched by two filters is reported by both, as
        Kafka's deleteAcls reports it), all removed in one write."""
        results = [self.matching(f) for f in filters]
        gone = {b for r in results for b in r}
        if gone:
            self._commit({b: None for b in self._bindings if b not in gone})
        return results
