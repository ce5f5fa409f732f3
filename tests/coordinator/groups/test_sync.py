"""SyncGroup scenarios: the leader's assignment is persisted, then every member gets its own share."""

from groupcoord.protocol.errors import ErrorCode
from groupcoord.coordinator.groups.offsets_records import GroupMetadataKey, decode_key, decode_value


def _joined(h, *clients):
    tickets = {c: h.join_new("g", client_id=c) for c in clients}
    h.advance_until(lambda: all(t.done for t in tickets.values()))
    return {c: t.response for c, t in tickets.items()}


def _group_records(h):
    out = []
    for k, v in h.log:
        key = decode_key(k)
        if isinstance(key, GroupMetadataKey):
            out.append(decode_value(key, v))
    return out


def test_followers_wait_for_the_leader_and_then_get_their_own_assignment(h):
    r = _joined(h, "a", "b", "c")
    gen, leader, b, c = r["a"]["generation_id"], r["a"]["member_id"], r["b"]["member_id"], r["c"]["member_id"]
    follower = h.sync("g", b, gen)
    assert not follower.done
    lead = h.sync("g", leader, gen, [(leader, b"A"), (b, b"B"), (c, b"C")])
    assert lead.response["assignment"] == b"A" and follower.response["assignment"] == b"B"
    assert lead.response["protocol_type"] == "consumer" and lead.response["protocol_name"] == "range"
    assert h.state("g") == "Stable"
    late = h.sync("g", c, gen)  # arrives after the leader: still gets its assignment
    assert late.error == ErrorCode.none and late.response["assignment"] == b"C"


def test_the_assignment_is_written_to_the_log_before_anyone_is_answered(h):
    r = _joined(h, "a", "b")
    gen, leader, b = r["a"]["generation_id"], r["a"]["member_id"], r["b"]["member_id"]
    h.sync("g", leader, gen, [(leader, b"A"), (b, b"B")])
    stored = _group_records(h)[-1]
    assert (stored.generation, stored.leader, stored.protocol) == (gen, leader, "range")
    assert {m.member_id: m.assignment for m in stored.members} == {leader: b"A", b: b"B"}


def test_members_the_leader_left_out_get_an_empty_assignment(h):
    r = _joined(h, "a", "b")
    gen, leader, b = r["a"]["generation_id"], r["a"]["member_id"], r["b"]["member_id"]
    follower = h.sync("g", b, gen)
    h.sync("g", leader, gen, [(leader, b"everything")])
    assert follower.error == ErrorCode.none and follower.response["assignment"] == b""


def test_sync_errors_follow_kafka(h):
    r = _joined(h, "a", "b")
    gen, leader, b = r["a"]["generation_id"], r["a"]["member_id"], r["b"]["member_id"]
    assert h.sync("nope", "x", 1).error == ErrorCode.unknown_member_id
    assert h.sync("g", "ghost", gen).error == ErrorCode.unknown_member_id
    assert h.sync("g", b, gen + 1).error == ErrorCode.illegal_generation
    assert h.sync("g", b, gen, protocol_name="roundrobin").error == ErrorCode.inconsistent_group_protocol
    assert h.sync("g", b, gen, protocol_type="connect").error == ErrorCode.inconsistent_group_protocol
    assert h.sync("g", b, gen, instance="not-registered").error == ErrorCode.unknown_member_id
    assert h.sync("", b, gen).error == ErrorCode.invalid_group_id
    ok = h.sync("g", leader, gen, [(leader, b"A")], protocol_type="consumer", protocol_name="range")
    assert ok.error == ErrorCode.none


def test_sync_during_a_new_rebalance_says_rebalance_in_progress(h):
    ids = h.form_group("g", "a", "b")
    h.join("g", ids["a"], client_id="a")
    assert h.sync("g", ids["b"], 1).error == ErrorCode.rebalance_in_progress


def test_parked_followers_are_told_to_rejoin_when_a_rebalance_starts_before_the_leader_syncs(h):
    r = _joined(h, "a", "b", "c")
    gen, b, c = r["a"]["generation_id"], r["b"]["member_id"], r["c"]["member_id"]
    follower = h.sync("g", b, gen)
    h.leave("g", c)
    assert follower.error == ErrorCode.rebalance_in_progress
    assert h.state("g") == "PreparingRebalance"


def test_sync_on_an_empty_group_is_unknown_member(h):
    ids = h.form_group("g", "a")
    h.leave("g", ids["a"])
    assert h.sync("g", ids["a"], 2).error == ErrorCode.unknown_member_id


