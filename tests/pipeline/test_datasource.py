"""`spark.read.format("consumer_offsets")` reads every record of the story, decoded by the project's codecs."""


from pyspark.sql import functions as F

from groupcoord.pipeline.integrity import summarize
from groupcoord.pipeline.session import read_offsets
from tests.pipeline.offsets_history import Member, OffsetsHistory
from tests.pipeline.scenario import SECOND, T0


def test_every_record_written_is_one_row_in_its_offsets_partition(story, story_df):
    per_partition = {r["offsets_partition"]: r["count"] for r in story_df.groupBy("offsets_partition").count().collect()}
    assert per_partition == story.records_written


def test_records_are_classified_by_kind(story_df):
    kinds = {r["kind"]: r["count"] for r in story_df.groupBy("kind").count().collect()}
    # orders 30x2 + billing 28+10 + legacy 1 + doomed 2 + txn-app 3 (one transaction each)
    assert kinds["offset_commit"] == 60 + 38 + 1 + 2 + 3
    assert kinds["offset_commit_tombstone"] == 2
    assert kinds["group_metadata"] == 3 + 1 + 6
    assert kinds["group_metadata_tombstone"] == 1
    assert kinds["txn_commit"] == 1 and kinds["txn_abort"] == 1
    assert summarize(story_df).clean


def test_group_members_carry_their_decoded_subscriptions_and_assignments(story_df):
    row = story_df.filter((F.col("group") == "orders") & (F.col("generation") == 3)).first()
    assert (row["leader"], row["protocol_type"], row["protocol_name"], row["member_count"]) == (
        "orders-m2", "consumer", "range", 2)
    members = {m["member_id"]: m for m in row["members"]}
    assert members["orders-m3"]["instance_id"] == "orders-3"
    assert members["orders-m3"]["subscribed_topics"] == ["orders"]
    assert [(p["topic"], p["partition"]) for p in members["orders-m3"]["assigned_partitions"]] == [("orders", 0)]
    assert members["orders-m2"]["session_timeout_ms"] == 10_000


def test_commit_rows_carry_the_committed_value(story_df):
    row = story_df.filter((F.col("group") == "legacy")).first()
    assert (row["topic"], row["partition"], row["committed_offset"], row["expire_timestamp"], row["timestamp"]) == (
        "old-topic", 0, 42, T0 + 400 * SECOND, T0 + 100 * SECOND)


def test_a_list_of_partition_directories_reads_the_same_rows_as_the_data_dir(spark, story_dir, story_df):
    partitions = sorted(str(p) for p in story_dir.iterdir())
    by_list = spark.read.format("consumer_offsets").option("paths", ",".join(partitions)).load()
    assert by_list.count() == story_df.count()
    assert spark.read.format("consumer_offsets").load(partitions).count() == story_df.count()
    one = spark.read.format("consumer_offsets").load(partitions[0])
    assert one.select("offsets_partition").distinct().count() == 1


def test_a_corrupt_batch_and_a_torn_tail_are_counted_and_the_rest_is_still_read(spark, tmp_path):
    history = OffsetsHistory(tmp_path / "data", num_partitions=1, batches_per_segment=100)
    history.rebalance("g", 1, [Member("m", ("t",))], T0)
    for i in range(10):
        history.commit("g", {("t", 0): i, ("t", 1): i}, T0 + i * SECOND)
    (directory,) = history.write()
    segment = directory / "00000000000000000000.log"
    data = bytearray(segment.read_bytes())
    fifth_batch = _batch_positions(bytes(data))[5]
    data[fifth_batch + 30] ^= 0xFF  # inside the CRC-covered header fields
    segment.write_bytes(bytes(data[:-7]))  # and the last batch is torn

    df = read_offsets(spark, str(tmp_path / "data"))
    summary = summarize(df)
    assert summary.counts == {"corrupt": 1, "torn_tail": 1, "malformed": 0, "unknown": 0}
    assert [p.kind for p in summary.problems] == ["corrupt", "torn_tail"]
    assert summary.problems[0].position == fifth_batch
    assert df.filter(F.col("kind") == "offset_commit").count() == 2 * (10 - 2)


def _batch_positions(data: bytes) -> list[int]:
    positions, position = [], 0
    while position < len(data):
        positions.append(position)
        position += int.from_bytes(data[position + 8 : position + 12], "big") + 12
    return positions


def test_a_fresh_broker_with_empty_offsets_partitions_reads_as_no_rows(spark, tmp_path):
    (tmp_path / "__consumer_offsets-0").mkdir()  # no segment yet
    (tmp_path / "__consumer_offsets-1").mkdir()
    (tmp_path / "__consumer_offsets-1" / "00000000000000000000.log").write_bytes(b"")  # an empty active segment
    assert read_offsets(spark, str(tmp_path / "__consumer_offsets-0")).count() == 0
    assert read_offsets(spark, str(tmp_path)).count() == 0
