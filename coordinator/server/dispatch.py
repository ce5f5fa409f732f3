"""Request dispatch: header, version check, body decode, handler, response encode.

Kept apart from the socket code (connection.py) so it can be driven by tests with plain bytes. A
handler is `handler(ctx, request) -> dict | entity | awaitable of those | NO_RESPONSE | CLOSE_CONNECTION`;
it never sees bytes, never branches on wire details, and may park as long as it likes.
"""

from __future__ import annotations

import enum
import struct
import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol

import structlog

from groupcoord.coordinator.security.principal import ANONYMOUS, KafkaPrincipal
from groupcoord.protocol.encode import encode_body
from groupcoord.protocol.fast_codecs import FastCodec
from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.protocol.errors import ErrorCode, ProtocolError
from groupcoord.protocol.framing import frame_parts
from groupcoord.protocol.headers import (
    API_VERSIONS_KEY,
    encode_response_header,
    parse_request_header,
    peek_api,
    read_request_header,
)
from groupcoord.protocol.registry import (
    ApiRegistry,
    api_name,
    is_flexible,
    kio_versions,
    request_reader,
    response_class,
)

log = structlog.get_logger("groupcoord.dispatch")

_KEY_VERSION = struct.Struct(">hh")
_CORRELATION = struct.Struct(">i")
_SIZE = struct.Struct(">i")  # a frame's size prefix


HEAVY_REQUEST_BYTES = 256 * 1024
"""A request frame at least this large goes to its API's ``HEAVY`` handler where it has one (issue 17): that
handler reads and answers it a slice at a time, handing the event loop back in between, instead of
decoding it whole in one uninterruptible call. Below it nothing changes (one length comparison)."""


@frozen_dataclass
class HeavyRequest:
    """What a ``HEAVY`` handler gets instead of a decoded request: the frame and where its body starts."""

    frame: bytes
    body_offset: int


class _NoResponse(enum.Enum):
    NO_RESPONSE = "no response"
    CLOSE_CONNECTION = "no response, then close the connection"


NO_RESPONSE = _NoResponse.NO_RESPONSE
"""Returned by a handler when Kafka sends nothing back (Produce with acks=0)."""

CLOSE_CONNECTION = _NoResponse.CLOSE_CONNECTION
"""Returned by a handler when Kafka sends nothing back and closes the connection instead, so that a
client that expects no answer still notices the failure (Produce with acks=0 where a partition failed:
KafkaApis' ``closeConnection``; the producer then refreshes its metadata and reconnects).

Unlike raising ``CloseConnection`` (bad input: abort at once, owed answers discarded), this is an orderly
close: the answers owed to the requests read before this one still leave first, in request order, even
if one of them is parked, and only then does the connection close. Kafka reads one request at a time per
connection, so when it closes nothing behind the failed request has been read; here, nothing more is read
once a handler returns this, and the requests already read behind it are not answered (their handlers
may still run to completion, whereas Kafka would not have read them at all)."""


@frozen_dataclass
class RequestContext:
    """Who sent a request and how: API key and version, correlation id, client id and host, connection, principal,
    listener."""
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    client_host: str
    connection_id: int
    principal: KafkaPrincipal = ANONYMOUS
    listener: str = "PLAINTEXT"


Handler = Callable[[RequestContext, Any], Any]


@frozen_dataclass
class Lane:
    """An API's answer from the server's frame loop itself, for its commonest request. ``answer(data, bounds,
    i, out) -> j``: the read's frames are ``data[bounds[k]:bounds[k + 1]]`` for even ``k`` (size prefixes
    excluded, as ``FrameDecoder.spans`` gives them), frame ``i`` one of the lane's (its api key and version);
    the lane answers frames ``i, i + 2, ...`` for as long as it takes them, reading each in place, doing what
    the handler would have done and appending each whole answer frame to ``out``, and returns the index of
    the first frame it did not answer (``i``: none, nothing done). That frame takes the ordinary way (decode,
    handler, encoder) where every other case is judged. A run, not a frame, so that what a lane does once per
    read (the clock, its gates) is done once for the frames of its API that follow each other. Only answers
    with no error go this way, so the lane's requests are counted as NONE (see ``Dispatcher.observe_lane``);
    a deferred lane's are observed one by one as they are given. Checked against the ordinary way in the
    API's tests."""

    api_key: int
    versions: range
    answer: Callable[..., Any]
    deferred: bool = False
    """A lane whose answer waits (an OffsetCommit, for its write to be durable), one frame at a time:
    ``answer(connection, data, start, end)`` returns True having taken the request (its answer owed in request order, given later
    through the connection's ``answer_later``, by an ``OwedAnswer`` for instance), or False having done nothing. Such a lane takes requests
    while earlier answers are still owed, since its answer is owed in line with them."""


