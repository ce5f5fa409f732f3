"""Protocol handlers of the data plane: each lifts a kio request of any registered version into the
services' plain arguments and returns a version-neutral response dict (see coordinator/server/dispatch).

Produce with acks=0 returns ``NO_RESPONSE`` after the append, so the client gets no answer, as from Kafka;
if any partition failed it returns ``CLOSE_CONNECTION`` instead, as Kafka closes the connection so that a
producer that waits for no answer still learns of the failure (it reconnects and refreshes its metadata).
"""
from __future__ import annotations

import uuid
from typing import Any

import structlog

from groupcoord.protocol.errors import ErrorCode

from groupcoord.coordinator.dataplane.fetch import parse_request as parse_fetch
from groupcoord.coordinator.dataplane.produce import PartitionData, TopicData
from groupcoord.coordinator.dataplane.service import DataPlane
from groupcoord.coordinator.dataplane.topics import TopicResult
from groupcoord.coordinator.server.dispatch import CLOSE_CONNECTION, NO_RESPONSE   # acks=0: nothing is sent

log = structlog.get_logger("groupcoord.produce")

PRODUCE, FETCH, LIST_OFFSETS = 0, 1, 2
CREATE_TOPICS, DELETE_TOPICS, INIT_PRODUCER_ID = 19, 20, 22
DESCRIBE_CONFIGS, CREATE_PARTITIONS = 32, 37

# (api key, lowest, highest): the lowest are Kafka 4.0's floors where kio allows; highest the spec's.
VERSIONS = {
    PRODUCE: (3, 11), FETCH: (4, 17), LIST_OFFSETS: (1, 10), CREATE_TOPICS: (2, 7), DELETE_TOPICS: (1, 6),
    INIT_PRODUCER_ID: (0, 5), DESCRIBE_CONFIGS: (1, 4), CREATE_PARTITIONS: (0, 3),
}


def _duplicates(names: list[Any]) -> set[Any]:
    seen, dupes = set(), set()
    for name in names:
        (dupes if name in seen else seen).add(name)
    return dupes


def _partition_errors(response: dict) -> dict[str, str]:
    """The failed partitions of a produce response, as ``topic-partition: ERROR_NAME``."""
    return {f"{topic['name']}-{part['index']}": ErrorCode(part["error_code"]).name.upper()
            for topic in response["responses"] for part in topic["partition_responses"]
            if part["error_code"] != ErrorCode.none}


def _fire_and_forget_outcome(ctx: Any, response: dict) -> Any:
    """acks=0: no answer; on any partition error, close the connection (KafkaApis' closeConnection)."""
    errors = _partition_errors(response)
    if not errors:
        return NO_RESPONSE
    log.info("closing connection after a failed acks=0 produce", correlation_id=ctx.correlation_id,
             client_id=ctx.client_id, peer=ctx.client_host, connection=ctx.connection_id, errors=errors)
    return CLOSE_CONNECTION


