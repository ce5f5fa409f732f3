import pytest

from groupcoord.coordinator.dataplane.names import collision_key, is_internal, topic_name_error


@pytest.mark.parametrize("name", ["orders", "orders.v2", "a_b-c", "x" * 249, "__consumer_offsets", "A9"])
def test_legal_topic_names_are_accepted(name):
    assert topic_name_error(name) is None


@pytest.mark.parametrize("name", ["", ".", "..", "x" * 250, "has space", "slash/name", "ümlaut", "star*"])
def test_illegal_topic_names_are_refused_with_a_reason(name):
    assert topic_name_error(name)


def test_the_offsets_topic_is_internal_and_user_topics_are_not():
    assert is_internal("__consumer_offsets")
    assert not is_internal("orders")


def test_dot_and_underscore_collide():
    assert collision_key("a.b") == collision_key("a_b")
    assert collision_key("a.b") != collision_key("a-b")
