"""The broker assembled: storage, group coordinator, data plane, server, metrics — and the embedded API.

`Broker` is what the daemon runs and what tests and applications embed:

    async with Broker(listen="127.0.0.1:0") as b:          # inside an event loop
        connect(b.bootstrap_servers)

    with run_in_thread(listen="127.0.0.1:0") as b:         # from synchronous code
        KafkaConsumer(bootstrap_servers=b.bootstrap_servers)

Without a `data_dir` an embedded broker keeps its logs in a temporary directory removed on stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import structlog

from .cluster import ClusterIdentity, load_or_create_cluster_id
from .cluster_apis import ClusterApis, InternalTopicsOnly
from .config import BrokerConfig
from .server.dispatch import Dispatcher
from .server.server import KafkaServer

log = structlog.get_logger("groupcoord.broker")

EMBEDDED_DEFAULTS: dict[str, Any] = {"listen": "127.0.0.1:0", "metrics_port": 0, "data_dir": ""}


def embedded_config(config: BrokerConfig | None = None, **overrides: Any) -> BrokerConfig:
    base = config if config is not None else BrokerConfig().replace(**EMBEDDED_DEFAULTS)
    return base.replace(**overrides) if overrides else base


class Broker:
    def __init__(self, config: BrokerConfig | None = None, **overrides: Any) -> None:
        self.config = embedded_config(config, **overrides)
        self._temp_dir: Path | None = None
        self.server: KafkaServer | None = None
        self.dispatcher: Dispatcher | None = None
        self.host = ""
        self.port = 0
        self.metrics_port = 0
        self.started_at = 0.0
        self.startup_seconds = 0.0

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def data_dir(self) -> Path:
        return self._temp_dir or self.config.data_path

    async def start(self) -> "Broker":
        t0 = time.perf_counter()
        if not self.config.data_dir:
            self._temp_dir = Path(tempfile.mkdtemp(prefix="groupcoord-"))
        data_dir = self.data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        cluster_id = load_or_create_cluster_id(data_dir, self.config.node_id, self.config.cluster_id)

        self.dispatcher = Dispatcher()
        # The advertised port may be 0 ("any free port") until the socket is bound; the identity is
        # built after binding so Metadata and FindCoordinator always name the real port.
        self.server = KafkaServer(self.config, self.dispatcher)
        host, port = await self.server.start()
        adv_host = self.config.advertised_host if self.config.advertised else host
        adv_port = self.config.advertised_port if self.config.advertised else port
        identity = ClusterIdentity(self.config.node_id, adv_host, adv_port, cluster_id)
        ClusterApis(identity, self.dispatcher.registry, InternalTopicsOnly(self.config.offsets_topic_num_partitions)).register(
            self.dispatcher
        )
        self.host, self.port = host, port
        self.startup_seconds = time.perf_counter() - t0
        self.started_at = time.time()
        log.info("broker started", bootstrap=self.bootstrap_servers, data_dir=str(data_dir), seconds=round(self.startup_seconds, 4))
        return self

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.stop()
            self.server = None
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None

    async def __aenter__(self) -> "Broker":
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop where installed (the design card's loop), else asyncio's own, said once in the log."""
    try:
        import uvloop
    except ImportError:
        log.warning("uvloop is not installed; using the default asyncio event loop")
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


@contextlib.contextmanager
def run_in_thread(config: BrokerConfig | None = None, **overrides: Any) -> Iterator[Broker]:
    """Run a broker on its own event loop in a background thread, for synchronous code and tests."""
    broker = Broker(config, **overrides)
    loop = new_event_loop()
    started = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(broker.start())
        except BaseException as exc:  # reported to the caller below
            failure.append(exc)
            started.set()
            return
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=run, name="groupcoord-broker", daemon=True)
    thread.start()
    started.wait()
    if failure:
        thread.join()
        loop.close()
        raise failure[0]
    try:
        yield broker
    finally:
        asyncio.run_coroutine_threadsafe(broker.stop(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        loop.close()
