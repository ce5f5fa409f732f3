"""Throttling a connection as KafkaApis does once a quota is exceeded.

For each request, once its handler has answered: the request time (decode and handler work on the event
loop — Kafka's network and request thread time) is charged to the Request quota as a percentage of a
second; a Produce's request size to the Produce quota; a Fetch's response bytes to the Fetch quota. The
largest throttle time earned goes into the response's ``throttle_time_ms``, the answer leaves at once and the
connection is muted — nothing more is read from it — for that long (Kafka's ThrottledChannel: KIP-219 clients
also hold back their own next request, older ones simply wait for the socket). A throttled Fetch is answered
empty (FetchContext.getThrottledResponse) and its bytes are taken back from the Fetch quota, so the consumer
reads them again after the pause instead of losing them.

The connection calls ``wrap`` only while some client quota exists (``server.quotas`` is None otherwise), so a
broker without quotas pays one attribute test per request.
"""
from __future__ import annotations

import asyncio
import dataclasses
import functools
import struct
import time
import types
from typing import TYPE_CHECKING, Any, Generator

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.encode import EncodedBody
from groupcoord.protocol.registry import response_class

from groupcoord.coordinator.quotas.managers import QuotaManagers

if TYPE_CHECKING:
    from groupcoord.coordinator.server.dispatch import Decoded

_INT32 = struct.Struct(">i")
NANOS_TO_PERCENTAGE_PER_SECOND = 100.0 / 1e9  # ClientRequestQuotaManager.NanosToPercentagePerSecond
_PRODUCE = int(ApiKey.PRODUCE)
_FETCH = int(ApiKey.FETCH)
# Not charged to the request quota: the SASL exchange (the authenticator's, before KafkaApis) and the
# cluster actions Kafka exempts (sendResponseExemptThrottle).
_EXEMPT = frozenset(int(k) for k in (ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE, ApiKey.WRITE_TXN_MARKERS))


@types.coroutine
def _timed(coro: Any, spent: list[float]) -> Generator[Any, Any, Any]:
    """Drive ``coro``, adding the time of each of its steps to ``spent[0]`` (time parked is not work)."""
    send_value: Any = None
    error: BaseException | None = None
    while True:
        t0 = time.perf_counter()
        try:
            yielded = coro.throw(error) if error is not None else coro.send(send_value)
        except StopIteration as done:
            spent[0] += time.perf_counter() - t0
            return done.value
        except BaseException:
            spent[0] += time.perf_counter() - t0
            raise
        spent[0] += time.perf_counter() - t0
        error = None
        send_value = None
        try:
            send_value = yield yielded
        except BaseException as exc:  # cancellation or an error thrown in: hand it to the coroutine
            error = exc


