"""Incremental fetch sessions (KIP-227), served as Kafka's FetchManager, FetchSessionCache and FetchContexts do.

A consumer that fetches many partitions sends them all once (epoch 0, a "full" fetch); we cache them in a
session and answer its id. Its next requests (epoch 1, 2, ...) name only what changed (new offsets, added
or forgotten partitions), yet the fetch reads every partition of the session, and the answer lists only
the partitions the consumer needs to hear about (``CachedPartition.must_respond``): new records, an error,
or a high watermark / log start offset that moved since we last told it (Kafka does not compare the last
stable offset; ours equals the high watermark anyway). Partitions answered with records
move to the end of the session's order, so the next fetch's byte budget goes to the others first.

The module is sans-I/O: the fetch service asks a context which partitions to read, reads them, and hands
the per-partition answers back; the cache's only dependency is an injected clock (and a random source for
session ids).

Differences from Kafka, on purpose:

* one cache shard: Kafka 4 splits the slots over 8 shards (KAFKA-9401) for lock contention we do not have,
  so eviction looks at every session, as Kafka did before the split;
* every session is unprivileged, since only consumers fetch from us (Kafka privileges follower sessions);
  the privileged/size ordering is still Kafka's, so a session may evict another only if it is stale
  (unused for longer than ``min.incremental.fetch.session.eviction.ms``) or if it is older than that
  and caches fewer partitions than the new one;
* Kafka keeps its candidates in sorted trees; we scan the (at most ``max.incremental.fetch.session.cache.slots``)
  sessions when the cache is full, which picks the same first entry;
* a cached partition keeps the fetch offset and max bytes, the request fields our reads use (Kafka also
  caches the follower's log start offset and leader epochs, which only matter to replication).
"""
from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from typing import Callable, Iterable, Protocol

from groupcoord.protocol.errors import ErrorCode

from groupcoord.coordinator.clock import Clock
from groupcoord.protocol.frozen import builder, frozen_dataclass

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
_MAX_INT32 = 2**31 - 1


def next_epoch(epoch: int) -> int:
    """FetchMetadata.nextEpoch: FINAL stays FINAL and the counter wraps to 1, never back to INITIAL."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _MAX_INT32 else epoch + 1


@frozen_dataclass
class TopicPartitionRef:
    """Kafka's TopicIdPartition: a session made by a v13+ request names topics by id, older ones by name."""
    topic: str | None               # None: an id this broker does not know (answered UNKNOWN_TOPIC_ID)
    topic_id: uuid.UUID | None      # None in name-based sessions
    partition: int

    @property
    def key(self) -> tuple[str | uuid.UUID | None, int]:
        """CachedPartition equality: by id when the session uses ids (the name may be unknown), else by name."""
        return (self.topic_id if self.topic_id is not None else self.topic, self.partition)


@frozen_dataclass
class PartitionRequest:
    fetch_offset: int
    max_bytes: int


PartitionResult = tuple[TopicPartitionRef, dict]    # a partition and its version-neutral response entry

new_ref = builder(TopicPartitionRef)
new_request = builder(PartitionRequest)
"""The fast constructors (protocol/frozen.py's ``builder``) of the two objects a fetch makes per partition."""


@dataclass(slots=True)
class CachedPartition:
    ref: TopicPartitionRef
    fetch_offset: int
    max_bytes: int
    high_watermark: int = -1
    log_start_offset: int = -1

    @property
    def request(self) -> PartitionRequest:
        return new_request(self.fetch_offset, self.max_bytes)

    def must_respond(self, entry: dict, update: bool = True) -> bool:
        """Kafka's maybeUpdateResponseData: whether the consumer must hear about this partition, remembering
        what we told it. An error resets the cached high watermark so the partition is sent again once the
        error clears."""
        respond = len(entry["records"] or b"") > 0 or entry.get("preferred_read_replica", -1) != -1
        if self.high_watermark != entry["high_watermark"]:
            respond = True
            if update:
                self.high_watermark = entry["high_watermark"]
        if self.log_start_offset != entry["log_start_offset"]:
            respond = True
            if update:
                self.log_start_offset = entry["log_start_offset"]
        if entry["error_code"] != ErrorCode.none:
            respond = True
            if update:
                self.high_watermark = -1
        return respond


@dataclass(eq=False, slots=True)
class FetchSession:
    id: int
    privileged: bool
    uses_topic_ids: bool
    creation_ms: int
    last_used_ms: int
    epoch: int
    partitions: dict[tuple, CachedPartition] = field(default_factory=dict)    # in fetch order
    cached_size: int = -1                  # the size the cache last accounted for (-1: not in the cache)
    evictable_by_all: bool = False         # Kafka's evictableByAll / evictableByPrivileged membership,
    evictable_by_privileged: bool = False  # decided when the session is touched

    def update(self, fetch_data: Iterable[tuple[TopicPartitionRef, PartitionRequest]],
               to_forget: Iterable[TopicPartitionRef]) -> tuple[list, list, list]:
        """Apply an incremental request: new partitions join at the end, known ones take the new request
        parameters (keeping their place), forgotten ones leave."""
        added, updated, removed = [], [], []
        for ref, req in fetch_data:
            cached = self.partitions.get(ref.key)
            if cached is None:
                self.partitions[ref.key] = CachedPartition(ref, req.fetch_offset, req.max_bytes)
                added.append(ref)
            else:
                cached.fetch_offset, cached.max_bytes = req.fetch_offset, req.max_bytes
                updated.append(ref)
        for ref in to_forget:
            if self.partitions.pop(ref.key, None) is not None:
                removed.append(ref)
        return added, updated, removed

    def evictable_key(self) -> tuple[bool, int, int]:
        return (self.privileged, self.cached_size, self.id)


