"""A large KIP-848 group: hundreds of members join one by one, reconcile by revoking before they receive, and
end balanced with every partition owned exactly once — never by two members at any step."""

from groupcoord.protocol.errors import ErrorCode
from tests.coordinator.groups.harness import FakeTopics, Harness

MEMBERS, PARTITIONS = 500, 1000


def partitions_of(response: dict) -> list[int] | None:
    if response["assignment"] is None:
        return None
    return sorted(p for tp in response["assignment"]["topic_partitions"] for p in tp["partitions"])


def test_five_hundred_members_reconcile_to_a_balanced_assignment():
    h = Harness(FakeTopics(orders=PARTITIONS))
    epochs: dict[str, int] = {}
    owned: dict[str, list[int]] = {}
    for i in range(MEMBERS):
        member = f"member-{i:04d}"
        joined = h.cg_join("orders-service", member)
        assert joined["error_code"] == ErrorCode.none
        epochs[member], owned[member] = joined["member_epoch"], partitions_of(joined) or []

    for _ in range(5):  # heartbeat rounds, each member reporting what it owns
        changed = False
        for member in epochs:
            answer = h.cg("orders-service", member, epochs[member], owned={"orders": owned[member]})
            assert answer["error_code"] == ErrorCode.none
            new = partitions_of(answer)
            changed |= answer["member_epoch"] != epochs[member] or (new is not None and new != owned[member])
            epochs[member] = answer["member_epoch"]
            owned[member] = owned[member] if new is None else new
            everything = [p for ps in owned.values() for p in ps]
            assert len(everything) == len(set(everything)), "a partition was owned by two members"
        if not changed:
            break

    group = h.cg_group("orders-service")
    assert group.state.value == "Stable" and set(epochs.values()) == {group.group_epoch}
    assert sorted(p for ps in owned.values() for p in ps) == list(range(PARTITIONS))
    assert {len(ps) for ps in owned.values()} == {PARTITIONS // MEMBERS}
