"""The server half of each SASL mechanism: PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802/7677).

Each is a small state machine, one per authentication, fed the client's tokens by the authenticator
(``authenticator.py``) and answering the next server token. Failures carry the text Kafka gives the client:
Kafka's SaslServerAuthenticator sends a SaslAuthenticationException's own message, but replaces every other
failure (unknown user, wrong proof, bad message) by one generic sentence, so that an unauthenticated client
cannot learn whether a user exists. ``SaslFailure.client_message`` is that choice; ``reason`` is for our log
only and never holds a secret.
"""

from __future__ import annotations

import hmac as _hmac
from typing import Callable, Protocol

from .scram import (
    MAX_ITERATIONS,
    ClientFinal,
    ClientFirst,
    ScramCredential,
    ScramError,
    ScramMechanism,
    ServerFinal,
    ServerFirst,
    auth_message,
    secure_random_string,
    username,
    xor,
)

PLAIN = "PLAIN"
SCRAM_SHA_256 = "SCRAM-SHA-256"
SCRAM_SHA_512 = "SCRAM-SHA-512"
SUPPORTED_MECHANISMS = (PLAIN, SCRAM_SHA_256, SCRAM_SHA_512)
TOKEN_AUTH_EXTENSION = "tokenauth"


def shown(name: str, limit: int = 64) -> str:
    """A client-chosen name as it may appear in a log line: quoted and cut (a name can be 500 KiB long)."""
    return repr(name[:limit]) + ("..." if len(name) > limit else "")