class FetchSessionCache:
    """Sessions by id, bounded by ``max_entries``; see ``_try_evict`` for who may replace whom."""

    def __init__(self, max_entries: int, eviction_ms: int, clock: Clock, rng: random.Random | None = None) -> None:
        self._max_entries = max_entries
        self._eviction_ms = eviction_ms
        self._clock = clock
        self._rng = rng or random.SystemRandom()
        self._sessions: dict[int, FetchSession] = {}
        self.created = 0            # sessions ever created (observable by tests and metrics)
        self.evictions = 0
        self.total_partitions = 0   # Kafka's NumIncrementalFetchPartitionsCached

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, session_id: int) -> FetchSession | None:
        return self._sessions.get(session_id)

    def sessions(self) -> tuple[FetchSession, ...]:
        """The open sessions, as a snapshot another thread may look at (a test beside an embedded broker)."""
        return tuple(self._sessions.values())

    def now_ms(self) -> int:
        return self._clock.monotonic_ms()

    def maybe_create_session(self, privileged: bool, uses_topic_ids: bool,
                             partitions: list[CachedPartition]) -> int:
        """A new session's id, or INVALID_SESSION_ID when the cache is full and nothing may be evicted."""
        now = self._clock.monotonic_ms()
        if len(self._sessions) >= self._max_entries and not self._try_evict(privileged, len(partitions), now):
            return INVALID_SESSION_ID
        session = FetchSession(self._new_session_id(), privileged, uses_topic_ids, now, now,
                               next_epoch(INITIAL_EPOCH), {p.ref.key: p for p in partitions})
        self._sessions[session.id] = session
        self.created += 1
        self.touch(session, now)
        return session.id

    def remove(self, session_id: int) -> FetchSession | None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            self.total_partitions -= session.cached_size
            session.cached_size = -1
        return session

    def touch(self, session: FetchSession, now: int) -> None:
        """Record a use: refresh the last-used time, the accounted size and the evictable membership, which
        Kafka only grants once a session has outlived the eviction time since its creation."""
        session.last_used_ms = now
        if session.cached_size != -1:
            self.total_partitions -= session.cached_size
        session.cached_size = len(session.partitions)
        self.total_partitions += session.cached_size
        old_enough = now - session.creation_ms > self._eviction_ms
        session.evictable_by_privileged = (not session.privileged) or old_enough
        session.evictable_by_all = old_enough

    def _try_evict(self, privileged: bool, size: int, now: int) -> bool:
        """Kafka's tryEvict: the least recently used session goes if it is stale; otherwise the least
        valuable evictable session (unprivileged before privileged, then fewest partitions, then lowest id)
        goes if the newcomer is worth more, i.e. is privileged or caches strictly more partitions."""
        if not self._sessions:
            return False
        lru = min(self._sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now - lru.last_used_ms > self._eviction_ms:
            self._evict(lru)
            return True
        candidates = [s for s in self._sessions.values()
                      if (s.evictable_by_privileged if privileged else s.evictable_by_all)]
        if not candidates:
            return False
        victim = min(candidates, key=FetchSession.evictable_key)
        if (privileged, size, INVALID_SESSION_ID) < victim.evictable_key():
            return False
        self._evict(victim)
        return True

    def _evict(self, session: FetchSession) -> None:
        self.remove(session.id)
        self.evictions += 1

    def _new_session_id(self) -> int:
        while True:
            session_id = self._rng.randint(1, _MAX_INT32 - 1)
            if session_id not in self._sessions:
                return session_id


@frozen_dataclass
class SessionAnswer:
    error: ErrorCode
    session_id: int
    partitions: list[PartitionResult]


class FetchContext(Protocol):
    def partitions(self) -> list[tuple[TopicPartitionRef, PartitionRequest]]:
        """What to read, in order."""

    def respond(self, results: list[PartitionResult]) -> SessionAnswer:
        """The answer's session fields and partitions, given every partition's read result."""


@dataclass(slots=True)
class SessionErrorContext:
    """The session is unknown, out of step or of the wrong kind: nothing is read, and the answer carries
    the error, no partitions and session id 0, since we cannot tell what the consumer wanted."""
    error: ErrorCode

    def partitions(self) -> list[tuple[TopicPartitionRef, PartitionRequest]]:
        return []

    def respond(self, results: list[PartitionResult]) -> SessionAnswer:
        return SessionAnswer(self.error, INVALID_SESSION_ID, [])


@dataclass(slots=True)
class SessionlessFetchContext:
    fetch_data: list[tuple[TopicPartitionRef, PartitionRequest]]

    def partitions(self) -> list[tuple[TopicPartitionRef, PartitionRequest]]:
        return list(self.fetch_data)

    def respond(self, results: list[PartitionResult]) -> SessionAnswer:
        return SessionAnswer(ErrorCode.none, INVALID_SESSION_ID, results)


@dataclass(slots=True)
class FullFetchContext:
    """Epoch 0: answer everything and try to open a session holding what we answered."""
    cache: FetchSessionCache
    fetch_data: list[tuple[TopicPartitionRef, PartitionRequest]]
    uses_topic_ids: bool
    privileged: bool = False

    def partitions(self) -> list[tuple[TopicPartitionRef, PartitionRequest]]:
        return list(self.fetch_data)

    def respond(self, results: list[PartitionResult]) -> SessionAnswer:
        requested = {ref.key: req for ref, req in self.fetch_data}
        cached = []
        for ref, entry in results:
            req = requested[ref.key]
            cached.append(CachedPartition(ref, req.fetch_offset, req.max_bytes,
                                          entry["high_watermark"], entry["log_start_offset"]))
        session_id = self.cache.maybe_create_session(self.privileged, self.uses_topic_ids, cached)
        return SessionAnswer(ErrorCode.none, session_id, results)


@dataclass(slots=True)
class IncrementalFetchContext:
    request_epoch: int
    session: FetchSession
    topic_names: Callable[[uuid.UUID], str | None]

    def partitions(self) -> list[tuple[TopicPartitionRef, PartitionRequest]]:
        """Every partition of the session; one added under an unknown topic id gets its name once the
        topic exists (Kafka's maybeResolveUnknownName)."""
        targets = []
        for cached in self.session.partitions.values():
            if self.session.uses_topic_ids and cached.ref.topic is None:
                name = self.topic_names(cached.ref.topic_id)
                if name is not None:
                    cached.ref = TopicPartitionRef(name, cached.ref.topic_id, cached.ref.partition)
            targets.append((cached.ref, cached.request))
        return targets

    def respond(self, results: list[PartitionResult]) -> SessionAnswer:
        """Only the partitions that must be answered; those answered with records rotate to the end. A
        request that overtook this one on the same session (the epoch moved on meanwhile) makes this
        answer INVALID_FETCH_SESSION_EPOCH, as Kafka re-checks before answering."""
        session = self.session
        if session.epoch != next_epoch(self.request_epoch):
            return SessionAnswer(ErrorCode.invalid_fetch_session_epoch, session.id, [])
        answered = []
        for ref, entry in results:
            cached = session.partitions.get(ref.key)
            if cached is None or not cached.must_respond(entry):
                continue
            answered.append((ref, entry))
            if entry["records"]:
                session.partitions[ref.key] = session.partitions.pop(ref.key)
        return SessionAnswer(ErrorCode.none, session.id, answered)


class FetchManager:
    """Kafka's FetchManager.newContext: which context serves a request, given its session id and epoch."""

    def __init__(self, cache: FetchSessionCache) -> None:
        self.cache = cache

    def new_context(self, session_id: int, epoch: int, uses_topic_ids: bool,
                    fetch_data: list[tuple[TopicPartitionRef, PartitionRequest]],
                    to_forget: list[TopicPartitionRef],
                    topic_names: Callable[[uuid.UUID], str | None],
                    privileged: bool = False) -> FetchContext:
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            if session_id != INVALID_SESSION_ID:
                self.cache.remove(session_id)     # a full request closes the session it names
            if epoch == FINAL_EPOCH:
                return SessionlessFetchContext(fetch_data)
            return FullFetchContext(self.cache, fetch_data, uses_topic_ids, privileged)
        return self._incremental(session_id, epoch, uses_topic_ids, fetch_data, to_forget, topic_names)

    def _incremental(self, session_id: int, epoch: int, uses_topic_ids: bool,
                     fetch_data: list[tuple[TopicPartitionRef, PartitionRequest]],
                     to_forget: list[TopicPartitionRef],
                     topic_names: Callable[[uuid.UUID], str | None]) -> FetchContext:
        session = self.cache.get(session_id)
        if session is None:
            return SessionErrorContext(ErrorCode.fetch_session_id_not_found)
        if session.epoch != epoch:
            return SessionErrorContext(ErrorCode.invalid_fetch_session_epoch)
        if session.uses_topic_ids != uses_topic_ids:
            return SessionErrorContext(ErrorCode.fetch_session_topic_id_error)
        session.update(fetch_data, to_forget)
        if not session.partitions:
            # Everything was forgotten: the session ends and this request is answered without one.
            self.cache.remove(session.id)
            return SessionlessFetchContext(fetch_data)
        self.cache.touch(session, self.cache.now_ms())
        session.epoch = next_epoch(session.epoch)
        return IncrementalFetchContext(epoch, session, topic_names)
