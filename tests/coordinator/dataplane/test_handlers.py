"""Every data-plane API at every registered version: requests decode into the services and the answers
build and encode as that version's response (the wire shape stock clients parse)."""
import uuid

import pytest

from groupcoord.protocol.build import build
from groupcoord.protocol.record_batch import encode_batch
from groupcoord.protocol.registry import encode_entity, request_class, response_class

from groupcoord.coordinator.apis import (create_partitions, create_topics, delete_topics, describe_configs, fetch,
                                         init_producer_id, list_offsets, produce)
from groupcoord.coordinator.apis.registry import register_apis
from groupcoord.coordinator.apis.services import Services
from groupcoord.coordinator.server.dispatch import NO_RESPONSE, RequestContext

DATA_APIS = (produce, fetch, list_offsets, create_topics, delete_topics, init_producer_id, describe_configs,
             create_partitions)
PRODUCE, FETCH, LIST_OFFSETS = produce.API.key, fetch.API.key, list_offsets.API.key
CREATE_TOPICS, DELETE_TOPICS, INIT_PRODUCER_ID = create_topics.API.key, delete_topics.API.key, init_producer_id.API.key
DESCRIBE_CONFIGS, CREATE_PARTITIONS = describe_configs.API.key, create_partitions.API.key
VERSIONS = {m.API.key: (m.API.min_version, m.API.max_version) for m in DATA_APIS}


class RecordingDispatcher:
    def __init__(self):
        self.handlers = {}

    def register(self, api_key, handler, min_version, max_version, fast=None):
        self.handlers[api_key] = (handler, min_version, max_version)


@pytest.fixture
def registered(dataplane):
    dispatcher = RecordingDispatcher()
    register_apis(dispatcher, Services(None, None, dataplane.topics, None, dataplane), DATA_APIS)
    return dispatcher.handlers


def versions(api_key):
    low, high = VERSIONS[api_key]
    return range(low, high + 1)


async def call(registered, api_key, version, body):
    handler, low, high = registered[api_key]
    assert low <= version <= high
    request = build(request_class(api_key, version), body)
    ctx = RequestContext(api_key, version, 7, "test", "127.0.0.1", 1)
    result = await handler(ctx, request)
    if result is NO_RESPONSE:
        return result, None
    entity = build(response_class(api_key, version), result)
    assert encode_entity(entity)
    return result, entity


def test_registered_ranges_match_kafka_4(registered):
    assert {k: (lo, hi) for k, (_, lo, hi) in registered.items()} == VERSIONS
    assert VERSIONS[PRODUCE][0] == 3 and VERSIONS[FETCH][0] == 4


@pytest.mark.parametrize("version", versions(CREATE_TOPICS))
async def test_create_describe_grow_and_delete_topics(registered, dataplane, version):
    name = f"t{version}"
    result, entity = await call(registered, CREATE_TOPICS, version, {
        "topics": [{"name": name, "num_partitions": 2, "replication_factor": 1, "assignments": [],
                    "configs": [{"name": "retention.ms", "value": "1000"}]}],
        "timeout": 1000, "validate_only": False})
    assert int(entity.topics[0].error_code) == 0
    assert dataplane.topics.partition_count(name) == 2
    _, entity = await call(registered, CREATE_PARTITIONS, min(version, 3), {
        "topics": [{"name": name, "count": 3, "assignments": None}], "timeout": 1000, "validate_only": False})
    assert int(entity.results[0].error_code) == 0
    _, entity = await call(registered, DESCRIBE_CONFIGS, min(max(version - 3, 1), 4), {
        "resources": [{"resource_type": 2, "resource_name": name, "configuration_keys": None}],
        "include_synonyms": True})
    values = {c.name: c.value for c in entity.results[0].configs}
    assert values["retention.ms"] == "1000"
    delete_version = min(version - 1, 6)
    topic_id = dataplane.topics.get(name).topic_id
    body = ({"topics": [{"name": None, "topic_id": topic_id}], "timeout": 1000} if delete_version >= 6
            else {"topic_names": [name], "timeout": 1000})
    _, entity = await call(registered, DELETE_TOPICS, delete_version, body)
    assert int(entity.responses[0].error_code) == 0
    assert dataplane.topics.get(name) is None


@pytest.mark.parametrize("version", versions(PRODUCE))
async def test_produce_then_fetch_and_list_offsets_at_every_version(registered, dataplane, version):
    await dataplane.topics.create("orders", 1)
    records = encode_batch([(b"k", b"v", ())] * 3, compression=1)
    _, entity = await call(registered, PRODUCE, version, {
        "transactional_id": None, "acks": -1, "timeout": 1000,
        "topic_data": [{"name": "orders", "partition_data": [{"index": 0, "records": records}]}]})
    part = entity.responses[0].partition_responses[0]
    assert (int(part.error_code), part.base_offset) == (0, 0)
    result, _ = await call(registered, PRODUCE, version, {
        "transactional_id": None, "acks": 0, "timeout": 1000,
        "topic_data": [{"name": "orders", "partition_data": [{"index": 0, "records": records}]}]})
    assert result is NO_RESPONSE
    assert dataplane.topics.log("orders", 0).log_end_offset == 6


@pytest.mark.parametrize("version", versions(FETCH))
async def test_fetch_at_every_version(registered, dataplane, version):
    topic = (await dataplane.topics.create("orders", 1)).topic
    await dataplane.topics.log("orders", 0).append(encode_batch([(b"k", b"v", ())] * 3))
    _, entity = await call(registered, FETCH, version, {
        "replica_id": -1, "max_wait": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
        "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
        "topics": [{"topic": "orders", "topic_id": topic.topic_id, "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
             "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}]})
    part = entity.responses[0].partitions[0]
    assert (int(part.error_code), part.high_watermark) == (0, 3)
    assert part.records


@pytest.mark.parametrize("version", versions(LIST_OFFSETS))
async def test_list_offsets_at_every_version(registered, dataplane, version):
    await dataplane.topics.create("orders", 1)
    await dataplane.topics.log("orders", 0).append(encode_batch([(b"k", b"v", ())] * 3))
    _, entity = await call(registered, LIST_OFFSETS, version, {
        "replica_id": -1, "isolation_level": 0, "timeout": 1000,
        "topics": [{"name": "orders", "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                                      "timestamp": -1, "max_num_offsets": 1}]}]})
    part = entity.topics[0].partitions[0]
    assert (int(part.error_code), part.offset) == (0, 3)


@pytest.mark.parametrize("version", versions(INIT_PRODUCER_ID))
async def test_init_producer_id_at_every_version(registered, version):
    _, entity = await call(registered, INIT_PRODUCER_ID, version, {
        "transactional_id": None, "transaction_timeout": 60000, "producer_id": -1, "producer_epoch": -1})
    assert int(entity.error_code) == 0 and entity.producer_id >= 0 and entity.producer_epoch == 0


async def test_duplicate_topics_in_one_create_request_are_invalid(registered):
    topic = {"name": "dup", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}
    _, entity = await call(registered, CREATE_TOPICS, 7, {"topics": [topic, topic], "timeout": 1000,
                                                                   "validate_only": False})
    assert [int(t.error_code) for t in entity.topics] == [42, 42]


async def test_delete_by_unknown_topic_id(registered):
    _, entity = await call(registered, DELETE_TOPICS, 6, {
        "topics": [{"name": None, "topic_id": uuid.uuid4()}], "timeout": 1000})
    assert int(entity.responses[0].error_code) == 100
