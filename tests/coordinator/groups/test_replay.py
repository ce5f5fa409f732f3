"""Restarting from the log alone reproduces the state; so does a compacted log."""

from tests.coordinator.groups.harness import Harness


def snapshot(h: Harness) -> dict:
    out = {}
    for g in h.shard.iter_groups():
        out[g.group_id] = (
            g.state.value, g.generation, g.protocol_type, g.protocol_name, g.leader_id,
            tuple((m.member_id, m.group_instance_id, m.client_id, m.assignment, m.session_timeout_ms) for m in g.members.values()),
            tuple(sorted((tp, v.offset, v.metadata, v.leader_epoch, v.commit_timestamp, v.expire_timestamp) for tp, v in g.offsets.items())),
        )
    return out


def build_history(h: Harness) -> None:
    ids = h.form_group("stable", "a", "b", static=False)
    h.commit("stable", {("orders", 0): 10, ("orders", 1): 11}, generation=1, member_id=ids["a"], metadata="first")
    h.commit("stable", {("orders", 0): 20}, generation=1, member_id=ids["a"], metadata="second")
    statics = h.form_group("static", "s1", "s2", static=True)
    h.join("static", "", client_id="s2", instance="instance-s2")  # restarted static member: new id persisted
    emptied = h.form_group("emptied", "x")
    h.commit("emptied", {("payments", 1): 3}, generation=1, member_id=emptied["x"])
    h.leave("emptied", emptied["x"])
    h.commit("manual", {("orders", 2): 5}, retention_ms=600_000, version=2)
    gone = h.form_group("deleted", "d")
    h.commit("deleted", {("orders", 0): 1}, generation=1, member_id=gone["d"])
    h.leave("deleted", gone["d"])
    h.delete_group("deleted")
    h.offset_delete("manual", [("orders", (2,))])
    h.commit("manual", {("orders", 1): 6})
    assert statics


def compact(log):
    latest = {}
    for key, value in log:
        latest.pop(key, None)
        latest[key] = value
    return [(k, v) for k, v in latest.items() if v is not None]


def test_restart_from_the_records_reproduces_groups_and_offsets():
    h = Harness()
    build_history(h)
    before = snapshot(h)
    h.restart()
    assert snapshot(h) == before
    assert set(before) == {"stable", "static", "emptied", "manual"}


def test_replaying_a_compacted_log_gives_the_same_state():
    h = Harness()
    build_history(h)
    before = snapshot(h)
    compacted = compact(h.log)
    assert len(compacted) < len(h.log)
    h.restart(compacted)
    assert snapshot(h) == before


def test_a_restarted_coordinator_keeps_serving_the_loaded_group():
    h = Harness()
    ids = h.form_group("g", "a", "b")
    h.restart()
    assert h.state("g") == "Stable"
    assert h.heartbeat("g", ids["a"], 1).name == "none"
    rejoin = h.join("g", ids["b"], client_id="b")  # a follower with unchanged metadata
    assert rejoin.response["generation_id"] == 1


def test_loaded_members_that_never_come_back_expire_after_their_session(h):
    ids = h.form_group("g", "a", session=10_000)
    h.restart()
    h.advance(10_000)
    assert h.state("g") == "Empty" and ids["a"] not in h.group("g").members


def test_unknown_record_types_are_skipped_on_load(h):
    h.commit("g", {("orders", 0): 1})
    h.log.insert(0, (b"\x00\x09\x00\x01x", b"\x00\x00"))  # type 9: Kafka 4.0's ShareGroupPartitionMetadata
    h.restart()
    assert h.committed("g") == {("orders", 0): 1}
