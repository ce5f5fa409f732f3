"""Names and ids that Kafka fixes, defined once: the internal topics and the all-zero topic id.

Record-batch layout constants live with the codec that reads them (``record_batch.py``).
"""

from __future__ import annotations

import uuid
from typing import Final

OFFSETS_TOPIC: Final = "__consumer_offsets"
TRANSACTION_STATE_TOPIC: Final = "__transaction_state"
SHARE_GROUP_STATE_TOPIC: Final = "__share_group_state"
INTERNAL_TOPICS: Final = frozenset({OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, SHARE_GROUP_STATE_TOPIC})

CONSUMER_GROUP_TYPE: Final = "consumer"
"""Kafka's GroupType names (ListGroups' group_type): a KIP-848 consumer group, a KIP-932 share group."""
SHARE_GROUP_TYPE: Final = "share"
SHARE_PROTOCOL_TYPE: Final = "share"
"""The protocol type ListGroups and DescribeGroups show for a share group."""
CONSUMER_PROTOCOL_TYPE: Final = "consumer"
"""The protocol type of the Java consumer's classic groups (``ConsumerProtocol.PROTOCOL_TYPE``): their JoinGroup
metadata is a ConsumerProtocolSubscription (protocol/consumer_protocol.py reads it)."""

ZERO_UUID: Final = uuid.UUID(int=0)
"""Kafka's ``Uuid.ZERO_UUID``: "no topic id" on the wire."""
