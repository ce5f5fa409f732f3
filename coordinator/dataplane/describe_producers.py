"""DescribeProducers (KIP-664): the active producers of each partition, from its producer table.

What ``kafka-transactions.sh describe-producers`` prints and what an operator needs to find a hanging
transaction: each producer's epoch, last sequence, last timestamp, the coordinator epoch of its last marker
and the start offset of its open transaction (-1 for none), as Kafka's ProducerStateManager.activeProducers
answers. A producer known only from a marker has last sequence -1.
"""
from __future__ import annotations

from groupcoord.protocol.errors import ErrorCode

from groupcoord.coordinator.dataplane.producer_state import NO_OFFSET, PartitionProducerState
from groupcoord.coordinator.dataplane.producer_states import ProducerStates
from groupcoord.coordinator.dataplane.topics import TopicCatalog


def active_producers(state: PartitionProducerState) -> list[dict]:
    producers = []
    for entry in sorted(state.entries(), key=lambda e: e.producer_id):
        first = entry.current_txn_first_offset
        producers.append({"producer_id": entry.producer_id, "producer_epoch": entry.epoch,
                          "last_sequence": entry.last_seq, "last_timestamp": entry.last_timestamp,
                          "coordinator_epoch": entry.coordinator_epoch,
                          "current_txn_start_offset": first if first >= 0 else NO_OFFSET})
    return producers


class DescribeProducersService:
    def __init__(self, catalog: TopicCatalog, states: ProducerStates) -> None:
        self._catalog = catalog
        self._states = states

    async def describe(self, topics: list[tuple[str, list[int]]]) -> dict:
        """``topics``: (name, [partition]) -> the version-neutral DescribeProducersResponse body."""
        out = []
        for name, partitions in topics:
            answers = []
            for partition in partitions:
                answers.append(await self._partition(name, partition))
            out.append({"name": name, "partitions": answers})
        return {"throttle_time": 0, "topics": out}

    async def _partition(self, name: str, partition: int) -> dict:
        answer = {"partition_index": partition, "error_code": ErrorCode.none, "error_message": None,
                  "active_producers": []}
        log = self._catalog.log(name, partition)
        if log is None:
            answer["error_code"] = self._catalog.missing_partition_error(name, partition)
            if self._catalog.get(name) is None:
                # KafkaApis answers a topic it does not know with the error's default message; a missing
                # partition of a known topic (the replica manager's answer) has none
                answer["error_message"] = "This server does not host this topic-partition."
            return answer
        try:
            state = await self._states.state_for(log)
        except Exception:       # the partition's log cannot be read: Kafka's offline partition
            answer["error_code"] = ErrorCode.kafka_storage_error
            return answer
        answer["active_producers"] = active_producers(state)
        return answer
