"""The consumer embedded protocol: JoinGroup subscription and SyncGroup assignment bytes.

Both are an int16 version followed by the struct at that version (non-flexible,
versions 0-3). A newer version than we know is read with our newest layout and
its trailing bytes ignored, because newer versions only append fields. The
coordinator itself only needs the subscribed topics (OffsetDelete's
GROUP_SUBSCRIBED_TO_TOPIC and offset expiry), so decoding errors are reported as
``ConsumerProtocolError`` and callers decide how lenient to be.
"""

from __future__ import annotations

import io
import struct
import sys
from functools import cache

from groupcoord.protocol.frozen import frozen_dataclass

from .names import CONSUMER_PROTOCOL_TYPE

_VERSION = struct.Struct(">h")


@cache
def _subscriptions() -> tuple[type, ...]:
    """kio's subscription schemas v0-v3, imported on first use: eight schema modules are ~15 ms of a
    daemon's start-up, and nothing reads the consumer protocol until a group joins or one is replayed."""
    from kio.schema.consumer_protocol_subscription.v0 import ConsumerProtocolSubscription as v0
    from kio.schema.consumer_protocol_subscription.v1 import ConsumerProtocolSubscription as v1
    from kio.schema.consumer_protocol_subscription.v2 import ConsumerProtocolSubscription as v2
    from kio.schema.consumer_protocol_subscription.v3 import ConsumerProtocolSubscription as v3

    return v0, v1, v2, v3


@cache
def _assignments() -> tuple[type, ...]:
    """kio's assignment schemas v0-v3, imported on first use (see ``_subscriptions``)."""
    from kio.schema.consumer_protocol_assignment.v0 import ConsumerProtocolAssignment as v0
    from kio.schema.consumer_protocol_assignment.v1 import ConsumerProtocolAssignment as v1
    from kio.schema.consumer_protocol_assignment.v2 import ConsumerProtocolAssignment as v2
    from kio.schema.consumer_protocol_assignment.v3 import ConsumerProtocolAssignment as v3

    return v0, v1, v2, v3


class ConsumerProtocolError(ValueError):
    """Bytes that are not a valid consumer-protocol subscription or assignment."""


@frozen_dataclass
class Subscription:
    """The consumer protocol's Subscription (JoinGroup metadata): topics, user data and, from v1 on, owned
    partitions, generation and rack."""
    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[tuple[str, tuple[int, ...]], ...] = ()
    generation_id: int = -1
    rack_id: str | None = None
    version: int = 3


@frozen_dataclass
class Assignment:
    """The consumer protocol's Assignment (a SyncGroup member assignment): partitions by topic and user data."""
    partitions: tuple[tuple[str, tuple[int, ...]], ...]
    user_data: bytes | None = None
    version: int = 3


def _split(data: bytes, schemas: tuple) -> tuple[int, object]:
    if len(data) < 2:
        raise ConsumerProtocolError("consumer protocol bytes shorter than their version")
    version = _VERSION.unpack_from(data, 0)[0]
    if version < 0:
        raise ConsumerProtocolError(f"negative consumer protocol version {version}")
    schema = schemas[min(version, len(schemas) - 1)]
    from .wire_bounds import checked_reader  # with kio's schemas: on first use, not at start-up

    try:
        entity, _ = checked_reader(schema)(bytes(data), 2)
    except Exception as exc:  # kio raises assorted errors on short or garbled input
        raise ConsumerProtocolError(f"cannot decode consumer protocol v{version}: {exc}") from exc
    return version, entity


def decode_subscription(data: bytes) -> Subscription:
    version, s = _split(data, _subscriptions())
    owned = tuple((tp.topic, tuple(int(p) for p in tp.partitions)) for tp in getattr(s, "owned_partitions", ()))
    return Subscription(
        topics=tuple(s.topics),
        user_data=s.user_data,
        owned_partitions=owned,
        generation_id=int(getattr(s, "generation_id", -1)),
        rack_id=getattr(s, "rack_id", None),
        version=version,
    )


def decode_assignment(data: bytes) -> Assignment:
    version, a = _split(data, _assignments())
    parts = tuple((tp.topic, tuple(int(p) for p in tp.partitions)) for tp in a.assigned_partitions)
    return Assignment(partitions=parts, user_data=a.user_data, version=version)


def encode_subscription(sub: Subscription) -> bytes:
    schemas = _subscriptions()
    version = min(sub.version, len(schemas) - 1)
    schema = schemas[version]
    mod = sys.modules[schema.__module__]
    kwargs: dict = {"topics": sub.topics, "user_data": sub.user_data}
    if version >= 1:
        kwargs["owned_partitions"] = tuple(mod.TopicPartition(topic=t, partitions=ps) for t, ps in sub.owned_partitions)
    if version >= 2:
        kwargs["generation_id"] = sub.generation_id
    if version >= 3:
        kwargs["rack_id"] = sub.rack_id
    return _encode(version, schema(**kwargs))


def encode_assignment(assignment: Assignment) -> bytes:
    schemas = _assignments()
    version = min(assignment.version, len(schemas) - 1)
    schema = schemas[version]
    mod = sys.modules[schema.__module__]
    parts = tuple(mod.TopicPartition(topic=t, partitions=ps) for t, ps in assignment.partitions)
    return _encode(version, schema(assigned_partitions=parts, user_data=assignment.user_data))


def _encode(version: int, entity: object) -> bytes:
    buf = io.BytesIO()
    buf.write(_VERSION.pack(version))
    from kio.serial import entity_writer  # on first use: kio.serial is not needed before the first request

    entity_writer(type(entity))(buf, entity)
    return buf.getvalue()


_SUBSCRIBED_CACHED = 1024
_subscribed: dict[bytes, frozenset[str] | None] = {}


def subscribed_topics(protocol_type: str, metadata: bytes) -> frozenset[str] | None:
    """Topics a member's JoinGroup metadata subscribes to; None when not knowable (not a consumer group, or garbled).

    Every join phase reads every member's subscription again, and the members of a group (of many groups)
    mostly send the same bytes: the answer is kept per metadata bytes (at most ``_SUBSCRIBED_CACHED``, all
    dropped when full), so kio's reader runs once per distinct subscription. The answers are immutable."""
    if protocol_type != CONSUMER_PROTOCOL_TYPE:
        return None
    key = bytes(metadata)
    try:
        return _subscribed[key]
    except KeyError:
        pass
    try:
        found: frozenset[str] | None = frozenset(decode_subscription(key).topics)
    except ConsumerProtocolError:
        found = None
    if len(_subscribed) >= _SUBSCRIBED_CACHED:
        _subscribed.clear()
    _subscribed[key] = found
    return found