def register(dispatcher: Any, dataplane: DataPlane) -> None:
    async def produce(ctx: Any, request: Any) -> Any:
        topics = [TopicData(t.name, tuple(PartitionData(int(p.index), None if p.records is None else bytes(p.records))
                                          for p in t.partition_data))
                  for t in request.topic_data]
        acks = int(request.acks)
        try:
            response = await dataplane.produce.produce(acks=acks, api_version=ctx.api_version, topics=topics,
                                                       transactional_id=request.transactional_id)
        except Exception as exc:
            if acks != 0:
                raise       # the dispatcher answers UNKNOWN_SERVER_ERROR
            # Kafka's ProduceRequest has no error response for acks=0, so a failure closes the connection.
            log.error("acks=0 produce failed; closing the connection", correlation_id=ctx.correlation_id,
                      client_id=ctx.client_id, peer=ctx.client_host, connection=ctx.connection_id,
                      error=repr(exc), exc_info=exc)
            return CLOSE_CONNECTION
        return _fire_and_forget_outcome(ctx, response) if acks == 0 else response

    async def fetch(ctx: Any, request: Any) -> dict:
        return await dataplane.fetch.fetch(parse_fetch(request, ctx.api_version))

    async def list_offsets(ctx: Any, request: Any) -> dict:
        topics = [(t.name, [(int(p.partition_index), int(p.timestamp)) for p in t.partitions])
                  for t in request.topics]
        return await dataplane.list_offsets.list_offsets(topics)

    async def create_topics(ctx: Any, request: Any) -> dict:
        names = [t.name for t in request.topics]
        dupes = _duplicates(names)
        results = []
        for topic in request.topics:
            if topic.name in dupes:
                result = TopicResult(topic.name, ErrorCode.invalid_request,
                                     "Create topics request from client contains multiple entries for the "
                                     f"following topics: {', '.join(sorted(dupes))}")
            else:
                assignments = {int(a.partition_index): [int(b) for b in a.broker_ids] for a in topic.assignments}
                result = await dataplane.topics.create(
                    topic.name, int(topic.num_partitions), int(topic.replication_factor),
                    {c.name: c.value for c in topic.configs}, assignments, bool(request.validate_only))
            results.append(_created(result, dataplane))
        return {"throttle_time": 0, "topics": results}

    async def delete_topics(ctx: Any, request: Any) -> dict:
        if ctx.api_version >= 6:
            wanted = [(t.name, t.topic_id if t.topic_id not in (None, uuid.UUID(int=0)) else None)
                      for t in request.topics]
        else:
            wanted = [(name, None) for name in request.topic_names]
        dupes = _duplicates([n if n is not None else i for n, i in wanted])
        responses = []
        for name, topic_id in wanted:
            if (name if name is not None else topic_id) in dupes:
                result = TopicResult(name, ErrorCode.invalid_request, "Duplicate topic in request.")
            else:
                result = await dataplane.topics.delete(name, topic_id)
            responses.append({"name": result.name, "topic_id": (result.topic.topic_id if result.topic
                                                                 else topic_id or uuid.UUID(int=0)),
                              "error_code": result.error, "error_message": result.message})
        return {"throttle_time": 0, "responses": responses}

    async def init_producer_id(ctx: Any, request: Any) -> dict:
        return dataplane.init_producer_id(request.transactional_id, int(getattr(request, "producer_id", -1)),
                                          int(getattr(request, "producer_epoch", -1)))

    async def describe_configs(ctx: Any, request: Any) -> dict:
        resources = [(int(r.resource_type), r.resource_name,
                      None if r.configuration_keys is None or len(r.configuration_keys) == 0
                      else list(r.configuration_keys))
                     for r in request.resources]
        return dataplane.describe_configs.describe(resources, bool(getattr(request, "include_synonyms", False)))

    async def create_partitions(ctx: Any, request: Any) -> dict:
        dupes = _duplicates([t.name for t in request.topics])
        results = []
        for topic in request.topics:
            if topic.name in dupes:
                result = TopicResult(topic.name, ErrorCode.invalid_request, "Duplicate topic in request.")
            else:
                assignments = (None if topic.assignments is None
                               else [[int(b) for b in a.broker_ids] for a in topic.assignments])
                result = await dataplane.topics.create_partitions(topic.name, int(topic.count), assignments,
                                                                  bool(request.validate_only))
            results.append({"name": topic.name, "error_code": result.error, "error_message": result.message})
        return {"throttle_time": 0, "results": results}

    for api_key, handler in ((PRODUCE, produce), (FETCH, fetch), (LIST_OFFSETS, list_offsets),
                             (CREATE_TOPICS, create_topics), (DELETE_TOPICS, delete_topics),
                             (INIT_PRODUCER_ID, init_producer_id), (DESCRIBE_CONFIGS, describe_configs),
                             (CREATE_PARTITIONS, create_partitions)):
        low, high = VERSIONS[api_key]
        dispatcher.register(api_key, handler, low, high)


def _created(result: TopicResult, dataplane: DataPlane) -> dict:
    topic = result.topic
    if topic is None:
        return {"name": result.name, "topic_id": uuid.UUID(int=0), "error_code": result.error,
                "error_message": result.message, "topic_config_error_code": 0, "num_partitions": -1,
                "replication_factor": -1, "configs": None}
    configs = [{"name": c["name"], "value": c["value"], "read_only": c["read_only"],
                "config_source": c["config_source"], "is_sensitive": c["is_sensitive"]}
               for c in dataplane.describe_configs.topic_configs(topic.configs, include_synonyms=False)]
    return {"name": topic.name, "topic_id": topic.topic_id, "error_code": ErrorCode.none, "error_message": None,
            "topic_config_error_code": 0, "num_partitions": topic.partitions, "replication_factor": 1,
            "configs": configs}
