"""Static membership (KIP-345): a restarted instance takes its old place without a rebalance."""

from groupcoord.coordinator.groups.lazy_requests import LeavingMember
from groupcoord.protocol.errors import ErrorCode
from tests.coordinator.groups.harness import subscription


def test_a_static_member_restarting_with_a_new_member_id_keeps_its_assignment_without_a_rebalance(h):
    ids = h.form_group("g", "a", "b", static=True)
    restarted = h.join("g", "", client_id="b", instance="instance-b")
    r = restarted.response
    assert r["error_code"] == ErrorCode.none and r["member_id"] != ids["b"] and r["generation_id"] == 1
    assert h.state("g") == "Stable"
    sync = h.sync("g", r["member_id"], 1, instance="instance-b")
    assert sync.response["assignment"] == f"assignment-of-{ids['b']}".encode()


def test_the_stale_incarnation_of_a_static_member_is_fenced(h):
    ids = h.form_group("g", "a", "b", static=True)
    h.join("g", "", client_id="b", instance="instance-b")
    assert h.heartbeat("g", ids["b"], 1, instance="instance-b") == ErrorCode.fenced_instance_id
    assert h.sync("g", ids["b"], 1, instance="instance-b").error == ErrorCode.fenced_instance_id
    assert h.join("g", ids["b"], client_id="b", instance="instance-b").error == ErrorCode.fenced_instance_id
    assert h.commit("g", {("orders", 0): 1}, generation=1, member_id=ids["b"], instance="instance-b") == {("orders", 0): ErrorCode.fenced_instance_id}
    leave = h.leave("g", LeavingMember(ids["b"], "instance-b"))
    assert leave["members"][0]["error_code"] == ErrorCode.fenced_instance_id


def test_a_restarted_static_leader_on_v9_is_told_to_skip_the_assignment(h):
    h.form_group("g", "a", "b", static=True)
    r = h.join("g", "", client_id="a", instance="instance-a", version=9).response
    assert r["leader"] == r["member_id"] and r["skip_assignment"] is True and len(r["members"]) == 2


def test_a_restarted_static_leader_before_v9_is_shown_the_old_leader_id_so_it_acts_as_a_follower(h):
    ids = h.form_group("g", "a", "b", static=True)
    r = h.join("g", "", client_id="a", instance="instance-a", version=8).response
    assert r["leader"] == ids["a"] and r["member_id"] != ids["a"] and r["skip_assignment"] is False
    assert h.group("g").leader_id == r["member_id"]


def test_a_static_member_returning_with_a_different_protocol_triggers_a_rebalance(h):
    h.form_group("g", "a", static=True)
    both = [("roundrobin", subscription("orders")), ("range", subscription("orders"))]
    t = h.join("g", "", client_id="a", instance="instance-a", protocols=both)
    assert (t.response["generation_id"], t.response["protocol_name"]) == (2, "roundrobin")


def test_a_static_member_returning_with_a_new_subscription_but_the_same_protocol_does_not_rebalance(h):
    h.form_group("g", "a", "b", static=True)
    t = h.join("g", "", client_id="b", instance="instance-b", protocols=[("range", subscription("orders", "payments"))])
    assert t.error == ErrorCode.none and h.state("g") == "Stable"


def test_a_static_member_returning_during_completing_rebalance_triggers_a_new_rebalance(h):
    tickets = {c: h.join("g", client_id=c, instance=f"instance-{c}") for c in ("a", "b")}
    h.advance_until(lambda: all(t.done for t in tickets.values()))
    assert h.state("g") == "CompletingRebalance"
    h.join("g", "", client_id="b", instance="instance-b")
    assert h.state("g") == "PreparingRebalance"


def test_static_members_that_do_not_rejoin_are_kept_until_their_session_expires(h):
    ids = h.form_group("g", "a", "b", static=True, session=30_000, rebalance=10_000)
    a = h.join("g", ids["a"], client_id="a", instance="instance-a", session=30_000, rebalance=10_000)
    h.advance(10_000)
    assert a.response["generation_id"] == 2
    assert ids["b"] in h.group("g").members  # a dynamic member would have been dropped here


def test_an_admin_can_remove_a_static_member_by_instance_id(h):
    ids = h.form_group("g", "a", "b", static=True)
    response = h.leave("g", LeavingMember("", "instance-b"), version=4)
    assert response["members"][0]["error_code"] == ErrorCode.none
    assert ids["b"] not in h.group("g").members


def test_a_static_member_joins_without_the_member_id_round_trip(h):
    t = h.join("g", "", client_id="a", instance="instance-a")
    assert not t.done  # parked in the initial delay: no MEMBER_ID_REQUIRED for static members
    h.advance(3000)
    assert t.error == ErrorCode.none
