"""Topic administration as an admin client or an auto-creating producer sees it."""
import asyncio
import uuid

from groupcoord.protocol.errors import ErrorCode
from groupcoord.storage.config import CleanupPolicy

from groupcoord.coordinator.dataplane.topic_ids import read_partition_metadata, to_kafka_string
from tests.coordinator.dataplane.conftest import Node


async def test_create_topic_with_partitions_and_configs(dataplane):
    result = await dataplane.topics.create("orders", 3, 1, {"cleanup.policy": "compact", "retention.ms": "1000"})
    assert result.error is ErrorCode.none
    topic = result.topic
    assert topic.partitions == 3
    assert topic.log_config.compact and topic.log_config.retention_ms == 1000
    assert dataplane.topics.partition_count("orders") == 3
    assert [dataplane.topics.log("orders", p) is not None for p in range(4)] == [True, True, True, False]
    assert dataplane.topics.log("orders", 0).config.cleanup_policy == frozenset({CleanupPolicy.COMPACT})


async def test_default_partition_count_and_replication_factor_apply_for_minus_one(tmp_path):
    node = Node(tmp_path, num_partitions=4)
    dataplane = await node.start()
    try:
        result = await dataplane.topics.create("events", -1, -1)
        assert result.topic.partitions == 4
    finally:
        await node.stop()


async def test_a_single_node_refuses_more_than_one_replica(dataplane):
    result = await dataplane.topics.create("orders", 1, 3)
    assert result.error is ErrorCode.invalid_replication_factor
    assert "only 1 broker(s) are registered" in result.message
    assert dataplane.topics.get("orders") is None


async def test_invalid_partition_counts_are_refused(dataplane):
    assert (await dataplane.topics.create("a", 0, 1)).error is ErrorCode.invalid_partitions
    assert (await dataplane.topics.create("b", -5, 1)).error is ErrorCode.invalid_partitions


async def test_creating_an_existing_topic_fails(dataplane):
    await dataplane.topics.create("orders", 1)
    result = await dataplane.topics.create("orders", 1)
    assert result.error is ErrorCode.topic_already_exists


async def test_illegal_and_colliding_names_are_invalid_topics(dataplane):
    assert (await dataplane.topics.create("bad name", 1)).error is ErrorCode.invalid_topic_exception
    await dataplane.topics.create("a.b", 1)
    collision = await dataplane.topics.create("a_b", 1)
    assert collision.error is ErrorCode.invalid_topic_exception
    assert "collides" in collision.message


async def test_unknown_or_malformed_configs_are_invalid(dataplane):
    assert (await dataplane.topics.create("a", 1, 1, {"no.such.config": "1"})).error is ErrorCode.invalid_config
    assert (await dataplane.topics.create("b", 1, 1, {"retention.ms": "soon"})).error is ErrorCode.invalid_config
    assert (await dataplane.topics.create("c", 1, 1, {"cleanup.policy": "shred"})).error is ErrorCode.invalid_config


async def test_validate_only_creates_nothing(dataplane):
    result = await dataplane.topics.create("orders", 2, 1, validate_only=True)
    assert result.error is ErrorCode.none and result.topic.partitions == 2
    assert dataplane.topics.get("orders") is None


async def test_manual_assignment_must_name_this_broker(dataplane):
    ok = await dataplane.topics.create("a", -1, -1, assignments={0: [1], 1: [1]})
    assert ok.topic.partitions == 2
    bad = await dataplane.topics.create("b", -1, -1, assignments={0: [2]})
    assert bad.error is ErrorCode.invalid_replica_assignment


async def test_topic_ids_and_configs_survive_a_restart(node):
    created = (await node.dataplane.topics.create("orders", 2, 1, {"retention.ms": "5000"})).topic
    directory = node.dataplane.topics.log("orders", 1).directory
    assert (directory / "partition.metadata").read_text() == (
        f"version: 0\ntopic_id: {to_kafka_string(created.topic_id)}\n")
    dataplane = await node.restart()
    again = dataplane.topics.get("orders")
    assert again.topic_id == created.topic_id
    assert again.partitions == 2
    assert again.configs == {"retention.ms": "5000"}
    assert dataplane.topics.by_id(created.topic_id) is again


async def test_logs_created_behind_the_catalog_are_adopted(node):
    """The group coordinator creates __consumer_offsets straight through the LogManager."""
    for p in range(3):
        await node.log_manager.get_or_create("__consumer_offsets", p)
    offsets = node.dataplane.topics.get("__consumer_offsets")
    assert offsets.partitions == 3 and offsets.is_internal
    topic_id = offsets.topic_id
    assert read_partition_metadata(node.dataplane.topics.log("__consumer_offsets", 2).directory) == topic_id
    dataplane = await node.restart()
    assert dataplane.topics.get("__consumer_offsets").topic_id == topic_id


async def test_delete_by_name_and_by_id(dataplane):
    a = (await dataplane.topics.create("a", 1)).topic
    b = (await dataplane.topics.create("b", 1)).topic
    directory = dataplane.topics.log("a", 0).directory
    assert (await dataplane.topics.delete("a")).error is ErrorCode.none
    assert not directory.exists()
    assert dataplane.topics.get("a") is None and dataplane.topics.by_id(a.topic_id) is None
    deleted = await dataplane.topics.delete(topic_id=b.topic_id)
    assert deleted.error is ErrorCode.none and deleted.name == "b"
    assert (await dataplane.topics.delete("a")).error is ErrorCode.unknown_topic_or_partition
    assert (await dataplane.topics.delete(topic_id=uuid.uuid4())).error is ErrorCode.unknown_topic_id


