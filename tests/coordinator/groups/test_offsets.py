"""OffsetCommit / OffsetFetch / OffsetDelete with Kafka's group and partition checks."""

from groupcoord.protocol.errors import ErrorCode
from groupcoord.coordinator.groups.offsets_records import OffsetCommitKey, decode_key, decode_value
from tests.coordinator.groups.harness import Harness, subscription

OK = ErrorCode.none


def test_a_member_commits_with_its_generation_and_fetches_it_back(h):
    ids = h.form_group("g", "a")
    assert h.commit("g", {("orders", 0): 42, ("orders", 1): 7}, generation=1, member_id=ids["a"], metadata="m") == {("orders", 0): OK, ("orders", 1): OK}
    fetched = h.fetch("g", [("orders", (0, 1, 2))])
    parts = fetched["topics"][0]["partitions"]
    assert [(p["partition_index"], p["committed_offset"], p["metadata"], p["committed_leader_epoch"]) for p in parts] == [
        (0, 42, "m", 5), (1, 7, "m", 5), (2, -1, "", -1)
    ]


def test_each_commit_is_a_record_in_the_log(h):
    h.commit("standalone", {("orders", 2): 99}, metadata="x")
    key = decode_key(h.log[-1][0])
    value = decode_value(key, h.log[-1][1])
    assert key == OffsetCommitKey("standalone", "orders", 2)
    assert (value.offset, value.metadata, value.commit_timestamp, value.expire_timestamp) == (99, "x", h.now, None)
    assert h.log[-1][1][:2] == b"\x00\x03"  # OffsetCommitValue v3, as Kafka writes it


def test_standalone_consumers_commit_with_generation_minus_one_on_a_group_without_members(h):
    assert h.commit("manual", {("orders", 0): 5}) == {("orders", 0): OK}
    assert h.state("manual") == "Empty"
    assert h.committed("manual") == {("orders", 0): 5}


def test_a_standalone_commit_on_a_group_with_members_is_rejected(h):
    h.form_group("g", "a")
    assert h.commit("g", {("orders", 0): 5}) == {("orders", 0): ErrorCode.unknown_member_id}


def test_commit_generation_and_member_checks(h):
    ids = h.form_group("g", "a")
    assert h.commit("g", {("orders", 0): 1}, generation=2, member_id=ids["a"]) == {("orders", 0): ErrorCode.illegal_generation}
    assert h.commit("g", {("orders", 0): 1}, generation=1, member_id="ghost") == {("orders", 0): ErrorCode.unknown_member_id}
    assert h.commit("unknown", {("orders", 0): 1}, generation=3, member_id="m", version=8) == {("orders", 0): ErrorCode.illegal_generation}
    assert h.commit("unknown", {("orders", 0): 1}, generation=3, member_id="m", version=9) == {("orders", 0): ErrorCode.group_id_not_found}
    assert h.commit("", {("orders", 0): 1}) == {("orders", 0): ErrorCode.invalid_group_id}


def test_commits_during_completing_rebalance_are_told_to_finish_the_rebalance(h):
    t = h.join_new("g", client_id="a")
    h.advance(3000)
    member = t.response["member_id"]
    assert h.commit("g", {("orders", 0): 1}, generation=1, member_id=member) == {("orders", 0): ErrorCode.rebalance_in_progress}


def test_commits_during_preparing_rebalance_with_the_current_generation_are_accepted(h):
    ids = h.form_group("g", "a", "b")
    h.join("g", ids["a"], client_id="a")
    assert h.commit("g", {("orders", 0): 1}, generation=1, member_id=ids["b"]) == {("orders", 0): OK}


def test_oversized_metadata_and_unknown_partitions_fail_per_partition():
    h = Harness(offset_metadata_max_bytes=10)
    result = h.commit("g", {("orders", 0): 1, ("orders", 9): 1, ("nope", 0): 1}, metadata="x" * 11)
    assert result == {
        ("orders", 0): ErrorCode.offset_metadata_too_large,
        ("orders", 9): ErrorCode.unknown_topic_or_partition,
        ("nope", 0): ErrorCode.unknown_topic_or_partition,
    }
    assert h.commit("g", {("orders", 0): 1}, metadata="x" * 10) == {("orders", 0): OK}


def test_retention_time_of_v2_to_v4_sets_an_explicit_expiry_written_as_value_v1(h):
    h.commit("g", {("orders", 0): 1}, retention_ms=60_000, version=2)
    key = decode_key(h.log[-1][0])
    assert h.log[-1][1][:2] == b"\x00\x01"
    assert decode_value(key, h.log[-1][1]).expire_timestamp == h.now + 60_000
    h.commit("g", {("orders", 1): 1}, retention_ms=60_000, version=5)  # v5+: retention is the broker's
    assert decode_value(key, h.log[-1][1]).expire_timestamp is None


def test_fetching_all_partitions_with_a_null_topic_list(h):
    h.commit("g", {("payments", 1): 3, ("orders", 2): 4})
    fetched = h.fetch("g", None)
    assert [(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in fetched["topics"]] == [("orders", [2]), ("payments", [1])]


def test_fetching_an_unknown_group_returns_no_offsets_without_error(h):
    assert h.fetch("never", None) == {"group_id": "never", "error_code": OK, "topics": []}
    parts = h.fetch("never", [("orders", (0,))])["topics"][0]["partitions"]
    assert parts[0]["committed_offset"] == -1 and parts[0]["error_code"] == OK


def test_fetch_while_loading_reports_load_in_progress(h):
    h.shard.begin_load()
    fetched = h.fetch("g", [("orders", (0,))])
    assert fetched["error_code"] == ErrorCode.coordinator_load_in_progress
    assert fetched["topics"][0]["partitions"][0]["error_code"] == ErrorCode.coordinator_load_in_progress


def test_offset_delete_refuses_topics_a_stable_consumer_group_subscribes_to(h):
    ids = h.form_group("g", "a", protocols=[("range", subscription("orders"))])
    h.commit("g", {("orders", 0): 1, ("payments", 0): 2}, generation=1, member_id=ids["a"])
    response = h.offset_delete("g", [("orders", (0,)), ("payments", (0,))])
    assert response["error_code"] == OK
    errors = {t["name"]: t["partitions"][0]["error_code"] for t in response["topics"]}
    assert errors == {"orders": ErrorCode.group_subscribed_to_topic, "payments": OK}
    assert h.committed("g") == {("orders", 0): 1}


def test_offset_delete_on_an_empty_group_removes_offsets_with_tombstones(h):
    h.commit("g", {("orders", 0): 1})
    assert h.offset_delete("g", [("orders", (0,))])["error_code"] == OK
    assert h.log[-1][1] is None
    assert h.committed("g") == {}


def test_offset_delete_errors(h):
    assert h.offset_delete("missing", [("orders", (0,))])["error_code"] == ErrorCode.group_id_not_found
    h.form_group("connect-group", "w", protocol_type="connect", protocols=[("default", b"x")])
    assert h.offset_delete("connect-group", [("orders", (0,))])["error_code"] == ErrorCode.non_empty_group
    h.commit("g", {("orders", 0): 1})
    response = h.offset_delete("g", [("nope", (0,))])
    assert response["topics"][0]["partitions"][0]["error_code"] == ErrorCode.unknown_topic_or_partition