class OwedAnswer:
    """A deferred lane's answer to one request, owed in the connection's request order (its slot is taken
    when the request is) until the service answers it as it answers a future: ``done()``, then
    ``set_result(response)`` with the answer the handler would have returned. That answer is then written as
    the ordinary way writes it (the API's fast writer, the general encoder where that declines), observed as
    the dispatcher observes an answer (the API, its top-level error, the time since the request was read) and
    handed to the connection. What it keeps is what the frame loop read, no request context; so a lane hands
    the service this instead of a future and the shard's code, parked replies included, is the same."""

    __slots__ = ("connection", "slot", "codec", "version", "correlation_id", "client_id", "started")

    def __init__(self, connection: Any, codec: FastCodec, version: int, correlation_id: int,
                 client_id: str | None) -> None:
        self.started = time.perf_counter()
        self.connection = connection
        self.codec = codec
        self.version = version
        self.correlation_id = correlation_id
        self.client_id = client_id
        self.slot = connection.owe()

    def done(self) -> bool:
        return self.slot.done

    def set_result(self, response: Any) -> None:
        connection = self.connection
        dispatcher = connection.server.dispatcher
        try:
            payload = self.codec.write(self.version, self.correlation_id, response)
            if payload is None:
                payload = dispatcher._encode(self._context(), response)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # as the ordinary way's encoding failure (a bug): never the runtime's
            self.fail(exc)
            return
        dispatcher.observe(self.codec.api_key, _top_level_error(response), self.started)
        connection.answer_later(self.slot, payload)

    def fail(self, exc: BaseException) -> None:
        """The service raised instead of answering: answered as the ordinary way answers a failed handler."""
        if self.slot.done:
            return
        connection = self.connection
        try:
            payload = connection.server.dispatcher.encode_failure(
                Decoded(self._context(), None, None, started=self.started), exc)
        except CloseConnection as close:
            connection._abort(close.reason, **close.details)
            return
        connection.answer_later(self.slot, payload)

    def _context(self) -> "RequestContext":
        connection = self.connection
        return RequestContext(self.codec.api_key, self.version, self.correlation_id, self.client_id,
                              connection.peer, connection.id, connection.principal, connection.listener)


def owed_answer_lane(api_key: int, versions: range, codec: FastCodec, authorizer: Any,
                     request_of: Callable[[bytes, int, Any], tuple[str | None, Any] | None],
                     give: Callable[[Any, OwedAnswer], Any]) -> Lane:
    """A deferred lane whose request goes to a service that answers an ``OwedAnswer`` as it answers a future
    (the classic group's JoinGroup and SyncGroup): the one place for what such lanes share. A request is left
    to the handler while an authorizer allows less than everything (the handler checks READ on the group) or
    when it is as large as a heavy request (the heavy handler's); ``request_of(frame, version, connection)``
    reads the rest, returning (client id, the service's request), or None to leave it to the handler too.
    A service that raises is answered as a failed handler is (UNKNOWN_SERVER_ERROR, logged)."""

    def answer(connection: Any, data: bytes, start: int, end: int) -> bool:
        if (authorizer is not None and not authorizer.allows_everything()) or end - start >= HEAVY_REQUEST_BYTES:
            return False
        frame = data[start:end]
        version = frame[3]
        read = request_of(frame, version, connection)
        if read is None:
            return False
        client_id, request = read
        reply = OwedAnswer(connection, codec, version, _CORRELATION.unpack_from(frame, 4)[0], client_id)
        try:
            give(request, reply)
        except Exception as exc:
            reply.fail(exc)
        return True

    return Lane(api_key, versions, answer, deferred=True)


class RequestObserver(Protocol):
    def observe_request(self, api: str, error_code: int, seconds: float) -> None: ...


class CloseConnection(Exception):
    """Raised for input after which the connection cannot be trusted; the server logs and closes."""

    def __init__(self, reason: str, **details: Any) -> None:
        super().__init__(reason)
        self.reason = reason
        self.details = details