class SaslFailure(Exception):
    """The exchange failed. ``client_message`` is Kafka's text for the client (None: the generic one)."""

    def __init__(self, reason: str, client_message: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.client_message = client_message


class SaslServerMechanism(Protocol):
    mechanism: str

    def evaluate(self, token: bytes) -> bytes: ...
    @property
    def complete(self) -> bool: ...
    @property
    def authorization_id(self) -> str: ...


ScramLookup = Callable[[str, ScramMechanism], "ScramCredential | None"]
PlainCheck = Callable[[str, str], bool]


class PlainServer:
    """RFC 4616: ``[authzid] NUL authcid NUL passwd``, checked by ``check(user, password)``; Kafka's texts."""

    mechanism = PLAIN

    def __init__(self, check: PlainCheck) -> None:
        self._check = check
        self._user: str | None = None

    @property
    def complete(self) -> bool:
        return self._user is not None

    @property
    def authorization_id(self) -> str:
        assert self._user is not None
        return self._user

    def evaluate(self, token: bytes) -> bytes:
        if self._user is not None:
            raise SaslFailure("PLAIN token after completion", "Unexpected challenge in Sasl server state COMPLETE")
        text = token.decode("utf-8", errors="replace")
        parts = text.split("\x00", 3)
        if len(parts) != 3:
            msg = f"Invalid SASL/PLAIN response: expected 3 tokens, got {min(len(parts), 4)}"
            raise SaslFailure(msg, msg)
        authzid, user, password = parts
        if not user:
            raise SaslFailure("username not specified", "Authentication failed: username not specified")
        if not password:
            raise SaslFailure("password not specified", "Authentication failed: password not specified")
        if not self._check(user, password):
            raise SaslFailure(f"invalid username or password for {shown(user)}",
                              "Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise SaslFailure("authorization id differs from username",
                              "Authentication failed: Client requested an authorization id that is different from username")
        self._user = user
        return b""


class ScramServer:
    """RFC 5802 server: client-first → server-first → client-final → server-final (``v=`` signature).

    Channel binding: only gs2 header ``n`` is accepted (Kafka's grammar), and the client-final ``c=`` must be
    exactly the base64 of that header, as RFC 5802 section 5.1 requires of the server. Extensions other than
    Kafka's ``tokenauth`` are ignored as Kafka ignores them; ``tokenauth=true`` (delegation tokens, which we do
    not issue) fails the exchange like an unknown token.
    """

    def __init__(self, mechanism: ScramMechanism, lookup: ScramLookup,
                 server_nonce: Callable[[], str] = secure_random_string) -> None:
        self._server_nonce = server_nonce
        self.scram = mechanism
        self.mechanism = mechanism.mechanism_name
        self._lookup = lookup
        self._state = "first"
        self._first: ClientFirst | None = None
        self._server_first: ServerFirst | None = None
        self._credential: ScramCredential | None = None
        self._user = ""

    @property
    def complete(self) -> bool:
        return self._state == "complete"

    @property
    def authorization_id(self) -> str:
        assert self.complete
        return self._user

    def evaluate(self, token: bytes) -> bytes:
        try:
            if self._state == "first":
                return self._client_first(token)
            if self._state == "final":
                return self._client_final(token)
            raise SaslFailure(f"token in state {self._state}", f"Unexpected challenge in Sasl server state {self._state.upper()}")
        except ScramError as exc:
            self._fail()
            raise SaslFailure(str(exc)) from None
        except SaslFailure:
            self._fail()
            raise

    def _fail(self) -> None:
        self._state = "failed"
        self._credential = None

    def _client_first(self, token: bytes) -> bytes:
        first = ClientFirst.parse(token)
        user = username(first.saslname)
        if first.extensions.get(TOKEN_AUTH_EXTENSION, "").lower() == "true":
            raise SaslFailure(f"token authentication requested for {shown(user)}; no delegation tokens are issued")
        credential = self._lookup(user, self.scram)
        if credential is None:
            raise SaslFailure(f"unknown user {shown(user)} for {self.mechanism}")
        if first.authzid and first.authzid != first.saslname:
            raise SaslFailure("authorization id differs from username",
                              "Authentication failed: Client requested an authorization id that is different from username")
        if credential.iterations < self.scram.min_iterations:
            raise SaslFailure(f"Iterations {credential.iterations} is less than the minimum {self.scram.min_iterations}")
        if credential.iterations > MAX_ITERATIONS:
            raise SaslFailure(f"Iterations {credential.iterations} is more than the maximum {MAX_ITERATIONS}")
        self._first, self._credential, self._user = first, credential, user
        self._server_first = ServerFirst(first.nonce + self._server_nonce(), credential.salt, credential.iterations)
        self._state = "final"
        return self._server_first.to_bytes()

    def _client_final(self, token: bytes) -> bytes:
        final = ClientFinal.parse(token)
        first, server_first, credential = self._first, self._server_first, self._credential
        assert first is not None and server_first is not None and credential is not None
        # Kafka checks endsWith, not equality (ScramSaslServer), and clients depend on it: librdkafka up to
        # 2.0 sends its own nonce again in front of the combined one (kcat 1.7 does). The proof still covers
        # the nonce exactly as sent, so nothing is weakened: the client must still know the password.
        if not final.nonce.endswith(server_first.nonce):
            raise SaslFailure("Invalid client nonce in the final client message.")
        if final.channel_binding != first.gs2_header.encode():
            raise SaslFailure("channel binding does not match the gs2 header")
        message = auth_message(first, server_first, final)
        client_signature = self.scram.hmac(credential.stored_key, message)
        if len(final.proof) != len(client_signature):
            raise SaslFailure("Invalid client credentials")
        computed_stored_key = self.scram.hash(xor(client_signature, final.proof))
        if not _hmac.compare_digest(computed_stored_key, credential.stored_key):
            raise SaslFailure(f"Invalid client credentials for {shown(self._user)}")
        signature = self.scram.hmac(credential.server_key, message)
        self._credential = None
        self._state = "complete"
        return ServerFinal(signature=signature).to_bytes()


def new_server(mechanism: str, scram_lookup: ScramLookup, plain_check: PlainCheck) -> SaslServerMechanism:
    if mechanism == PLAIN:
        return PlainServer(plain_check)
    scram = ScramMechanism.by_name(mechanism)
    if scram is None:
        raise ValueError(f"unsupported SASL mechanism {mechanism!r}")
    return ScramServer(scram, scram_lookup)
