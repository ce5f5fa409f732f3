"""After the daemon listens: import, in the background, what the first requests of the common APIs would.

Start-up imports only what it takes to listen: most API handler modules, kio's schema of every request and
response, and the consumer- and share-group records load on first use (registry.py, protocol/registry.py,
groups/offsets_records.py). Left at that, a client's first requests pay for those imports (a first Fetch ~15 ms:
kio's Fetch v16 request and response, and the handler module). So once ``listening on`` has been said, the
daemon imports them itself, one step at a time from the event loop: each step is one import's worth of work
(a handler module, or one version's request or response schema with its reader or writer), and a step runs
only once the loop has been idle for ``IDLE_S`` (a timer that fires on time: one that fires late means the loop
was busy, with the partitions' load or requests), so a request arriving meanwhile waits for at most the one
step under way, and one being served only meets a step where it leaves the loop idle that long (waiting on
the disk). The caches
filled are the ones the first request would fill (``api_module``, ``request_reader``, ``entity_encoder``), so
that request finds them done.

What is warmed: the data-plane and group APIs every consumer and producer uses, at the versions current clients
send (``WARM_UP``), and, last, prometheus-client for the first metrics scrape; other APIs and versions still load
on their first request. Only the daemon does this
(``groupcoord serve``); an embedding application's broker, and the tests', load on first use.
"""

from __future__ import annotations

import asyncio
from importlib import import_module
from typing import Callable, Iterator

import structlog

from groupcoord.protocol.api_keys import ApiKey

log = structlog.get_logger("groupcoord.warm_up")

WARM_UP: tuple[tuple[str, ApiKey, tuple[int, ...]], ...] = (
    # (API module, key, versions whose kio schemas are warmed): the highest (the Java client's, 4.x), then what
    # librdkafka 2.x (confluent-kafka) and kafka-python 2.x send, as seen on the wire. JoinGroup v6-v9, SyncGroup
    # v4-v5, Heartbeat and OffsetCommit have hand-written codecs (protocol/fast_codecs.py) and eager modules.
    ("api_versions", ApiKey.API_VERSIONS, (4, 3)),
    ("metadata", ApiKey.METADATA, (13, 12)),
    ("find_coordinator", ApiKey.FIND_COORDINATOR, (6, 2)),
    ("produce", ApiKey.PRODUCE, (11, 10, 9)),
    ("fetch", ApiKey.FETCH, (17, 16, 12)),
    ("list_offsets", ApiKey.LIST_OFFSETS, (10, 7)),
    ("offset_fetch", ApiKey.OFFSET_FETCH, (9, 8)),
    ("join_group", ApiKey.JOIN_GROUP, (5,)),
    ("sync_group", ApiKey.SYNC_GROUP, (3,)),
    ("leave_group", ApiKey.LEAVE_GROUP, (5, 1)),
    ("init_producer_id", ApiKey.INIT_PRODUCER_ID, (5, 4)),
    ("consumer_group_heartbeat", ApiKey.CONSUMER_GROUP_HEARTBEAT, (1,)),
)

Step = tuple[str, Callable[[], object]]


def steps() -> Iterator[Step]:
    """The warm-up, one import's worth a step: (what, do it)."""
    from groupcoord.protocol.encode import entity_encoder
    from groupcoord.protocol.registry import request_reader, response_class

    from .registry import api_module

    for name, key, versions in WARM_UP:
        yield f"{name} handler", lambda name=name: api_module(name)
        for v in versions:
            # what Dispatcher.decode and Dispatcher._encode look up for a request of this version (cached there)
            yield f"{name} v{v} request", lambda key=key, v=v: request_reader(key, v)
            yield f"{name} v{v} response", lambda key=key, v=v: entity_encoder(response_class(key, v))
    yield "consumer protocol", _consumer_protocol
    yield "consumer and share group records", lambda: import_module(
        "groupcoord.coordinator.groups.consumer_share_records")
    # the consumer and share groups' code, which the group coordinator imports with the first such group or request
    yield "consumer group code", lambda: import_module("groupcoord.coordinator.groups.consumer.heartbeat")
    yield "share group code", lambda: import_module("groupcoord.coordinator.groups.share.heartbeat")
    yield "transaction markers", lambda: import_module("groupcoord.coordinator.dataplane.txn_markers")  # DataPlane's
    # the transaction coordinator's shards (made by its first request: transactions/service.py)
    yield "transaction shards", lambda: import_module("groupcoord.coordinator.transactions.shard")
    yield "hashlib", lambda: import_module("hashlib")  # a share group's metadata hash (groups/share/topics.py)
    for module in METRICS_EXPOSITION:
        yield module, lambda module=module: import_module(module)


METRICS_EXPOSITION = ("http", "http.server", "urllib.request", "wsgiref.simple_server", "prometheus_client")
"""The first metrics scrape's imports, last: prometheus-client, which the broker's metrics import only when scraped
(coordinator/metric_families.py), and what its exposition module pulls in, a step each so that a request meets at
most one of them (``http``'s HTTPStatus enum alone is half of prometheus-client's import)."""


def _consumer_protocol() -> None:
    """kio's consumer protocol schemas and a reader, as the first JoinGroup of a consumer group reads them."""
    from groupcoord.protocol.consumer_protocol import Subscription, decode_subscription, encode_subscription

    decode_subscription(encode_subscription(Subscription(topics=("warm-up",))))


IDLE_S = 0.005
"""How long the loop must have had nothing else to do before a step runs."""
LATE_S = 0.001
"""A timer firing this much after its time means the loop was busy (uvloop's clock counts milliseconds)."""
GIVE_UP_S = 60.0
"""A daemon busy from its start never leaves the loop idle that long: past this the warm-up stops waking the loop
(200 times a second while it waits) and what is left loads on first use, as in an embedded broker."""


class WarmUp:
    """The warm-up's progress: ``done`` steps of ``total``; ``finished`` once all have run (or failed)."""

    def __init__(self, work: list[Step] | None = None, idle_s: float = IDLE_S, give_up_s: float = GIVE_UP_S) -> None:
        self.work = list(steps()) if work is None else work
        self.idle_s = idle_s
        self.give_up_s = give_up_s
        self.total = len(self.work)
        self.done = 0
        self.finished = asyncio.Event()

    async def run(self) -> None:
        deadline = asyncio.get_running_loop().time() + self.give_up_s
        try:
            for what, step in self.work:
                if not await self._idle(deadline):
                    log.info("warm-up left to first use: the loop was never idle", done=self.done, total=self.total)
                    return
                try:
                    step()
                except Exception as exc:  # the first request of that API imports it again, and says why
                    log.warning("warm-up step failed", step=what, error=repr(exc))
                self.done += 1
        finally:
            self.finished.set()

    async def _idle(self, deadline: float) -> bool:
        """True once a sleep of ``idle_s`` has ended on time (nothing else had the loop meanwhile); False if
        none has by ``deadline`` (the loop's clock)."""
        loop = asyncio.get_running_loop()
        while True:
            asked = loop.time()
            await asyncio.sleep(self.idle_s)
            if loop.time() - asked <= self.idle_s + LATE_S:
                return True
            if loop.time() >= deadline:
                return False


def start(idle_s: float = IDLE_S) -> tuple[WarmUp, asyncio.Task[None]]:
    """Begin the warm-up on the running loop; cancel the task to stop it (at a step's boundary)."""
    warm = WarmUp(idle_s=idle_s)
    return warm, asyncio.get_running_loop().create_task(warm.run(), name="warm-up")