async def test_the_offsets_topic_cannot_be_deleted_or_grown(node):
    await node.log_manager.get_or_create("__consumer_offsets", 0)
    result = await node.dataplane.topics.delete("__consumer_offsets")
    assert result.error is ErrorCode.topic_authorization_failed
    assert node.dataplane.topics.get("__consumer_offsets") is not None
    grown = await node.dataplane.topics.create_partitions("__consumer_offsets", 60, None)
    assert grown.error is ErrorCode.topic_authorization_failed
    assert node.dataplane.topics.partition_count("__consumer_offsets") == 1


async def test_create_partitions_grows_a_topic_and_refuses_to_shrink(node):
    await node.dataplane.topics.create("orders", 2)
    assert (await node.dataplane.topics.create_partitions("orders", 1, None)).error is ErrorCode.invalid_partitions
    assert (await node.dataplane.topics.create_partitions("orders", 2, None)).error is ErrorCode.invalid_partitions
    assert (await node.dataplane.topics.create_partitions("nope", 4, None)).error is \
        ErrorCode.unknown_topic_or_partition
    assert (await node.dataplane.topics.create_partitions("orders", 4, None)).error is ErrorCode.none
    assert node.dataplane.topics.log("orders", 3) is not None
    dataplane = await node.restart()
    assert dataplane.topics.partition_count("orders") == 4


async def test_metadata_auto_creates_unknown_topics(dataplane):
    infos = await dataplane.topics.describe(["fresh", "bad name"], auto_create=True)
    assert infos[0].error_code is ErrorCode.none and infos[0].partitions == 1
    assert infos[1].error_code is ErrorCode.invalid_topic_exception
    listed = await dataplane.topics.describe(None, auto_create=False)
    assert [i.name for i in listed] == ["fresh"]


async def test_metadata_without_auto_create_reports_unknown_topics(tmp_path):
    node = Node(tmp_path, auto_create_topics_enable=False)
    dataplane = await node.start()
    try:
        [info] = await dataplane.topics.describe(["fresh"], auto_create=True)
        assert info.error_code is ErrorCode.unknown_topic_or_partition
        [info] = await dataplane.topics.describe(["fresh"], auto_create=False)
        assert info.error_code is ErrorCode.unknown_topic_or_partition
    finally:
        await node.stop()


async def test_listing_all_topics_includes_logs_created_behind_the_catalog(node):
    await node.dataplane.topics.create("orders", 1)
    await node.log_manager.get_or_create("__consumer_offsets", 0)
    infos = await node.dataplane.topics.describe(None, auto_create=False)
    assert [(i.name, i.is_internal) for i in infos] == [("__consumer_offsets", True), ("orders", False)]


async def test_a_topic_being_deleted_is_not_adopted_back(dataplane):
    import asyncio
    await dataplane.topics.create("doomed", 3)
    deletion = asyncio.ensure_future(dataplane.topics.delete("doomed"))
    for _ in range(20):
        await asyncio.sleep(0)
        assert dataplane.topics.get("doomed") is None
        assert "doomed" not in dataplane.topics.names()
    assert (await deletion).error is ErrorCode.none
    assert dataplane.topics.get("doomed") is None


async def _observe_while(task, look) -> list:
    """Calls ``look`` on every event-loop turn until ``task`` finishes; returns what it saw."""
    seen = []
    while not task.done():
        seen.append(look())
        await asyncio.sleep(0)
    await task
    return seen


async def test_a_topic_being_created_is_invisible_until_every_partition_is_open(dataplane):
    """A producer racing an auto-create must never see the topic with partitions it cannot write to."""
    topics = dataplane.topics

    def partitions_without_a_log():
        topic = topics.get("orders")
        return None if topic is None else [p for p in range(topic.partitions) if topics.log("orders", p) is None]

    seen = await _observe_while(asyncio.create_task(topics.create("orders", 8)), partitions_without_a_log)
    assert seen and all(missing in (None, []) for missing in seen)
    assert topics.get("orders").partitions == 8 and topics.names() == ["orders"]


async def test_partitions_being_added_are_invisible_until_open(dataplane):
    topics = dataplane.topics
    await topics.create("orders", 2)

    def partitions_without_a_log():
        return [p for p in range(topics.partition_count("orders")) if topics.log("orders", p) is None]

    seen = await _observe_while(asyncio.create_task(topics.create_partitions("orders", 8, None)),
                                partitions_without_a_log)
    assert seen and all(missing == [] for missing in seen)
    assert topics.partition_count("orders") == 8


async def test_concurrent_auto_creates_of_one_topic_all_get_it(dataplane):
    results = await asyncio.gather(*(dataplane.topics.ensure("clicks") for _ in range(5)))
    assert {r.error for r in results} == {ErrorCode.none}
    assert {r.topic.topic_id for r in results} == {dataplane.topics.get("clicks").topic_id}
