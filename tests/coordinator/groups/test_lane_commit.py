"""The commit lane (offsets.commit.commit_lane) takes a commit exactly when the handler's group check
(commit_group_error) accepts it — no group, an empty classic one, a member at its generation; refused for a
group with members, a rebalance, a consumer group, an empty id, a shard that does not serve — and what it takes,
it queues as the handler's records, with the request's reply and answer."""

from __future__ import annotations

from collections import defaultdict

import pytest

from groupcoord.coordinator.groups.offsets.commit import commit_group_error, commit_lane
from groupcoord.coordinator.groups.offsets_records import OffsetCommitKey, OffsetCommitValue
from tests.coordinator.groups.harness import Harness

TOPICS = [("orders", [(0, 5, -1, None)])]


def _lane(h: Harness) -> tuple[list, object]:
    """The lane on the harness's one shard (every group maps to it), and what it queues."""
    queued: list = []
    commit = commit_lane([h.shard.state], defaultdict(int), lambda *args: queued.append(args), h.clock)
    return queued, commit


def _agree(h: Harness, group: str, generation: int = -1, member_id: str = "", version: int = 8) -> bool:
    state = h.shard.state
    refused = commit_group_error(state, group, generation, member_id, None, version) is not None
    queued, commit = _lane(h)
    taken = commit(group, generation, member_id, None, version, TOPICS, "reply", "response")
    assert taken != refused
    assert len(queued) == (1 if taken else 0)
    return taken


def test_a_standalone_commit_to_no_group_then_to_its_empty_group_is_taken(h):
    assert _agree(h, "manual")
    assert h.state("manual") == "Empty"
    assert _agree(h, "manual")
    assert h.committed("manual") == {("orders", 0): 5}


def test_a_standalone_commit_to_a_group_with_members_is_left_to_the_handler(h):
    ids = h.form_group("g", "a")
    assert not _agree(h, "g")
    assert not _agree(h, "g", member_id="ghost")
    assert _agree(h, "g", generation=1, member_id=ids["a"])


def test_a_group_in_a_rebalance_is_judged_by_the_full_check(h):
    h.join_new("g", client_id="a")
    assert not _agree(h, "g")
    h.advance(3000)
    assert not _agree(h, "g")


def test_a_consumer_group_an_empty_id_and_a_shard_that_does_not_serve_are_left_to_the_handler(h):
    h.cg_join("cg", "m1")
    assert not _agree(h, "cg")
    assert not _agree(h, "")
    h.shard.state.loading = True
    assert not _agree(h, "fresh")
    h.shard.state.loading = False
    h.shard.state.unavailable = "corrupt log"
    assert not _agree(h, "fresh")


@pytest.mark.parametrize("version", [8, 9])
def test_a_generation_on_an_unknown_group_is_left_to_the_handler(h, version):
    assert not _agree(h, "unknown", generation=3, member_id="m", version=version)


def test_the_records_are_the_handlers(h):
    queued, commit = _lane(h)
    assert commit("g", -1, "", None, 8, [("orders", [(1, 42, 3, "meta"), (2, 7, -1, None)])], "reply", "response")
    assert queued == [(0, [(OffsetCommitKey("g", "orders", 1), OffsetCommitValue(42, 3, "meta", h.now, None)),
                           (OffsetCommitKey("g", "orders", 2), OffsetCommitValue(7, -1, "", h.now, None))],
                       "reply", "response")]


def test_an_unknown_topic_or_partition_or_oversized_metadata_is_left_to_the_handler(h):
    queued, commit = _lane(h)
    assert not commit("g", -1, "", None, 8, [("nope", [(0, 1, -1, None)])], "reply", "response")
    assert not commit("g", -1, "", None, 8, [("orders", [(3, 1, -1, None)])], "reply", "response")
    assert not commit("g", -1, "", None, 8, [("orders", [(0, 1, -1, "x" * 5000)])], "reply", "response")
    assert not commit("g", -1, "", None, 8, [], "reply", "response")
    assert queued == [] and h.committed("g") == {}
