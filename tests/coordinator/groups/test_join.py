"""JoinGroup scenarios: first join, the initial delay, rejoins, the protocol vote and every JoinGroup error."""

from groupcoord.protocol.errors import ErrorCode
from tests.coordinator.groups.harness import Harness, subscription

RANGE = ("range", subscription("orders"))
ROUNDROBIN = ("roundrobin", subscription("orders"))


def test_a_new_consumer_gets_a_member_id_first_then_leads_generation_one_after_the_initial_delay(h):
    first = h.join("g", client_id="app")
    assert first.error == ErrorCode.member_id_required
    member_id = first.response["member_id"]
    assert member_id.startswith("app-")
    assert h.state("g") == "Empty"  # a pending member does not start a rebalance

    joined = h.join("g", member_id, client_id="app")
    assert not joined.done and h.state("g") == "PreparingRebalance"
    h.advance(2999)
    assert not joined.done
    h.advance(1)
    r = joined.response
    assert r["error_code"] == ErrorCode.none
    assert (r["generation_id"], r["leader"], r["member_id"], r["protocol_name"], r["protocol_type"]) == (1, member_id, member_id, "range", "consumer")
    assert r["members"] == [{"member_id": member_id, "group_instance_id": None, "metadata": RANGE[1]}]
    assert h.state("g") == "CompletingRebalance"


def test_old_clients_before_v4_join_without_the_member_id_round_trip(h):
    t = h.join("g", version=3)
    assert not t.done
    h.advance(3000)
    assert t.error == ErrorCode.none and t.response["member_id"]


def test_the_initial_delay_is_extended_while_members_keep_arriving_but_not_beyond_the_rebalance_timeout():
    h = Harness()
    tickets = [h.join_new("g", client_id="c0", rebalance=10_000)]
    for i in range(1, 4):  # a new member every 2.5 s
        h.advance(2500)
        tickets.append(h.join_new("g", client_id=f"c{i}", rebalance=10_000))
    h.advance(9_999 - 7_500)
    assert not any(t.done for t in tickets)
    h.advance(1)  # t = 10 s: the rebalance timeout bounds the wait
    assert all(t.error == ErrorCode.none for t in tickets)
    assert {t.response["generation_id"] for t in tickets} == {1}


def test_a_group_emptied_after_some_generations_extends_its_initial_delay_as_a_new_group_does():
    """Kafka 4's group coordinator extends the initial delay for members added while the rebalance that started from
    Empty runs (GroupMetadataManager: previousState == EMPTY), whatever the generation; the old Scala coordinator
    only did at generation 0. A group whose members all left is such a group again."""
    h = Harness()
    ids = h.form_group("g", "old")
    h.leave("g", ids["old"])
    assert h.state("g") == "Empty" and h.group("g").generation >= 1
    tickets = [h.join_new("g", client_id="c0", rebalance=10_000)]
    for i in (1, 2):  # a new member every 2.5 s: each deadline finds one added since the last
        h.advance(2500)
        tickets.append(h.join_new("g", client_id=f"c{i}", rebalance=10_000))
    h.advance(8_999 - 5_000)
    assert not any(t.done for t in tickets), "extended at 3 s and 6 s"
    h.advance(1)  # 9 s: nobody added since 6 s
    assert all(t.error == ErrorCode.none for t in tickets)
    assert len({t.response["generation_id"] for t in tickets}) == 1 and len(tickets[0].response["members"]) == 3


def test_a_lone_member_is_not_kept_waiting_longer_than_the_initial_delay(h):
    t = h.join_new("g")
    h.advance(3000)
    assert t.done


def test_only_the_leader_receives_the_members_metadata(h):
    tickets = {c: h.join_new("g", client_id=c) for c in ("a", "b", "c")}
    h.advance_until(lambda: all(t.done for t in tickets.values()))
    leader = tickets["a"].response["leader"]
    assert leader == tickets["a"].response["member_id"]
    assert len(tickets["a"].response["members"]) == 3
    assert tickets["b"].response["members"] == [] and tickets["c"].response["members"] == []
    assert {t.response["leader"] for t in tickets.values()} == {leader}


def test_a_follower_rejoining_with_unchanged_metadata_gets_the_current_generation_without_a_rebalance(h):
    ids = h.form_group("g", "a", "b")
    again = h.join("g", ids["b"], client_id="b")
    assert again.error == ErrorCode.none and again.response["generation_id"] == 1 and again.response["members"] == []
    assert h.state("g") == "Stable"


def test_the_leader_rejoining_forces_a_rebalance_that_completes_when_everyone_rejoined(h):
    ids = h.form_group("g", "a", "b")
    leader_join = h.join("g", ids["a"], client_id="a")
    assert not leader_join.done and h.state("g") == "PreparingRebalance"
    assert h.heartbeat("g", ids["b"], 1) == ErrorCode.rebalance_in_progress
    follower_join = h.join("g", ids["b"], client_id="b")
    assert leader_join.response["generation_id"] == follower_join.response["generation_id"] == 2
    assert h.state("g") == "CompletingRebalance"


def test_a_member_changing_its_subscription_triggers_a_rebalance(h):
    ids = h.form_group("g", "a", "b")
    changed = h.join("g", ids["b"], client_id="b", protocols=[("range", subscription("orders", "payments"))])
    assert not changed.done and h.state("g") == "PreparingRebalance"


