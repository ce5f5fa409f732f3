"""DescribeProducers answers each partition's active producers from its producer table, open transactions
included, through the wire handler at its one version."""
from groupcoord.protocol.build import build
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.registry import encode_entity, request_class, response_class

from groupcoord.coordinator.apis import describe_producers
from groupcoord.coordinator.apis.services import Services
from groupcoord.coordinator.dataplane.txn_markers import TxnMarker
from groupcoord.coordinator.server.dispatch import RequestContext

from .txn_support import SENT_AT, produce, txn_batch

PID, PLAIN = 9100, 9200


async def describe(dataplane, topics):
    key = describe_producers.API.key
    request = build(request_class(key, 0), {"topics": [{"name": n, "partition_indexes": ps} for n, ps in topics]})
    result = await describe_producers.handle(Services(None, None, dataplane.topics, None, dataplane),
                                             RequestContext(key, 0, 1, "test", "127.0.0.1", 1), request)
    assert encode_entity(build(response_class(key, 0), result))
    return result


async def test_open_transactions_and_idempotent_producers_are_listed(dataplane):
    await dataplane.topics.create("t", 2)
    await produce(dataplane, txn_batch(PLAIN, 0, n=3, transactional=False), txn_id=None)   # 0-2
    await produce(dataplane, txn_batch(PID, 0, epoch=4))                                   # 3-4
    answer = await describe(dataplane, [("t", [0, 1, 7]), ("nope", [0])])
    [t, nope] = answer["topics"]
    p0, p1, p7 = t["partitions"]
    assert p0["error_code"] is ErrorCode.none
    assert p0["active_producers"] == [
        {"producer_id": PID, "producer_epoch": 4, "last_sequence": 1, "last_timestamp": SENT_AT,
         "coordinator_epoch": -1, "current_txn_start_offset": 3},
        {"producer_id": PLAIN, "producer_epoch": 0, "last_sequence": 2, "last_timestamp": SENT_AT,
         "coordinator_epoch": -1, "current_txn_start_offset": -1}]
    assert p1["active_producers"] == [] and p1["error_code"] is ErrorCode.none
    assert p7["error_code"] is ErrorCode.unknown_topic_or_partition
    assert nope["partitions"][0]["error_code"] is ErrorCode.unknown_topic_or_partition


async def test_a_decided_transaction_leaves_the_coordinator_epoch(dataplane):
    await dataplane.topics.create("t", 1)
    await produce(dataplane, txn_batch(PID, 0))
    await dataplane.write_txn_markers([TxnMarker(PID, 0, 6, True, [("t", 0)])])
    [entry] = (await describe(dataplane, [("t", [0])]))["topics"][0]["partitions"][0]["active_producers"]
    assert (entry["coordinator_epoch"], entry["current_txn_start_offset"], entry["last_sequence"]) == (6, -1, 1)