def test_a_parked_sync_of_a_member_removed_by_an_admin_is_answered_not_left_hanging(h):
    # Kafka drops the parked SyncGroup of a removed member and the client waits for its request timeout;
    # here it is answered UNKNOWN_MEMBER_ID at once.
    from groupcoord.coordinator.groups.lazy_requests import LeavingMember

    tickets = {c: h.join("g", client_id=c, instance=f"instance-{c}") for c in ("a", "b", "c")}
    h.advance_until(lambda: all(t.done for t in tickets.values()))
    parked = h.sync("g", tickets["c"].response["member_id"], 1, instance="instance-c")
    h.leave("g", LeavingMember("", "instance-c"))
    assert parked.error == ErrorCode.unknown_member_id


def test_a_parked_sync_of_a_replaced_static_member_is_fenced(h):
    tickets = {c: h.join("g", client_id=c, instance=f"instance-{c}") for c in ("a", "b")}
    h.advance_until(lambda: all(t.done for t in tickets.values()))
    parked = h.sync("g", tickets["b"].response["member_id"], 1, instance="instance-b")
    h.join("g", "", client_id="b", instance="instance-b")
    assert parked.error == ErrorCode.fenced_instance_id


def test_the_group_stays_completing_until_the_leaders_assignment_is_durable(h):
    """Kafka's classicGroupSyncToLeader: the state changes, and anyone is answered, in the append's completion."""
    r = _joined(h, "a", "b")
    gen, leader, b = r["a"]["generation_id"], r["a"]["member_id"], r["b"]["member_id"]
    h.hold_writes()
    lead = h.sync("g", leader, gen, [(leader, b"A"), (b, b"B")])
    follower = h.sync("g", b, gen)
    assert _group_records(h)[-1].generation == gen  # written, not yet durable
    assert h.state("g") == "CompletingRebalance" and not lead.done and not follower.done
    assert h.heartbeat("g", b, gen) == ErrorCode.none  # (as in CompletingRebalance before the leader's sync)
    h.make_durable()
    assert h.state("g") == "Stable"
    assert (lead.response["assignment"], follower.response["assignment"]) == (b"A", b"B")


def test_a_member_joining_while_the_assignment_is_written_sends_everyone_back_to_join_at_once(h):
    """The race a group of consumers started together runs: a member whose JoinGroup comes after the leader's
    SyncGroup but before its record is durable starts the next rebalance, and the members awaiting their
    assignment, the leader among them, are answered REBALANCE_IN_PROGRESS then, as Kafka answers them, not
    Stable and told at their next Heartbeat. The record's completion then leaves the group as the join left it."""
    r = _joined(h, "a", "b")
    gen, leader, b = r["a"]["generation_id"], r["a"]["member_id"], r["b"]["member_id"]
    h.hold_writes()
    lead = h.sync("g", leader, gen, [(leader, b"A"), (b, b"B")])
    follower = h.sync("g", b, gen)
    late = h.join_new("g", client_id="c")
    assert h.state("g") == "PreparingRebalance"
    assert lead.error == ErrorCode.rebalance_in_progress and follower.error == ErrorCode.rebalance_in_progress
    h.make_durable()
    assert h.state("g") == "PreparingRebalance" and not late.done
    again = {c: h.join("g", r[c]["member_id"], client_id=c) for c in ("a", "b")}
    h.advance_until(lambda: late.done and all(t.done for t in again.values()))
    assert late.response["generation_id"] == gen + 1 and len(again["a"].response["members"]) == 3


def test_an_assignment_not_durable_in_time_sends_the_group_back_to_rebalance(h):
    """Kafka's classicGroupSyncToLeader when the append fails (its write timeout among the causes): the members
    awaiting the assignment get the error, none takes its share, and the group prepares the next rebalance."""
    r = _joined(h, "a", "b")
    gen, leader, b = r["a"]["generation_id"], r["a"]["member_id"], r["b"]["member_id"]
    h.hold_writes()
    follower = h.sync("g", b, gen)
    lead = h.sync("g", leader, gen, [(leader, b"A"), (b, b"B")])
    h.make_durable(ErrorCode.coordinator_not_available)
    assert lead.error == ErrorCode.coordinator_not_available and follower.error == ErrorCode.coordinator_not_available
    assert lead.response["assignment"] == b"" and h.state("g") == "PreparingRebalance"
