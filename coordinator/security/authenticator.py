"""The SASL exchange of one connection on a SASL listener (Kafka's SaslServerAuthenticator), sans I/O.

The connection hands every frame it reads to ``receive`` while the authenticator is its gate, and acts on
the answer (``Gate``): pass the request on to the dispatcher, send bytes, send and then close, or close at
once. Kafka's order of states is kept exactly:

- ``HANDSHAKE_OR_VERSIONS``: ApiVersions (answered, once) or SaslHandshake. Any other request closes the
  connection without an answer (Kafka: "Unexpected Kafka request of type X during SASL handshake").
- ``HANDSHAKE``: SaslHandshake only. An enabled mechanism is answered NONE with the enabled list; any other
  UNSUPPORTED_SASL_MECHANISM with the list, then the connection closes. SaslHandshake v0 means the tokens
  that follow are raw size-prefixed SASL bytes (no Kafka header), as clients before KIP-152 send them.
- ``AUTHENTICATE``: SaslAuthenticate only (another request is answered with its own ILLEGAL_SASL_STATE
  response, then closed); each token goes to the mechanism. Failure: SASL_AUTHENTICATION_FAILED with
  Kafka's text, then close (raw v0 tokens: close without an answer — there is no way to say why).
- ``COMPLETE``: the principal is ``User:<authorization id>``. With ``connections.max.reauth.ms`` the session
  has a lifetime (sent as ``session_lifetime_ms`` to SaslAuthenticate v1+ clients, KIP-368): a SaslHandshake
  on the authenticated connection begins a re-authentication (same mechanism and principal, or it fails),
  and any other request after the session expired closes the connection.

Every body is bounds-checked by the dispatcher's decode (wire_bounds) before kio reads it; frames before
authentication are limited to ``sasl.server.max.receive.size`` by the connection's frame decoder.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol

import structlog

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.build import error_response
from groupcoord.protocol.client_software import valid_client_software
from groupcoord.protocol.encode import encode_body
from groupcoord.protocol.errors import ErrorCode, ProtocolError
from groupcoord.protocol.framing import frame_parts
from groupcoord.protocol.headers import encode_response_header, peek_api
from groupcoord.protocol.registry import is_flexible, response_class

from .principal import KafkaPrincipal
from .sasl_mechanisms import SaslFailure, SaslServerMechanism, new_server

if TYPE_CHECKING:
    from groupcoord.coordinator.server.dispatch import Decoded

log = structlog.get_logger("groupcoord.security")

API_VERSIONS = int(ApiKey.API_VERSIONS)
SASL_HANDSHAKE = int(ApiKey.SASL_HANDSHAKE)
SASL_AUTHENTICATE = int(ApiKey.SASL_AUTHENTICATE)
DEFAULT_MAX_RECEIVE_SIZE = 524288  # Kafka's sasl.server.max.receive.size


class State(enum.Enum):
    HANDSHAKE_OR_VERSIONS = "HANDSHAKE_OR_VERSIONS_REQUEST"
    HANDSHAKE = "HANDSHAKE_REQUEST"
    AUTHENTICATE = "AUTHENTICATE"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


class Action(enum.Enum):
    DISPATCH = "dispatch"   # an ordinary request: the connection runs it
    ANSWER = "answer"       # send ``payload`` (a whole frame)
    ANSWER_CLOSE = "answer then close"
    CLOSE = "close"


@dataclass(slots=True)
class Gate:
    action: Action
    payload: bytes | None = None
    decoded: "Decoded | None" = None
    reason: str = ""


class AuthObserver(Protocol):
    def authentication(self, listener: str, mechanism: str, succeeded: bool, reauthentication: bool = False) -> None: ...


@dataclass
class SaslListenerConfig:
    """What a SASL listener authenticates with (the server builds one per listener)."""

    listener: str
    mechanisms: tuple[str, ...]
    scram_lookup: Callable[..., Any]
    plain_check: Callable[[str, str], bool]
    reauth_ms: int = 0
    reauth_ms_by_mechanism: dict[str, int] = field(default_factory=dict)  # listener.name.<l>.<mech>.connections.max.reauth.ms
    max_receive_size: int = DEFAULT_MAX_RECEIVE_SIZE
    observer: AuthObserver | None = None
    clock: Callable[[], float] = field(default=time.monotonic)


GENERIC_FAILURE = "Authentication failed during {what} due to invalid credentials with SASL mechanism {mechanism}"


class SaslAuthenticator:
    def __init__(self, config: SaslListenerConfig, decode: Callable[[bytes], "Decoded"], peer: str,
                 connection_id: int) -> None:
        self.config = config
        self._decode_frame = decode
        self.peer = peer
        self.connection_id = connection_id
        self.state = State.HANDSHAKE_OR_VERSIONS
        self.principal: KafkaPrincipal | None = None
        self.mechanism: str | None = None
        self.session_expires_at: float | None = None  # monotonic seconds
        self._server: SaslServerMechanism | None = None
        self._kafka_headers = True
        self._reauthenticating = False
        self._bad_reauth_mechanism: str | None = None
        self.client_supports_reauth = False

    @property
    def authenticated(self) -> bool:
        return self.state is State.COMPLETE

    @property
    def reauth_enabled(self) -> bool:
        return self.session_expires_at is not None

    # -- the gate ---------------------------------------------------------------------------------
    def receive(self, frame: bytes) -> Gate:
        if self.state is State.COMPLETE:
            return self._after_authentication(frame)
        if self.state is State.AUTHENTICATE:
            return self._token(frame) if self._kafka_headers else self._raw_token(frame)
        if self.state is State.FAILED:
            return Gate(Action.CLOSE, reason="authentication failed")
        try:
            api_key = peek_api(frame)[0]
        except ProtocolError:
            return self._close("not a Kafka request before SASL authentication (GSSAPI raw tokens are not supported)")
        if api_key == API_VERSIONS and self.state is State.HANDSHAKE_OR_VERSIONS and not self._reauthenticating:
            decoded = self._decode(frame)
            if decoded is None:
                return self._close("undecodable ApiVersions request before authentication")
            # An unsupported version or invalid client software (KIP-511) is answered with its error and may be
            # asked again, as Kafka lets it; only a good answer uses up the one ApiVersions before the handshake.
            if decoded.immediate is None and valid_client_software(decoded.request, decoded.ctx.api_version):
                self.state = State.HANDSHAKE
            return Gate(Action.DISPATCH, decoded=decoded)
        if api_key != SASL_HANDSHAKE:
            return self._close(f"unexpected request (api key {api_key}) during SASL handshake")
        return self._handshake(frame)

    def _after_authentication(self, frame: bytes) -> Gate:
        """Only reached with re-authentication on: a SaslHandshake begins one, and an expired session ends."""
        try:
            api_key = peek_api(frame)[0]
        except ProtocolError:
            api_key = -1
        if api_key == SASL_HANDSHAKE:
            self._reauthenticating = True
            self.state = State.HANDSHAKE
            return self._handshake(frame)
        if self.session_expires_at is not None and self.config.clock() > self.session_expires_at:
            self.state = State.FAILED
            log.info("closing connection: SASL session expired", peer=self.peer, connection=self.connection_id,
                     listener=self.config.listener, principal=str(self.principal))
            return Gate(Action.CLOSE, reason="expired SASL session")
        return Gate(Action.DISPATCH)

    # -- SaslHandshake ----------------------------------------------------------------------------
    def _handshake(self, frame: bytes) -> Gate:
        decoded = self._decode(frame)
        if decoded is None:
            return self._close("undecodable SaslHandshake request")
        if decoded.immediate is not None:  # an unsupported version, answered by the dispatcher
            self.state = State.FAILED
            return Gate(Action.ANSWER_CLOSE, payload=decoded.immediate, reason="unsupported SaslHandshake version")
        ctx = decoded.ctx
        mechanism = decoded.request.mechanism
        enabled = list(self.config.mechanisms)
        self._kafka_headers = ctx.api_version >= 1
        if mechanism not in self.config.mechanisms:
            # the metric label is not the client's string: a client must not be able to mint label values
            self._failed("unsupported", f"unsupported SASL mechanism {str(mechanism)[:100]!r}")
            return Gate(Action.ANSWER_CLOSE, self._frame(ctx, {"error_code": ErrorCode.unsupported_sasl_mechanism,
                                                                "mechanisms": enabled}),
                        reason="unsupported SASL mechanism")
        answer = self._frame(ctx, {"error_code": ErrorCode.none, "mechanisms": enabled})
        if self._reauthenticating and mechanism != self.mechanism:
            # Kafka answers the handshake, then fails the next token (REAUTH_BAD_MECHANISM).
            self._server = None
            self._bad_reauth_mechanism = (f"SASL mechanism '{mechanism}' requested by client is not supported for "
                                          f"re-authentication of mechanism '{self.mechanism}'")
        else:
            self._server = new_server(mechanism, self.config.scram_lookup, self.config.plain_check)
            self.mechanism = mechanism
        self.state = State.AUTHENTICATE
        return Gate(Action.ANSWER, answer)

    # -- SaslAuthenticate -------------------------------------------------------------------------
    def _token(self, frame: bytes) -> Gate:
        try:
            api_key = peek_api(frame)[0]
        except ProtocolError:
            return self._close("not a Kafka request during SASL authentication")
        decoded = self._decode(frame)
        if decoded is None:
            return self._close("undecodable request during SASL authentication")
        ctx = decoded.ctx
        if api_key != SASL_AUTHENTICATE:
            self._failed(self.mechanism or "?", f"unexpected request (api key {api_key}) during SASL authentication")
            entity = error_response(response_class(ctx.api_key, ctx.api_version), ErrorCode.illegal_sasl_state)
            if entity is None or decoded.immediate is not None:
                return Gate(Action.CLOSE, reason="unexpected request during SASL authentication")
            return Gate(Action.ANSWER_CLOSE, self._frame(ctx, entity), reason="unexpected request during SASL authentication")
        if decoded.immediate is not None:
            self.state = State.FAILED
            return Gate(Action.CLOSE, reason="unsupported SaslAuthenticate version")
        if ctx.api_version > 0:
            self.client_supports_reauth = True
        what = "re-authentication" if self._reauthenticating else "authentication"
        try:
            token = self._evaluate(bytes(decoded.request.auth_bytes))
        except SaslFailure as exc:
            message = exc.client_message or GENERIC_FAILURE.format(what=what, mechanism=self.mechanism)
            return Gate(Action.ANSWER_CLOSE, self._frame(ctx, {
                "error_code": ErrorCode.sasl_authentication_failed, "error_message": message, "auth_bytes": b"",
                "session_lifetime": 0}), reason="SASL authentication failed")
        lifetime = self._complete() if self.state is State.COMPLETE else 0
        # Kafka leaves the message at its schema default, "" (not null), on success.
        return Gate(Action.ANSWER, self._frame(ctx, {"error_code": ErrorCode.none, "error_message": "",
                                                       "auth_bytes": token, "session_lifetime": lifetime}))

    def _raw_token(self, frame: bytes) -> Gate:
        try:
            token = self._evaluate(frame)
        except SaslFailure:
            return Gate(Action.CLOSE, reason="SASL authentication failed (raw tokens: closed without an answer)")
        if self.state is State.COMPLETE:
            self._complete()
        return Gate(Action.ANSWER, frame_parts(token))

    def _evaluate(self, token: bytes) -> bytes:
        server = self._server
        if server is None:
            message = self._bad_reauth_mechanism or "no SASL mechanism chosen"
            self._failed(self.mechanism or "?", message)
            raise SaslFailure(message, message)
        try:
            answer = server.evaluate(token)
        except SaslFailure as exc:
            self._failed(server.mechanism, exc.reason)
            raise
        if server.complete:
            principal = KafkaPrincipal("User", server.authorization_id)
            if self._reauthenticating and principal != self.principal:
                message = (f"Cannot change principals during re-authentication from {self.principal}: {principal}")
                self._failed(server.mechanism, message)
                raise SaslFailure(message, message)
            self.principal = principal
            self.state = State.COMPLETE
        return answer

    def _complete(self) -> int:
        """Authentication done: count it, start the session clock; the session lifetime to tell the client."""
        assert self.mechanism is not None and self.principal is not None
        reauth_ms = self.config.reauth_ms_by_mechanism.get(self.mechanism, self.config.reauth_ms)
        self.session_expires_at = self.config.clock() + reauth_ms / 1000 if reauth_ms > 0 else None
        if self.config.observer is not None:
            self.config.observer.authentication(self.config.listener, self.mechanism, True, self._reauthenticating)
        log.debug("SASL authentication succeeded", peer=self.peer, connection=self.connection_id,
                  listener=self.config.listener, mechanism=self.mechanism, principal=str(self.principal),
                  reauthentication=self._reauthenticating)
        self._reauthenticating = False
        self._server = None
        return max(reauth_ms, 0)

    # -- helpers ----------------------------------------------------------------------------------
    def _failed(self, mechanism: str, reason: str) -> None:
        """One log line and one count per failed authentication; ``reason`` never holds a secret."""
        self.state = State.FAILED
        if self.config.observer is not None:
            self.config.observer.authentication(self.config.listener, mechanism, False, self._reauthenticating)
        log.warning("SASL authentication failed", peer=self.peer, connection=self.connection_id,
                    listener=self.config.listener, mechanism=mechanism, reason=reason,
                    reauthentication=self._reauthenticating)

    def _close(self, reason: str) -> Gate:
        self._failed(self.mechanism or "none", reason)
        return Gate(Action.CLOSE, reason=reason)

    def _decode(self, frame: bytes) -> "Decoded | None":
        try:
            return self._decode_frame(frame)
        except Exception:  # the dispatcher's CloseConnection: malformed, unknown key, undecodable body
            return None

    @staticmethod
    def _frame(ctx: Any, body: Any) -> bytes:
        header = encode_response_header(ctx.correlation_id, ctx.api_key, is_flexible(ctx.api_key, ctx.api_version))
        return frame_parts(header, encode_body(response_class(ctx.api_key, ctx.api_version), body))
