"""One client connection: an asyncio Protocol that keeps answers in request order.

Every decoded request takes a slot at the back of the connection's queue. Handlers that answer at once
fill their slot immediately; handlers that park (JoinGroup, SyncGroup, a long-polling Fetch) run as
tasks and fill theirs later. Only the front of the queue is ever written, so answers leave in request
order while the connection keeps reading and serving the requests behind a parked one.

Back-pressure: reading pauses while too many answers are owed or too many answer bytes wait to be
sent (including what the transport itself buffers), and resumes once half of that has drained.

A handler that returns ``CLOSE_CONNECTION`` stops the reading for good; its slot closes the connection
(gracefully, after what is already written) once every answer before it has left.

Every read and write tells the server's deadlines that the connection is in use, and whether a frame is
left half-read, so that idle and slow-loris connections can be closed (see deadlines.py).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from types import CoroutineType
from typing import TYPE_CHECKING, Any

import structlog

from groupcoord.protocol.framing import FrameDecoder, FrameParts, FrameTooLarge, opened

from groupcoord.coordinator.security.principal import ANONYMOUS, KafkaPrincipal

from .dispatch import CLOSE_CONNECTION, CloseConnection, Decoded
from .driven import Driven
from .file_sender import FileSender, write_pieces

if TYPE_CHECKING:
    from groupcoord.coordinator.security.authenticator import SaslAuthenticator

    from .listener_security import ListenerSecurity
    from .server import KafkaServer

log = structlog.get_logger("groupcoord.connection")
_ids = itertools.count(1)


def _gated(conn: "KafkaConnection", frame: bytes) -> bool:
    """``secure_connection.gate_frame`` for a connection with a SASL gate. secure_connection.py (and the TLS and
    SASL code it imports) loads with the first secured connection, so a broker with only PLAINTEXT listeners
    never loads it: start-up time."""
    from .secure_connection import gate_frame

    return gate_frame(conn, conn._gate, frame)


class _Slot:
    __slots__ = ("payload", "done", "size", "close")

    def __init__(self) -> None:
        self.payload: bytes | None = None
        self.done = False
        self.size = 0
        self.close = False  # the connection closes when this slot reaches the front


class KafkaConnection(asyncio.Protocol):
    def __init__(self, server: "KafkaServer", peer: str = "?", security: "ListenerSecurity | None" = None,
                 listener: str = "PLAINTEXT") -> None:
        self.server = server
        self.id = next(_ids)
        self.peer = peer
        self.listener = listener
        self.principal: KafkaPrincipal = ANONYMOUS
        self.security = security  # None on a PLAINTEXT listener: nothing below looks at it per request
        self._gate: "SaslAuthenticator | None" = None  # the SASL exchange, until authenticated
        self.admitted = True  # counted against max.connections(.per.ip) until the server forgets it
        self.transport: asyncio.Transport | None = None
        config = server.config
        self._decoder = FrameDecoder(config.socket_request_max_bytes)
        # Back-pressure's bounds (_update_reading, after every read and write), read from the config once.
        self._max_owed = config.connection_max_inflight_requests
        self._max_buffered = config.connection_max_buffered_bytes
        self._pending: deque[_Slot] = deque()
        self._ready_bytes = 0  # answer bytes filled in but not yet handed to the transport
        self._reading_paused = False
        self._writing_paused = False
        self._closed = False
        self._closing = False  # a handler asked for CLOSE_CONNECTION: read nothing more
        self._tasks: set[asyncio.Task[Any] | Driven] = set()  # handlers still running (cancelled if the client goes)
        self._flush_scheduled = False
        self._in_frame_loop = False  # data_received is serving this connection's frames: it writes at the end
        self._muted = False  # throttled by a client quota: nothing is read until the throttle time has passed
        self._muted_until = 0.0
        self._held: list[bytes] = []  # frames read with a throttled one, served once the throttle time is over
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sender: FileSender | None = None  # sending an answer's file regions: later answers queue behind it

    # -- asyncio callbacks ----------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's transports are not asyncio subclasses
        transport.set_write_buffer_limits(high=4 * 1024 * 1024)
        if not self.server.accept(self):
            self._closed = True
            transport.abort()
            return
        if self.security is not None:
            from .secure_connection import secure_connection  # see _gated

            secure_connection(self, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._decoder.buffered and not self._closed:
            log.info("connection closed mid-frame", peer=self.peer, connection=self.id, buffered=self._decoder.buffered)
        self._closed = True
        self.server.forget(self)
        self._abandon_parked()
        if self._sender is not None:
            self._sender.cancel()  # its regions are closed, its watched descriptor too

    def _abandon_parked(self) -> None:
        """Nobody will read these answers: stop the coroutines still working on them, so a long-poll Fetch
        (max_wait_ms is the client's to choose) leaves the purgatory now instead of at its deadline.
        Futures a handler handed back belong to their service (the group coordinator resolves them on
        its own timers) and are left alone; only the tasks this connection made are cancelled."""
        for task in list(self._tasks):
            if isinstance(task, (asyncio.Task, Driven)):
                task.cancel()

    def pause_writing(self) -> None:
        self._writing_paused = True
        self._update_reading()

    def resume_writing(self) -> None:
        self._writing_paused = False
        self._update_reading()

    def data_received(self, data: bytes) -> None:
        """The frame loop: every request the read completed, in order, answered with one write at the end.
        While no answer is owed (nothing parked ahead, no SASL exchange under way), a request an API lane
        takes (dispatch.Lane: the commonest heartbeat) is answered right here from the frame's bytes, and
        answers the ordinary way gives at once join the same write; the rest take a slot in the queue (a
        deferred lane's requests too, whatever is owed: a JoinGroup, a SyncGroup, an OffsetCommit)."""
        if self._closed or self._closing:
            return
        self._in_frame_loop = True
        try:
            self._serve_frames(data)
        finally:
            self._in_frame_loop = False

    def _serve_frames(self, data: bytes) -> None:
        server = self.server
        deadlines = server.deadlines
        now = time.monotonic()
        deadlines.active(self, now)
        decoder = self._decoder
        frame_was_open = bool(decoder.partial)  # the last read ended mid-frame: the deadlines were told so
        try:
            buffer, bounds = decoder.spans(data)
        except FrameTooLarge as exc:
            if self.security is None and data[:1] == b"\x16" and data[1:2] == b"\x03":
                self._abort("TLS handshake on a plaintext listener")  # a ClientHello read as a frame size
            else:
                self._abort("oversized frame", error=str(exc))
            return
        if decoder.partial:  # (the attribute, not the ``buffered`` property: no call per read)
            deadlines.frame_incomplete(self, now)
        elif frame_was_open:  # (most reads end where a frame ends and began where one did: nothing to tell)
            deadlines.frame_complete(self)
        if not bounds:
            return
        quotas = server.quotas  # None unless a client quota exists (coordinator/quotas/throttling.py)
        if quotas is not None:  # no lanes then: every request is charged to its client's quotas
            self._serve_under_quotas([buffer[bounds[i]:bounds[i + 1]] for i in range(0, len(bounds), 2)], quotas)
            return
        dispatcher = server.dispatcher
        lanes = dispatcher.lanes
        deferred = dispatcher.deferred_lanes
        any_lanes = bool(lanes or deferred)
        pending = self._pending
        out: list[bytes] = []  # answers given at once, in request order, ahead of anything in `pending`
        laned = 0
        lane_api = ""
        started = 0.0
        count = len(bounds)
        i = 0
        while i < count:  # i: the next frame's index in bounds (a lane may take several frames at once)
            at = i
            start = bounds[at]
            end = bounds[at + 1]
            i += 2
            if any_lanes and self._gate is None:
                key = buffer[start:start + 4]
                owed = deferred.get(key)
                if owed is not None:
                    # Its answer takes a slot behind those owed, pending or not, and is observed when given,
                    # as the ordinary way's are (the time then includes the write's).
                    if owed[0](self, buffer, start, end):
                        if pending[0].done and not pending[0].close:
                            self._take_ready(out)  # answered at once (MEMBER_ID_REQUIRED): as below
                        continue
                elif not pending:
                    lane = lanes.get(key)
                    if lane is not None:
                        if not laned:
                            started = time.perf_counter()
                        elif lane[1] != lane_api:
                            dispatcher.observe_lane(lane_api, laned, time.perf_counter() - started)
                            laned, started = 0, time.perf_counter()
                        served = lane[0](buffer, bounds, at, out)  # the run of frames it takes from here
                        if served > at:
                            laned += (served - at) >> 1
                            lane_api = lane[1]
                            i = served
                            continue
            frame = buffer[start:end]
            if self._gate is not None and _gated(self, frame):
                if self._closed:
                    return
                if self._closing:
                    break
                continue
            try:
                decoded = dispatcher.decode(frame, self.peer, self.id, self.principal, self.listener)
            except CloseConnection as exc:
                self._abort(exc.reason, **exc.details)
                return
            self._run(decoded)
            if self._closed:
                return
            if self._closing:
                break
            if pending[0].done and not pending[0].close:
                self._take_ready(out)  # answered at once: keeps the lanes open for what follows
        if laned:
            dispatcher.observe_lane(lane_api, laned, time.perf_counter() - started)
        if out or (pending and pending[0].done):  # (else what is owed waits: a parked JoinGroup, nothing to write)
            self._flush(out, touched=True)
        self._update_reading()

    def _take_ready(self, out: list[bytes]) -> None:
        """Move the answers at the front of the queue that are ready (and close nothing) into ``out``."""
        pending = self._pending
        while pending and pending[0].done and not pending[0].close:
            slot = pending.popleft()
            self._ready_bytes -= slot.size
            if slot.payload is not None:
                out.append(slot.payload)

    # -- request lifecycle ----------------------------------------------------------------------
    def _run(self, decoded: Decoded, eager: bool = True) -> None:
        """``eager``: a handler's coroutine is started here and driven without a Task (driven.py); not under
        client quotas, whose charge (and the mute it may bring) stays where the Task put it, after the read."""
        slot = _Slot()
        self._pending.append(slot)
        if decoded.immediate is not None:
            self._fill(slot, decoded.immediate)
            return
        handler = decoded.handler
        assert handler is not None
        # A lazily imported API's handler (apis/registry.py's _ImportOnFirstRequest) keeps the bound handler once
        # its module is imported: that is called, not the wrapper (a Python call less per request).
        handler = getattr(handler, "bound", None) or handler
        try:
            result = handler(decoded.ctx, decoded.request)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # a handler bug, or a native panic (pyo3's PanicException is a
            self._fail(slot, decoded, exc)  # BaseException), must not take the server down
            return
        if type(result) is dict:  # answered at once (a heartbeat): the commonest case, tested first
            self._complete(slot, decoded, result)
        elif isinstance(result, asyncio.Future):
            if result.done():
                self._on_task_done(result, slot, decoded, flush=False)  # answered already: no task needed
            else:  # a service's future (a commit waiting for its write): nothing to wrap or cancel, only to await
                result.add_done_callback(lambda t, s=slot, d=decoded: self._on_task_done(t, s, d))
        elif eager and type(result) is CoroutineType:  # (a handler's coroutine: driven here, no Task; driven.py)
            self._drive(result, slot, decoded)
        elif asyncio.iscoroutine(result):
            task = asyncio.ensure_future(result)
            self._tasks.add(task)
            task.add_done_callback(lambda t, s=slot, d=decoded: self._on_task_done(t, s, d))
        else:
            self._complete(slot, decoded, result)

    def _drive(self, coro: CoroutineType, slot: _Slot, decoded: Decoded) -> None:
        """Start the handler's coroutine now; its answer is given when it ends (in this frame loop if it never
        waits, which then writes it; else from the callback that resumed it last, which flushes)."""
        loop = self._loop
        if loop is None:  # (see _flush_soon)
            loop = self._loop = asyncio.get_running_loop()

        def finish(driven: Driven, result: Any, exc: BaseException | None) -> None:
            self._tasks.discard(driven)
            if exc is None:
                self._complete(slot, decoded, result)
            elif isinstance(exc, asyncio.CancelledError) and self._closed:
                return  # abandoned when the connection went (see _abandon_parked): nobody to answer, nothing failed
            else:
                self._fail(slot, decoded, exc)
            if not self._in_frame_loop:
                self._flush_now_or_soon()

        driven = Driven(coro, finish, loop)
        self._tasks.add(driven)
        driven.step()

    def _on_task_done(self, task: asyncio.Future[Any], slot: _Slot, decoded: Decoded, flush: bool = True) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            if self._closed:
                return  # abandoned when the connection went (see _abandon_parked): nobody to answer, nothing failed
            self._fail(slot, decoded, asyncio.CancelledError())
        else:
            exc = task.exception()
            if exc is not None:
                self._fail(slot, decoded, exc)
            else:
                self._complete(slot, decoded, task.result())
        if flush:
            self._flush_now_or_soon()

    def _flush_now_or_soon(self) -> None:
        """An answer was just given outside the frame loop (a parked request's, a deferred lane's)."""
        # Newest first: those are the ones still owed. A loop, not all() over a generator: this runs once per
        # answer released (each of a durable release's commits), and a generator is a frame and an object.
        for owed in reversed(self._pending):
            if not owed.done:
                if not self._flush_scheduled:
                    self._flush_soon()
                return
        # Nothing else is owed on this connection, so no other answer can join this one's write in this loop
        # turn (answers released together are each owed until they are given, and the last of them gets
        # here): written now, without a loop turn of its own. Most parked requests (a join, a sync, a
        # member's only request in flight) end here.
        self._flush()
        self._update_reading()

    def _flush_soon(self) -> None:
        # Answers released together (a group commit made durable) complete in one loop turn: the
        # flush waits for the end of it, so they leave in one write, not one syscall each.
        self._flush_scheduled = True
        loop = self._loop
        if loop is None:  # kept: get_running_loop() costs a getpid() system call each time
            loop = self._loop = asyncio.get_running_loop()
        loop.call_soon(self._deferred_flush)

    def owe(self) -> _Slot:
        """A slot at the back of the answer queue, for a deferred lane's request (``answer_later`` fills it)."""
        slot = _Slot()
        self._pending.append(slot)
        return slot

    def answer_later(self, slot: _Slot, payload: bytes | None) -> None:
        """A deferred lane's answer: sent once every answer ahead of it has been, with whatever else is ready
        by then (written at once when it is the last owed, else at the end of this loop turn). One given while
        this connection's frame loop runs (the lane's request answered at once) leaves with that loop's own
        write."""
        slot.payload = payload  # _fill's, in line: once per answer of every deferred lane
        slot.done = True
        size = slot.size = len(payload) if payload else 0
        self._ready_bytes += size
        if self._in_frame_loop or self._flush_scheduled:
            return  # that loop's write, or the one at the end of this turn, takes this answer too
        pending = self._pending
        if pending and not pending[-1].done:
            # A later answer is still owed (the commonest case of a durable release, which answers a
            # connection's commits one by one, oldest first): the write waits for the end of the turn, and
            # takes every answer released by then (the rest of the release's join it there).
            self._flush_soon()
            return
        self._flush_now_or_soon()

    def _deferred_flush(self) -> None:
        self._flush_scheduled = False
        self._flush()
        self._update_reading()

    def _complete(self, slot: _Slot, decoded: Decoded, result: Any) -> None:
        try:
            payload = self.server.dispatcher.encode_response(decoded, result)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            self._fail(slot, decoded, exc)
            return
        self._fill(slot, payload)
        if result is CLOSE_CONNECTION:
            slot.close = True
            self._stop_reading()

    def answer_now(self, payload: bytes | None, close: bool = False, delay_s: float = 0.0) -> None:
        """An answer the connection gives itself (the SASL exchange), in request order like any other; with
        ``close`` nothing more is read and the connection closes once it is sent, ``delay_s`` later
        (Kafka's connection.failed.authentication.delay.ms)."""
        slot = _Slot()
        self._pending.append(slot)
        if close:
            slot.close = True
            self._stop_reading()
        if delay_s > 0:
            def later() -> None:
                self._fill(slot, payload)
                self._flush()
            asyncio.get_running_loop().call_later(delay_s, later)
        else:
            self._fill(slot, payload)

    def _stop_reading(self) -> None:
        self._closing = True
        if any(not ahead.done for ahead in self._pending):
            # A request ahead is parked (a long-poll Fetch waits as long as the client's max_wait_ms, minutes
            # if it lies): its answer still leaves first, but reading goes on (data_received discards what
            # comes), so that the client's EOF closes the connection and abandons the wait (connection_lost)
            # instead of the connection hanging until the parked request's deadline.
            return
        if not self._reading_paused and self.transport is not None and not self._closed:
            self._reading_paused = True
            self.transport.pause_reading()

    def _fail(self, slot: _Slot, decoded: Decoded, exc: BaseException) -> None:
        try:
            payload = self.server.dispatcher.encode_failure(decoded, exc)
        except CloseConnection as close:
            self._abort(close.reason, **close.details)
            return
        self._fill(slot, payload)

    def _fill(self, slot: _Slot, payload: bytes | None) -> None:
        slot.payload = payload
        slot.done = True
        slot.size = len(payload) if payload else 0
        self._ready_bytes += slot.size

    def _flush(self, out: list[bytes] | None = None, touched: bool = False) -> None:
        """Write the answers ready at the front of the queue, after ``out`` (answers given at once, which
        come before everything queued), in one write. ``touched``: the connection was marked active in this
        same loop turn already (data_received does so as it reads), so the write does not mark it again."""
        if self._closed or self.transport is None:
            return
        pending = self._pending
        if out is None:
            out = []
        close = False
        while pending and pending[0].done and not close:
            slot = pending.popleft()
            self._ready_bytes -= slot.size
            close = slot.close
            if slot.payload is not None:
                out.append(slot.payload)
        if out:
            if self._sender is not None:  # an answer's file regions are still being sent: these follow them
                self._sender.send(opened(out))
            elif type(out[0]) is FrameParts if len(out) == 1 else FrameParts in map(type, out):  # (no generator)
                # A fetch's records spliced in as views of what was read or as regions of the segment files
                # (protocol.framing.FrameParts): handed to the socket as they are, no join of megabytes.
                self._sender = write_pieces(self, opened(out))
            else:
                self.transport.write(out[0] if len(out) == 1 else b"".join(out))
            if not touched:
                self.server.deadlines.active(self, time.monotonic())
        if close:
            # close(), not abort(): the answers just written still reach the client before the EOF.
            self._close_when_sent()

    def _close_when_sent(self) -> None:
        self._closed = True
        if self._sender is not None:
            self._sender.close_when_sent()
        elif self.transport is not None:
            self.transport.close()

    def _update_reading(self) -> None:
        if self._closed or self.transport is None:
            return
        owed = len(self._pending)
        buffered = self._ready_bytes + self.transport.get_write_buffer_size()
        if not self._reading_paused:
            if self._writing_paused or owed >= self._max_owed or buffered >= self._max_buffered:
                self._reading_paused = True
                self.transport.pause_reading()
        elif (
            not self._closing
            and not self._muted
            and not self._writing_paused
            and owed <= self._max_owed // 2
            and buffered <= self._max_buffered // 2
        ):
            self._reading_paused = False
            self.transport.resume_reading()

    # -- client quotas (coordinator/quotas/throttling.py) -------------------------------------------
    def _serve_under_quotas(self, frames: list[bytes], quotas: Any) -> None:
        """data_received's loop while client quotas exist. Kafka reads one request at a time from a
        connection and mutes it for a throttle time, so nothing a client pipelined behind a throttled request
        is served before that time has passed: such frames are held and served at unmute."""
        if self._held:
            frames = self._held + frames
            self._held = []
        dispatcher = self.server.dispatcher
        for index, frame in enumerate(frames):
            if self._muted:
                self._held = frames[index:]
                break
            if self._gate is not None and _gated(self, frame):
                if self._closed:
                    return
                if self._closing:
                    break
                continue
            try:
                decoded = dispatcher.decode(frame, self.peer, self.id, self.principal, self.listener)
            except CloseConnection as exc:
                self._abort(exc.reason, **exc.details)
                return
            self._run(decoded if quotas is None else quotas.wrap(self, decoded, len(frame)), eager=False)
            if self._closed:
                return
            if self._closing:
                break
        self._flush()
        self._update_reading()

    def mute_for(self, seconds: float) -> None:
        """A client quota was exceeded: read and serve nothing more from this client for ``seconds`` (Kafka
        mutes the channel for the throttle time; the answer carrying the throttle time still leaves at once)."""
        if self._closed or self.transport is None:
            return
        loop = asyncio.get_running_loop()
        until = loop.time() + seconds
        if self._muted and until <= self._muted_until:
            return
        self._muted = True
        self._muted_until = until
        if not self._reading_paused:
            self._reading_paused = True
            self.transport.pause_reading()
        loop.call_at(until, self._unmute, until)

    def _unmute(self, until: float) -> None:
        if not self._muted or until != self._muted_until or self._closed:
            return  # a later throttle extended the mute
        self._muted = False
        if self._held:
            self._serve_under_quotas([], self.server.quotas)
        else:
            self._update_reading()

    @property
    def reading_paused(self) -> bool:
        return self._reading_paused

    @property
    def owed(self) -> int:
        return len(self._pending)

    def _abort(self, reason: str, **details: Any) -> None:
        log.warning("closing connection", reason=reason, peer=self.peer, connection=self.id, listener=self.listener,
                    **details)
        self._closed = True
        if self.transport is not None:
            self.transport.abort()

    def expire(self, deadline: str) -> None:
        """A deadline passed (idle, or a frame left incomplete): close without a word, as Kafka does."""
        log.debug("closing connection", reason="deadline", deadline=deadline, peer=self.peer, connection=self.id,
                  buffered=self._decoder.buffered)
        self._closed = True
        if self.transport is not None:
            self.transport.abort()

    async def drain(self, timeout: float) -> None:
        """Let owed answers finish (graceful shutdown), then close."""
        if self._tasks:
            await asyncio.wait({t.finished() if isinstance(t, Driven) else t for t in self._tasks}, timeout=timeout)
        self._flush()
        if self.transport is not None and not self._closed:
            self._close_when_sent()
