"""The client half of PLAIN and SCRAM, for the admin CLI, tests and benches (sans I/O).

A client is driven as ``token = c.first()``, then ``token = c.respond(server_token)`` until ``c.complete``;
``respond`` raises ``SaslClientError`` when the server's answer is wrong (a SCRAM server signature that does
not verify means the server does not know the password: the client must not trust the connection).

``authenticate(send, mechanism, user, password)`` runs a whole exchange over a ``send(token) -> token``
callable, which is how the admin client and the tests use it over SaslAuthenticate.
"""

from __future__ import annotations

import hmac
from typing import Callable

from .scram import (
    ClientFinal,
    ClientFirst,
    ScramError,
    ScramMechanism,
    ServerFinal,
    ServerFirst,
    sasl_name,
    secure_random_string,
    xor,
)


class SaslClientError(Exception):
    """The server's side of the exchange is not acceptable."""


class PlainClient:
    mechanism = "PLAIN"

    def __init__(self, user: str, password: str, authzid: str = "") -> None:
        self._token = f"{authzid}\x00{user}\x00{password}".encode()
        self.complete = False

    def first(self) -> bytes:
        return self._token

    def respond(self, server_token: bytes) -> bytes | None:
        self.complete = True
        return None


class ScramClient:
    def __init__(self, mechanism: str, user: str, password: str, nonce: str | None = None,
                 extensions: dict[str, str] | None = None) -> None:
        scram = ScramMechanism.by_name(mechanism)
        if scram is None:
            raise ValueError(f"not a SCRAM mechanism: {mechanism!r}")
        self.scram = scram
        self.mechanism = mechanism
        self._password = password
        self._first = ClientFirst(sasl_name(user), nonce or secure_random_string(), "", dict(extensions or {}))
        self._server_signature: bytes | None = None
        self.complete = False
        self.iterations = 0

    def first(self) -> bytes:
        return self._first.to_bytes()

    def respond(self, server_token: bytes) -> bytes | None:
        if self._server_signature is None:
            return self._final(server_token)
        return self._verify(server_token)

    def _final(self, server_token: bytes) -> bytes:
        try:
            server_first = ServerFirst.parse(server_token)
        except ScramError as exc:
            raise SaslClientError(str(exc)) from None
        if not server_first.nonce.startswith(self._first.nonce) or server_first.nonce == self._first.nonce:
            raise SaslClientError("Invalid server nonce: does not start with client nonce")
        if server_first.iterations < self.scram.min_iterations:
            raise SaslClientError(f"Requested iterations {server_first.iterations} is less than the minimum "
                                  f"{self.scram.min_iterations} for {self.mechanism}")
        self.iterations = server_first.iterations
        salted = self.scram.salted_password(self._password, server_first.salt, server_first.iterations)
        final = ClientFinal(self._first.gs2_header.encode(), server_first.nonce)
        # The auth message uses the server-first message as received (RFC 5802 section 3).
        message = f"{self._first.bare},{server_token.decode()},{final.without_proof}".encode()
        client_key = self.scram.client_key(salted)
        proof = xor(client_key, self.scram.hmac(self.scram.hash(client_key), message))
        self._server_signature = self.scram.hmac(self.scram.server_key(salted), message)
        return ClientFinal(final.channel_binding, final.nonce, proof).to_bytes()

    def _verify(self, server_token: bytes) -> None:
        try:
            final = ServerFinal.parse(server_token)
        except ScramError as exc:
            raise SaslClientError(str(exc)) from None
        if final.error is not None:
            raise SaslClientError(f"Sasl authentication using {self.mechanism} failed with error: {final.error}")
        assert self._server_signature is not None
        if final.signature is None or not hmac.compare_digest(final.signature, self._server_signature):
            raise SaslClientError("Invalid server signature in server final message")
        self.complete = True
        return None


def new_client(mechanism: str, user: str, password: str) -> PlainClient | ScramClient:
    if mechanism == "PLAIN":
        return PlainClient(user, password)
    return ScramClient(mechanism, user, password)


def authenticate(send: Callable[[bytes], bytes], mechanism: str, user: str, password: str) -> None:
    """Run a whole exchange; ``send`` delivers one client token and returns the server's answer (it raises on
    a SaslAuthenticate error code). Raises ``SaslClientError`` if the server's answers do not verify."""
    client = new_client(mechanism, user, password)
    token: bytes | None = client.first()
    while token is not None:
        answer = send(token)
        token = client.respond(answer)
    if not client.complete:
        raise SaslClientError("the exchange ended before it was complete")
