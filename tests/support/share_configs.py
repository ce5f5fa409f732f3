"""Whether this build accepts the share-group configs a share-group client test sets through
IncrementalAlterConfigs (``share.auto.offset.reset`` above all: without it a test's records may be produced
before the share partition starts, at the latest offset). The per-group config table lives in
``coordinator/dataplane/group_configs.py``; until it lists the share configs those tests skip, saying why."""

from __future__ import annotations

import pytest

from groupcoord.coordinator.dataplane import group_configs

SHARE_GROUP_CONFIGS = ("share.auto.offset.reset", "share.record.lock.duration.ms")


def share_group_configs_served() -> bool:
    return all(name in group_configs.GROUP_CONFIGS for name in SHARE_GROUP_CONFIGS)


requires_share_group_configs = pytest.mark.skipif(
    not share_group_configs_served(),
    reason="group configs share.auto.offset.reset/share.record.lock.duration.ms are not served by this build "
           "(coordinator/dataplane/group_configs.py)")