class Throttler:
    def __init__(self, managers: QuotaManagers) -> None:
        self.managers = managers

    def wrap(self, conn: Any, decoded: "Decoded", request_size: int) -> "Decoded":
        """The decoded request with its handler wrapped so that its answer is charged and throttled."""
        inner = decoded.handler
        if inner is None:
            return decoded
        wrapped = dataclasses.replace(decoded)
        started = decoded.started

        def handler(ctx: Any, request: Any) -> Any:
            produced = self._charge_produce(conn, ctx, request_size) if ctx.api_key == _PRODUCE else 0
            result = inner(ctx, request)
            if asyncio.iscoroutine(result):
                spent = [time.perf_counter() - started]
                return self._later(conn, wrapped, _timed(result, spent), spent, produced)
            if isinstance(result, asyncio.Future):
                spent = [time.perf_counter() - started]
                return self._later(conn, wrapped, result, spent, produced)
            return self.charge(conn, wrapped, result, time.perf_counter() - started, produced)

        wrapped.handler = handler
        return wrapped

    async def _later(self, conn: Any, decoded: "Decoded", awaitable: Any, spent: list[float], produced: int) -> Any:
        result = await awaitable
        return self.charge(conn, decoded, result, spent[0], produced)

    def _charge_produce(self, conn: Any, ctx: Any, request_size: int) -> int:
        """A Produce's bytes are charged as it is read, and the connection muted at once if they exceed the
        quota: Kafka would read nothing more from it before answering, so nothing pipelined behind it may
        slip through before the mute (the answer, carrying the throttle time, still leaves when ready)."""
        throttle = self.managers.produce.record(ctx.principal.name, ctx.client_id or "", request_size)
        if throttle > 0:
            conn.mute_for(throttle / 1000.0)
        return throttle

    def charge(self, conn: Any, decoded: "Decoded", result: Any, seconds: float, produced: int) -> Any:
        """Record the request against its quotas; throttle the answer and the connection if one is exceeded.
        ``produced``: the throttle time a Produce's bytes earned when it was read."""
        m = self.managers
        ctx = decoded.ctx
        user = ctx.principal.name
        client_id = ctx.client_id or ""
        now = m.request.clock_ms()
        api = ctx.api_key
        request_throttle = 0
        if api not in _EXEMPT:
            request_throttle = m.request.record(user, client_id, seconds * 1e9 * NANOS_TO_PERCENTAGE_PER_SECOND, now)
        bandwidth_throttle = 0
        manager = m.request
        if api == _PRODUCE:
            bandwidth_throttle = produced
            if bandwidth_throttle > request_throttle:
                manager = m.produce
        elif api == _FETCH and type(result) is dict:
            size = sum(len(p.get("records") or b"") for t in result.get("responses") or () for p in t["partitions"])
            bandwidth_throttle = m.fetch.record(user, client_id, size, now)
            if max(bandwidth_throttle, request_throttle) > 0:
                m.fetch.unrecord(user, client_id, size, now)
                result = {"throttle_time": 0, "error_code": 0, "responses": [],
                          "session_id": result.get("session_id", 0) if request_session_kept(decoded) else 0}
            if bandwidth_throttle > request_throttle:
                manager = m.fetch
        throttle = max(request_throttle, bandwidth_throttle)
        if throttle <= 0:
            return result
        manager.note_throttle(user, client_id, throttle)
        decoded.fast = None  # the hand-written writers answer throttle_time 0: take the general encoder
        conn.mute_for(throttle / 1000.0)
        return with_throttle_time(result, throttle, ctx.api_key, ctx.api_version)


def request_session_kept(decoded: "Decoded") -> bool:
    """An incremental fetch keeps its session id in the throttled answer; a full fetch answers none
    (FullFetchContext vs IncrementalFetchContext.getThrottledResponse)."""
    return int(getattr(decoded.request, "session_epoch", 0) or 0) > 0


@functools.lru_cache(maxsize=None)
def _throttle_time_first(api_key: int, api_version: int) -> bool:
    """Whether the response body of this API version starts with throttle_time_ms (most do)."""
    fields = dataclasses.fields(response_class(api_key, api_version))
    return bool(fields) and fields[0].name == "throttle_time"


def with_throttle_time(result: Any, throttle_ms: int, api_key: int, api_version: int) -> Any:
    if isinstance(result, EncodedBody):  # a cached answer (Metadata): its first four bytes, where they say it
        if _throttle_time_first(api_key, api_version) and len(result) >= 4:
            return EncodedBody(_INT32.pack(throttle_ms) + result[4:])
        return result
    if type(result) is dict:
        result["throttle_time"] = throttle_ms
        return result
    if dataclasses.is_dataclass(result) and not isinstance(result, type) and hasattr(result, "throttle_time"):
        try:
            return dataclasses.replace(result, throttle_time=type(result.throttle_time)(milliseconds=throttle_ms)
                                       if hasattr(result.throttle_time, "total_seconds") else throttle_ms)
        except (TypeError, ValueError):
            return result
    return result  # a pre-encoded body or no answer at all: the connection is still muted
