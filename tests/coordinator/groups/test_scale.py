"""Large groups: a thousand members join and sync through one rebalance without quadratic work."""

from groupcoord.protocol.errors import ErrorCode
from tests.coordinator.groups.harness import Harness


def test_a_thousand_members_join_sync_and_rejoin():
    h = Harness()
    n = 1000
    tickets = [h.join_new("big", client_id=f"c{i}", rebalance=60_000) for i in range(n)]
    h.advance_until(lambda: tickets[-1].done)
    responses = [t.response for t in tickets]
    assert all(r["error_code"] == ErrorCode.none and r["generation_id"] == 1 for r in responses)
    leaders = [r for r in responses if r["members"]]
    assert len(leaders) == 1 and len(leaders[0]["members"]) == n
    assignment = [(m["member_id"], b"p") for m in leaders[0]["members"]]
    syncs = [h.sync("big", r["member_id"], 1, assignment if r["members"] else ()) for r in responses]
    assert all(s.response["assignment"] == b"p" for s in syncs)
    assert h.state("big") == "Stable"
    # everyone rejoins (a leader-triggered rebalance): the join completes on the last rejoin
    rejoins = [h.join("big", r["member_id"], client_id=f"c{i}", rebalance=60_000) for i, r in enumerate(responses)]
    assert all(t.response["generation_id"] == 2 for t in rejoins)