@dataclass(slots=True)
class Decoded:
    """A request ready for its handler, or an immediate answer (an error the dispatcher gives itself)."""

    ctx: RequestContext
    request: Any
    handler: Handler | None
    immediate: bytes | None = None
    started: float = 0.0
    fast: FastCodec | None = None  # read by the API's fast codec: its writer answers too (or declines)


def _top_level_error(response: Any) -> int:
    if type(response) is dict or isinstance(response, dict):  # (the exact type first: nearly every answer)
        return int(response.get("error_code", 0) or 0)
    if isinstance(response, bytes):  # a pre-encoded body: its error is not looked into
        return 0
    return int(getattr(response, "error_code", 0) or 0)


class Dispatcher:
    def __init__(self, observer: RequestObserver | None = None) -> None:
        self.registry = ApiRegistry()
        self._handlers: dict[int, Handler] = {}
        # api key and version as the frame spells them (4 bytes) -> handler, codec, version
        self._fast: dict[bytes, tuple[Handler, FastCodec, int]] = {}
        self._heavy: dict[int, Handler] = {}  # api key -> the handler of its very large requests
        # api key and version bytes -> (api key, version, request header version, kio's checked reader): what the
        # general path works out per request, once per served version (emptied by register)
        self._general: dict[bytes, tuple[int, int, int, Callable[[Any, int], tuple[Any, int]]]] = {}
        # api key and version bytes -> (lane, api name): what the connection's frame loop answers itself
        self.lanes: dict[bytes, tuple[Callable[[bytes, list[int], int, list[bytes]], int], str]] = {}
        # the same, for lanes whose answer is owed, not given at once (Lane.deferred)
        self.deferred_lanes: dict[bytes, tuple[Callable[[Any, bytes, int, int], bool], str]] = {}
        self.observer = observer

    @property
    def observer(self) -> RequestObserver | None:
        return self._observer

    @observer.setter
    def observer(self, observer: RequestObserver | None) -> None:
        """Also binds ``_observe_many``, what ``observe_lane`` calls once per read of laned answers: looked up
        here, when the observer is set, rather than on every read (a getattr each was ~1 % of a heartbeat)."""
        self._observer = observer
        many = None if observer is None else getattr(observer, "observe_requests", None)
        if many is None and observer is not None:
            one = observer.observe_request

            def many(api: str, error_code: int, seconds_each: float, count: int) -> None:
                for _ in range(count):
                    one(api, error_code, seconds_each)
        self._observe_many: Callable[[str, int, float, int], None] | None = many

    def register(self, api_key: int, handler: Handler, min_version: int, max_version: int,
                 fast: FastCodec | None = None, heavy: Handler | None = None) -> None:
        """``fast``: the API's hand-written codec (protocol/fast_codecs.py) for the versions it covers; the
        handler is the same either way, and whatever the codec declines takes the general path. ``heavy``:
        the handler of this API's frames of ``HEAVY_REQUEST_BYTES`` or more, given a ``HeavyRequest``."""
        self.registry.add(api_key, min_version, max_version)
        self._handlers[api_key] = handler
        self._general.clear()
        if heavy is not None:
            self._heavy[api_key] = heavy
        else:
            self._heavy.pop(api_key, None)
        for prefix, (_, codec, _) in list(self._fast.items()):
            if codec.api_key == api_key:
                del self._fast[prefix]
        for lanes in (self.lanes, self.deferred_lanes):
            for prefix in [p for p in lanes if _KEY_VERSION.unpack(p)[0] == api_key]:
                del lanes[prefix]
        if fast is not None:
            for version in fast.versions:
                if min_version <= version <= max_version:
                    self._fast[_KEY_VERSION.pack(api_key, version)] = (handler, fast, version)

    def add_lane(self, lane: Lane) -> None:
        """Let the frame loop answer ``lane``'s versions itself (those the API serves)."""
        served = self.registry.get(lane.api_key)
        name = api_name(lane.api_key)
        lanes = self.deferred_lanes if lane.deferred else self.lanes
        for version in lane.versions:
            if served is not None and version in served:
                lanes[_KEY_VERSION.pack(lane.api_key, version)] = (lane.answer, name)

    def disable_fast_codecs(self) -> None:
        """Every request through kio's reader and the schema encoder (tests compare the two paths)."""
        self._fast.clear()
        self.lanes.clear()
        self.deferred_lanes.clear()

    def observe_lane(self, api: str, count: int, seconds: float) -> None:
        """``count`` requests of ``api`` answered NONE by its lane in ``seconds`` together."""
        many = self._observe_many
        if many is not None:
            many(api, 0, seconds / count, count)

    # -- decode -------------------------------------------------------------------------------
    def decode(self, frame: bytes, client_host: str, connection_id: int, principal: KafkaPrincipal = ANONYMOUS,
               listener: str = "PLAINTEXT") -> Decoded:
        """``principal`` and ``listener`` are the connection's (who authenticated on it, and which listener it
        came in on); they go into the request's context as they are."""
        if len(frame) >= HEAVY_REQUEST_BYTES and self._heavy:
            heavy = self._decode_heavy(frame, client_host, connection_id, principal, listener)
            if heavy is not None:
                return heavy
        prefix = frame[:4]  # the frame's api key and version bytes: one look-up each below
        fast = self._fast.get(prefix)
        if fast is not None:
            handler, codec, version = fast
            read = codec.read(frame, version)
            if read is not None:
                ctx = RequestContext(codec.api_key, version, _CORRELATION.unpack_from(frame, 4)[0], read[0],
                                     client_host, connection_id, principal, listener)
                return Decoded(ctx, read[1], handler, None, time.perf_counter(), codec)
        general = self._general.get(prefix)
        if general is not None and len(frame) >= 10:
            # A version served before: what _decode_general works out once (its header version, kio's reader)
            # is kept, and the same steps follow with the same errors.
            api_key, api_version, header_version, reader = general
            handler = self._handlers.get(api_key)
            if handler is not None:
                try:
                    correlation_id, client_id, body_offset = read_request_header(frame, header_version)
                    request, end = reader(frame, body_offset)
                except (CloseConnection, KeyboardInterrupt, SystemExit):
                    raise
                except BaseException as exc:  # as below
                    raise CloseConnection("undecodable request", api=api_name(api_key), api_version=api_version,
                                          error=repr(exc)[:200]) from exc
                ctx = RequestContext(api_key, api_version, correlation_id, client_id, client_host, connection_id,
                                     principal, listener)
                return Decoded(ctx, request, handler, started=time.perf_counter())
        return self._decode_general(frame, client_host, connection_id, principal, listener)

    def _decode_general(self, frame: bytes, client_host: str, connection_id: int, principal: KafkaPrincipal,
                        listener: str) -> Decoded:
        """Every check, in order: a truncated header, an unknown api key, an unsupported version, an undecodable
        header or body. A version served is then remembered for decode's shorter way."""
        try:
            api_key, api_version, correlation_id = peek_api(frame)
        except ProtocolError as exc:
            raise CloseConnection("truncated request header", size=len(frame)) from exc
        handler = self._handlers.get(api_key)
        if handler is None:
            raise CloseConnection("unknown api key", api_key=api_key, api_version=api_version)
        served = self.registry.get(api_key)
        assert served is not None
        if api_version not in served:
            return self._unsupported_version(frame, api_key, api_version, correlation_id, client_host, connection_id)
        flexible = is_flexible(api_key, api_version)
        try:
            header = parse_request_header(frame, flexible)
            reader = request_reader(api_key, api_version)
            request, end = reader(frame, header.body_offset)
        except CloseConnection:
            raise
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # kio raises several types on malformed input, and a native
            # panic arrives as pyo3's PanicException, a BaseException: either way this request is bad
            raise CloseConnection(
                "undecodable request", api=api_name(api_key), api_version=api_version, error=repr(exc)[:200]
            ) from exc
        self._general[frame[:4]] = (api_key, api_version, header.header_version, reader)
        ctx = RequestContext(api_key, api_version, correlation_id, header.client_id, client_host, connection_id,
                             principal, listener)
        return Decoded(ctx, request, handler, started=time.perf_counter())

    def _decode_heavy(self, frame: bytes, client_host: str, connection_id: int, principal: KafkaPrincipal,
                      listener: str) -> Decoded | None:
        """Only the header is read here; None (the ordinary path) for an API without a heavy handler or a
        version it does not serve."""
        try:
            api_key, api_version, correlation_id = peek_api(frame)
        except ProtocolError:
            return None
        handler = self._heavy.get(api_key)
        served = self.registry.get(api_key)
        if handler is None or served is None or api_version not in served:
            return None
        try:
            header = parse_request_header(frame, is_flexible(api_key, api_version))
        except ProtocolError as exc:
            raise CloseConnection("undecodable request header", api=api_name(api_key), api_version=api_version,
                                  error=str(exc)[:200]) from exc
        ctx = RequestContext(api_key, api_version, correlation_id, header.client_id, client_host, connection_id,
                             principal, listener)
        return Decoded(ctx, HeavyRequest(frame, header.body_offset), handler, started=time.perf_counter())

    def _unsupported_version(
        self, frame: bytes, api_key: int, api_version: int, correlation_id: int, host: str, conn: int
    ) -> Decoded:
        ctx = RequestContext(api_key, api_version, correlation_id, None, host, conn)
        if api_key == API_VERSIONS_KEY:
            # KIP-511: answer v0 with our own ApiVersions range so the client can retry at a version we
            # serve. Anything else (a v3/v4-shaped answer) leaves kafka-python unable to connect.
            own = self.registry.get(API_VERSIONS_KEY)
            body = {
                "error_code": ErrorCode.unsupported_version,
                "api_keys": [{"api_key": API_VERSIONS_KEY, "min_version": own.min_version, "max_version": own.max_version}],
            }
            return Decoded(ctx, None, None, immediate=self._encode(ctx, body, version=0))
        if api_version in kio_versions(api_key):
            from groupcoord.protocol.build import error_response  # error answers: imported by the first one

            entity = error_response(response_class(api_key, api_version), ErrorCode.unsupported_version)
            if entity is not None:
                return Decoded(ctx, None, None, immediate=self._encode(ctx, entity))
        raise CloseConnection("unsupported api version", api=api_name(api_key), api_version=api_version)

    # -- encode -------------------------------------------------------------------------------
    def _encode(self, ctx: RequestContext, body: Any, version: int | None = None) -> bytes:
        """The whole response frame, size prefix included. `body` is a dict tree, a kio entity of the
        response class for `version`, or an already encoded body."""
        version = ctx.api_version if version is None else version
        header = encode_response_header(ctx.correlation_id, ctx.api_key, is_flexible(ctx.api_key, version))
        encoded = encode_body(response_class(ctx.api_key, version), body)
        if type(encoded) is bytes:  # (frame_parts' commonest case, without its look for pieces)
            return b"".join((_SIZE.pack(len(header) + len(encoded)), header, encoded))
        return frame_parts(header, encoded)

    def encode_response(self, decoded: Decoded, response: Any) -> bytes | None:
        """The response frame for a handler's result; None when nothing is sent."""
        ctx = decoded.ctx
        if response is NO_RESPONSE or response is CLOSE_CONNECTION:
            self._observe(decoded, 0)
            return None
        payload = None
        if decoded.fast is not None:
            payload = decoded.fast.write(ctx.api_version, ctx.correlation_id, response)
        if payload is None:
            payload = self._encode(ctx, response)
        observer = self._observer  # observe(), in line: every answer not laned passes here
        if observer is not None:
            observer.observe_request(api_name(ctx.api_key), _top_level_error(response),
                                     time.perf_counter() - decoded.started)
        return payload

    def encode_failure(self, decoded: Decoded, exc: BaseException) -> bytes | None:
        """A handler failed: answer UNKNOWN_SERVER_ERROR where the response has a top-level error."""
        ctx = decoded.ctx
        log.error(
            "handler failed",
            api=api_name(ctx.api_key),
            api_version=ctx.api_version,
            correlation_id=ctx.correlation_id,
            client_id=ctx.client_id,
            error=repr(exc),
            exc_info=exc,
        )
        self._observe(decoded, ErrorCode.unknown_server_error)
        from groupcoord.protocol.build import error_response  # error answers: imported by the first one

        entity = error_response(response_class(ctx.api_key, ctx.api_version), ErrorCode.unknown_server_error)
        if entity is None:
            raise CloseConnection("handler failed and the response has no error field", api=api_name(ctx.api_key))
        return self._encode(ctx, entity)

    def _observe(self, decoded: Decoded, error_code: int) -> None:
        self.observe(decoded.ctx.api_key, error_code, decoded.started)

    def observe(self, api_key: int, error_code: int, started: float) -> None:
        """One answer of ``api_key`` with ``error_code``, its request read at ``started`` (perf_counter)."""
        observer = self._observer  # the attribute, not the property: every request not laned passes here
        if observer is not None:
            observer.observe_request(api_name(api_key), error_code, time.perf_counter() - started)
