"""LeaveGroup: members leave at once; the last one leaving empties the group immediately."""

from groupcoord.coordinator.groups.lazy_requests import LeavingMember
from groupcoord.protocol.errors import ErrorCode
from groupcoord.coordinator.groups.offsets_records import GroupMetadataKey, decode_key, decode_value


def test_the_last_member_leaving_empties_the_group_at_once_and_persists_it(h):
    ids = h.form_group("g", "a")
    response = h.leave("g", ids["a"])
    assert response["error_code"] == ErrorCode.none
    assert h.state("g") == "Empty"  # no waiting for a session timeout
    key = decode_key(h.log[-1][0])
    assert isinstance(key, GroupMetadataKey)
    value = decode_value(key, h.log[-1][1])
    assert value.members == () and value.generation == 2 and value.protocol is None


def test_a_follower_leaving_makes_the_others_rebalance(h):
    ids = h.form_group("g", "a", "b")
    h.leave("g", ids["b"])
    assert h.state("g") == "PreparingRebalance"
    rejoin = h.join("g", ids["a"], client_id="a")
    assert rejoin.response["generation_id"] == 2 and rejoin.response["leader"] == ids["a"]


def test_the_leader_leaving_hands_leadership_to_a_member_that_rejoins(h):
    ids = h.form_group("g", "a", "b")
    h.leave("g", ids["a"])
    rejoin = h.join("g", ids["b"], client_id="b")
    assert rejoin.response["leader"] == ids["b"] and len(rejoin.response["members"]) == 1


def test_batch_leave_reports_each_member(h):
    ids = h.form_group("g", "a", "b", "c")
    response = h.leave("g", ids["a"], "ghost", LeavingMember("", "unknown-instance"), version=3)
    assert response["error_code"] == ErrorCode.none
    assert [m["error_code"] for m in response["members"]] == [ErrorCode.none, ErrorCode.unknown_member_id, ErrorCode.unknown_member_id]
    assert set(h.group("g").members) == {ids["b"], ids["c"]}


def test_version_0_to_2_report_the_single_members_error_at_the_top(h):
    h.form_group("g", "a")
    response = h.leave("g", "ghost", version=1)
    assert response["error_code"] == ErrorCode.unknown_member_id


def test_unknown_group_and_empty_group_id(h):
    assert h.leave("nope", "x")["error_code"] == ErrorCode.unknown_member_id
    assert h.leave("", "x")["error_code"] == ErrorCode.invalid_group_id


def test_a_parked_joiner_that_leaves_no_longer_holds_up_the_rebalance(h):
    ids = h.form_group("g", "a", "b")
    a = h.join("g", ids["a"], client_id="a")
    h.join("g", ids["b"], client_id="b", protocols=[("range", b"x")])  # parked
    assert a.response["generation_id"] == 2
    h.leave("g", ids["b"])
    assert h.state("g") == "PreparingRebalance"
    again = h.join("g", ids["a"], client_id="a")
    assert again.response["generation_id"] == 3 and again.response["members"][0]["member_id"] == ids["a"]


def test_a_pending_member_can_leave_before_it_ever_joined(h):
    h.form_group("g", "a")
    pending = h.join("g", client_id="late").response["member_id"]
    response = h.leave("g", pending)
    assert response["error_code"] == ErrorCode.none
    assert pending not in h.group("g").pending_members
