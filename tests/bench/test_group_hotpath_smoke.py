"""bench.group_hotpath forms its groups (a few, quickly) and reports CPU per group."""

from __future__ import annotations

import asyncio

from bench import group_hotpath
from groupcoord.coordinator.broker import new_event_loop


def test_group_hotpath_forms_groups_and_reports(capsys):
    loop = new_event_loop()
    try:
        loop.run_until_complete(group_hotpath.run(groups=5, trials=2, warm=3))
    finally:
        loop.close()
        asyncio.set_event_loop(None)
    out = capsys.readouterr().out
    assert "5 groups of 3 per trial" in out and "ms CPU per group" in out
