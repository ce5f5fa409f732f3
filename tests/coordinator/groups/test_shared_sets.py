"""Equal frozensets of members and groups are one object; the table stays bounded."""

from groupcoord.coordinator.groups.classic import shared_sets
from groupcoord.coordinator.groups.classic.member import ClassicMember
from groupcoord.coordinator.groups.classic.shared_sets import shared_frozenset


def _member(member_id: str, names: tuple[str, ...]) -> ClassicMember:
    return ClassicMember(member_id, None, "c", "/127.0.0.1", 1000, 1000, "consumer",
                         tuple((name, b"meta-" + member_id.encode()) for name in names))


def test_members_with_the_same_protocol_names_share_one_frozenset():
    a, b = _member("a", ("range", "cooperative-sticky")), _member("b", ("cooperative-sticky", "range"))
    other = _member("c", ("range",))
    assert a.protocol_names == frozenset({"range", "cooperative-sticky"})
    assert a.protocol_names is b.protocol_names
    assert other.protocol_names == frozenset({"range"}) and other.protocol_names is not a.protocol_names
    other.set_protocols((("range", b""), ("cooperative-sticky", b"")))
    assert other.protocol_names is a.protocol_names


def test_the_table_starts_over_past_its_bound(monkeypatch):
    monkeypatch.setattr(shared_sets, "MAX_SHARED", 3)
    monkeypatch.setattr(shared_sets, "_shared", {})
    first = shared_frozenset(["t0"])
    for i in range(1, 4):
        shared_frozenset([f"t{i}"])
    assert len(shared_sets._shared) <= 3
    again = shared_frozenset(["t0"])
    assert again == first and again is not first  # forgotten at the reset: equal, no longer shared
    assert shared_frozenset(["t0"]) is again


def test_protocol_names_are_the_names_as_a_shared_frozenset():
    from groupcoord.coordinator.groups.classic.shared_sets import protocol_names

    one = protocol_names((("range", b"\x00\x01"),))
    assert one == frozenset({"range"})
    assert protocol_names((("range", b"other metadata"),)) is one  # found by its name
    two = protocol_names((("cooperative-sticky", b""), ("range", b"")))
    assert two == frozenset({"range", "cooperative-sticky"})
    assert protocol_names((("range", b""), ("cooperative-sticky", b"x"))) is two
    assert protocol_names(()) == frozenset()


def test_the_vote_with_one_candidate_is_the_vote():
    """Members supporting more protocols than they share: the one every member supports wins either way."""
    from collections import Counter

    from groupcoord.coordinator.groups.classic.member import ClassicMember
    from groupcoord.coordinator.groups.classic.protocol_vote import select_protocol

    def member(name: str, *protocols: str) -> ClassicMember:
        return ClassicMember(name, None, "c", "h", 1, 1, "consumer", tuple((p, b"") for p in protocols))

    members = [member("a", "sticky", "range"), member("b", "range"), member("c", "roundrobin", "range")]
    supported = Counter()
    for m in members:
        supported.update(m.protocol_names)
    assert select_protocol(members, supported) == "range"
    members = [member("a", "sticky", "range"), member("b", "range", "sticky")]
    supported = Counter()
    for m in members:
        supported.update(m.protocol_names)
    assert select_protocol(members, supported) == "sticky"  # a tie: the first member's preference