def test_members_that_do_not_rejoin_before_the_rebalance_timeout_are_removed(h):
    ids = h.form_group("g", "a", "b", "c", rebalance=20_000)
    a = h.join("g", ids["a"], client_id="a", rebalance=20_000)
    b = h.join("g", ids["b"], client_id="b", rebalance=20_000)
    for _ in range(3):  # c keeps heartbeating but never rejoins
        h.advance(5_000)
        h.heartbeat("g", ids["c"], 1)
    h.advance(5_000)
    assert a.response["generation_id"] == 2 and b.done
    assert set(h.group("g").members) == {ids["a"], ids["b"]}
    assert h.heartbeat("g", ids["c"], 1) == ErrorCode.unknown_member_id


def test_when_the_leader_does_not_rejoin_a_member_that_did_becomes_leader(h):
    ids = h.form_group("g", "a", "b")
    b = h.join("g", ids["b"], client_id="b", protocols=[("range", subscription("orders", "payments"))])
    h.advance(30_000)
    assert b.response["leader"] == ids["b"] and len(b.response["members"]) == 1


def test_each_member_votes_for_its_first_choice_among_protocols_everyone_supports(h):
    both_range_first = [("range", b"r"), ("roundrobin", b"rr")]
    both_rr_first = [("roundrobin", b"rr"), ("range", b"r")]
    tickets = [
        h.join_new("g", client_id="a", protocols=both_range_first),
        h.join_new("g", client_id="b", protocols=both_rr_first),
        h.join_new("g", client_id="c", protocols=both_range_first),
    ]
    h.advance_until(lambda: all(t.done for t in tickets))
    assert {t.response["protocol_name"] for t in tickets} == {"range"}
    leader = tickets[0].response
    assert {m["metadata"] for m in leader["members"]} == {b"r"}  # the leader sees metadata of the chosen protocol


def test_a_protocol_not_supported_by_everyone_cannot_win_the_vote(h):
    tickets = [
        h.join_new("g", client_id="a", protocols=[("sticky", b"s"), ("range", b"r")]),
        h.join_new("g", client_id="b", protocols=[("sticky", b"s"), ("range", b"r")]),
        h.join_new("g", client_id="c", protocols=[("range", b"r")]),
    ]
    h.advance_until(lambda: all(t.done for t in tickets))
    assert {t.response["protocol_name"] for t in tickets} == {"range"}


def test_inconsistent_group_protocol(h):
    h.join_new("g", client_id="a", protocols=[RANGE])
    assert h.join("g", client_id="x", protocols=[("sticky", b"s")]).error == ErrorCode.inconsistent_group_protocol
    assert h.join("g", client_id="y", protocol_type="connect", protocols=[RANGE]).error == ErrorCode.inconsistent_group_protocol
    assert h.join("empty", client_id="z", protocols=[]).error == ErrorCode.inconsistent_group_protocol
    assert h.join("empty2", client_id="z", protocol_type="").error == ErrorCode.inconsistent_group_protocol


def test_session_timeout_outside_the_broker_bounds_is_rejected(h):
    assert h.join("g", session=5_999).error == ErrorCode.invalid_session_timeout
    assert h.join("g", session=1_800_001).error == ErrorCode.invalid_session_timeout
    assert h.join("g", session=6_000).error == ErrorCode.member_id_required


def test_an_empty_group_id_is_invalid(h):
    assert h.join("").error == ErrorCode.invalid_group_id


def test_unknown_member_ids_are_rejected(h):
    assert h.join("nobody-here", "ghost").error == ErrorCode.unknown_member_id
    h.form_group("g", "a")
    assert h.join("g", "ghost").error == ErrorCode.unknown_member_id


def test_the_group_max_size_turns_away_new_members():
    h = Harness(group_max_size=2)
    ids = h.form_group("g", "a", "b")
    assert h.join("g", client_id="c").error == ErrorCode.group_max_size_reached
    assert set(h.group("g").members) == set(ids.values())


def test_a_group_over_its_max_size_while_rebalancing_drops_the_excess_rejoiners():
    h = Harness(group_max_size=3)
    ids = h.form_group("g", "a", "b", "c")
    h.shard.config = h.config.replace(group_max_size=2)  # the operator lowers the limit
    a = h.join("g", ids["a"], client_id="a")
    b = h.join("g", ids["b"], client_id="b")
    c = h.join("g", ids["c"], client_id="c")
    assert c.error == ErrorCode.group_max_size_reached
    assert a.response["generation_id"] == b.response["generation_id"] == 2
    assert set(h.group("g").members) == {ids["a"], ids["b"]}


def test_a_loading_shard_answers_coordinator_load_in_progress(h):
    h.shard.begin_load()
    assert h.join("g").error == ErrorCode.coordinator_load_in_progress


def test_a_member_joining_twice_while_parked_gets_its_first_request_answered(h):
    ids = h.form_group("g", "a", "b")
    first = h.join("g", ids["b"], client_id="b", protocols=[("range", subscription("payments"))])
    second = h.join("g", ids["b"], client_id="b", protocols=[("range", subscription("payments"))])
    assert first.error == ErrorCode.rebalance_in_progress
    assert not second.done


def test_a_tied_protocol_vote_goes_to_the_first_members_preference_every_time(h):
    # Kafka breaks ties by hash-map order, so the winner can differ between runs; here it cannot.
    tickets = [
        h.join_new("g", client_id="a", protocols=[("roundrobin", b"rr"), ("range", b"r")]),
        h.join_new("g", client_id="b", protocols=[("range", b"r"), ("roundrobin", b"rr")]),
    ]
    h.advance_until(lambda: all(t.done for t in tickets))
    assert {t.response["protocol_name"] for t in tickets} == {"roundrobin"}
