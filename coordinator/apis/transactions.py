"""What the transaction APIs share: the transaction coordinator (or the answer when there is none), Kafka's
down-mapping of PRODUCER_FENCED for clients that predate it, and whether a partition exists."""

from __future__ import annotations

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import OFFSETS_TOPIC

from .services import Services


def older_fenced(error: ErrorCode, version: int, first_version_with_fenced: int) -> ErrorCode:
    """PRODUCER_FENCED is answered as INVALID_PRODUCER_EPOCH to a version that does not know it (KIP-588)."""
    if version < first_version_with_fenced and error == ErrorCode.producer_fenced:
        return ErrorCode.invalid_producer_epoch
    return error


def partition_exists(services: Services, topic: str, partition: int) -> bool:
    """Kafka's metadataCache.contains: user topics from the catalog, and ``__consumer_offsets`` as well."""
    if topic == OFFSETS_TOPIC:
        return 0 <= partition < services.groups.num_partitions
    count = services.topics.partition_count(topic)
    return count is not None and 0 <= partition < count
