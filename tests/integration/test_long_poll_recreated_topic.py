"""A Fetch parked on a topic that was deleted and created again is woken by the next append.

The append listener was once keyed by ``id(log)``: when a recreated partition's log reused the freed
address of the deleted one, it got no listener, and a consumer's Fetch waited out its whole max_wait
(an independent client's tests stalled for exactly their 5 s). Cycles of delete, create, park a Fetch,
append: every Fetch must be answered by the append, long before its max_wait.
"""

import time

from groupcoord.protocol.record_batch import encode_batch
from tests.support.wire import WireClient

from .test_dataplane_long_poll import connect, fetch_frame, read_frame

TOPIC = "recreated"
CYCLES = 30
MAX_WAIT_MS = 5000


def _create(admin: WireClient) -> None:
    answer = admin.request(19, 5, {"topics": [{"name": TOPIC, "num_partitions": 1, "replication_factor": 1,
                                               "assignments": [], "configs": []}],
                                   "timeout": 30000, "validate_only": False})
    assert answer.topics[0].error_code == 0, answer


def _delete(admin: WireClient) -> None:
    answer = admin.request(20, 4, {"topic_names": [TOPIC], "timeout": 30000})
    assert answer.responses[0].error_code == 0, answer


def _produce(admin: WireClient, value: bytes) -> None:
    answer = admin.request(0, 9, {"transactional_id": None, "acks": 1, "timeout": 30000, "topic_data": [
        {"name": TOPIC, "partition_data": [{"index": 0, "records": encode_batch([(None, value, ())])}]}]})
    assert answer.responses[0].partition_responses[0].error_code == 0, answer


def test_a_fetch_parked_on_a_recreated_topic_is_woken_by_the_append(groupcoord_broker):
    bootstrap = groupcoord_broker.bootstrap_servers
    waits = []
    with WireClient(bootstrap) as admin:
        for cycle in range(CYCLES):
            _create(admin)
            with connect(bootstrap) as consumer:
                consumer.sendall(fetch_frame(TOPIC, 0, max_wait_ms=MAX_WAIT_MS))
                time.sleep(0.05)  # parked
                started = time.monotonic()
                _produce(admin, b"cycle-%d" % cycle)
                response = read_frame(consumer)
                waits.append(time.monotonic() - started)
            assert b"cycle-%d" % cycle in response, f"cycle {cycle}: the fetch answered without the record"
            _delete(admin)
    print(f"fetch woken after at most {max(waits) * 1000:.1f} ms over {CYCLES} cycles")
    assert max(waits) < 2.0, f"fetch woken after {max(waits):.2f}s in cycle {waits.index(max(waits))}: {waits}"
