"""A connection on an SSL, SASL_PLAINTEXT or SASL_SSL listener: its principal, its SASL gate, its deadline.

Kept out of connection.py so that a PLAINTEXT connection pays nothing for security: it never calls in here,
and its per-frame cost is one ``is not None`` test of the gate.

- TLS: the handshake is done (asyncio bounded it by ``authentication.timeout.ms``) when the connection is
  made. A verified client certificate's subject, mapped by ``ssl.principal.mapping.rules``, is the principal
  on an SSL listener (Kafka's DefaultKafkaPrincipalBuilder); no certificate is ``User:ANONYMOUS``; a subject
  no rule maps fails the connection.
- SASL: every frame goes through the authenticator until it completes (and, with re-authentication on,
  each frame's api key is still looked at); before that, frames are limited to
  ``sasl.server.max.receive.size`` and the whole exchange to ``authentication.timeout.ms``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import structlog

from groupcoord.coordinator.security.authenticator import Action, SaslAuthenticator
from groupcoord.coordinator.security.principal import ANONYMOUS, KafkaPrincipal
from groupcoord.coordinator.security.principal_mapper import NoMatchingRule
from groupcoord.coordinator.security.tls import subject_dn

if TYPE_CHECKING:
    from .connection import KafkaConnection

log = structlog.get_logger("groupcoord.security")


def secure_connection(conn: "KafkaConnection", transport: Any) -> None:
    security = conn.security
    assert security is not None
    server = conn.server
    if security.ssl_context is not None:
        dn = subject_dn(transport.get_extra_info("peercert"))
        if dn is not None and security.mapper is not None:
            try:
                conn.principal = KafkaPrincipal("User", security.mapper.name(dn))
            except NoMatchingRule:
                log.warning("closing connection: no ssl.principal.mapping.rules rule maps the client certificate",
                            peer=conn.peer, connection=conn.id, listener=conn.listener, subject=dn)
                server.observer_authentication(conn.listener, "SSL", False)
                conn.expire("principal mapping")
                return
        if security.sasl is None:
            server.observer_authentication(conn.listener, "SSL", True)
    if security.sasl is not None:
        listener = conn.listener
        dispatcher = server.dispatcher
        conn._gate = SaslAuthenticator(
            security.sasl, lambda frame: dispatcher.decode(frame, conn.peer, conn.id, ANONYMOUS, listener),
            conn.peer, conn.id)
        conn._decoder.max_frame_size = min(conn._decoder.max_frame_size, security.sasl.max_receive_size)
        loop = asyncio.get_running_loop()
        gate = conn._gate
        loop.call_later(security.auth_timeout_s, _authentication_deadline, conn, gate)


def _authentication_deadline(conn: "KafkaConnection", gate: SaslAuthenticator) -> None:
    if conn._closed or gate.principal is not None:
        return
    log.info("closing connection: SASL authentication not completed in time", peer=conn.peer, connection=conn.id,
             listener=conn.listener, state=gate.state.value)
    conn.server.observer_authentication(conn.listener, gate.mechanism or "none", False)
    conn.expire("authentication timeout")


def gate_frame(conn: "KafkaConnection", gate: SaslAuthenticator, frame: bytes) -> bool:
    """True when the authenticator dealt with the frame; False to serve it as an ordinary request."""
    was_authenticated = gate.authenticated
    result = gate.receive(frame)
    action = result.action
    if action is Action.DISPATCH:
        if result.decoded is None:
            return False
        conn._run(result.decoded)  # ApiVersions before authentication
        return True
    if action is Action.CLOSE:
        conn.expire(result.reason)  # the authenticator logged why
        return True
    security = conn.security
    assert security is not None
    if action is Action.ANSWER_CLOSE:
        conn.answer_now(result.payload, close=True, delay_s=security.failed_auth_delay_s)
        return True
    conn.answer_now(result.payload)
    if gate.authenticated and not was_authenticated or (gate.authenticated and gate.principal != conn.principal):
        conn.principal = gate.principal or conn.principal
        conn._decoder.max_frame_size = conn.server.config.socket_request_max_bytes
        if not gate.reauth_enabled:
            conn._gate = None  # no re-authentication: every later frame goes straight to the dispatcher
    return True
