"""SASL over the tests' blocking wire client: SaslHandshake then SaslAuthenticate until done.

``sasl_login(client, mechanism, user, password)`` authenticates an open ``WireClient`` (raising
``SaslRefused`` with the broker's error code and text); ``sasl_client(bootstrap, ...)`` opens and
authenticates one. Tests of authorisation use it to speak as a given principal.
"""

from __future__ import annotations

from groupcoord.coordinator.security.sasl_client import authenticate
from groupcoord.protocol.api_keys import ApiKey

from .wire import WireClient


class SaslRefused(Exception):
    def __init__(self, error_code: int, message: str | None) -> None:
        super().__init__(f"{int(error_code)}: {message}")
        self.error_code = int(error_code)
        self.message = message


def sasl_login(client: WireClient, mechanism: str, user: str, password: str, handshake_version: int = 1,
               authenticate_version: int = 2) -> None:
    answer = client.request(ApiKey.SASL_HANDSHAKE, handshake_version, {"mechanism": mechanism})
    if answer.error_code != 0:
        raise SaslRefused(answer.error_code, f"mechanisms {answer.mechanisms}")

    def send(token: bytes) -> bytes:
        reply = client.request(ApiKey.SASL_AUTHENTICATE, authenticate_version, {"auth_bytes": token})
        if reply.error_code != 0:
            raise SaslRefused(reply.error_code, reply.error_message)
        client.session_lifetime_ms = getattr(reply, "session_lifetime", None)
        return bytes(reply.auth_bytes)

    authenticate(send, mechanism, user, password)


def sasl_client(bootstrap: str, mechanism: str, user: str, password: str, timeout: float = 10.0) -> WireClient:
    client = WireClient(bootstrap, timeout=timeout)
    try:
        sasl_login(client, mechanism, user, password)
    except BaseException:
        client.close()
        raise
    return client
