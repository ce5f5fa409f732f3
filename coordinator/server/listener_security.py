"""What each listener's connections are secured with, resolved once from the config when the broker starts.

Settings are looked up per listener as Kafka does (``listener.name.<listener>.<setting>`` before the broker-
wide ``<setting>``; SASL settings also per mechanism, ``listener.name.<listener>.<mechanism>.sasl.jaas.config``),
so a misconfigured listener (a TLS listener without a key, GSSAPI asked for) stops the broker at start with
a clear error instead of failing its clients.

PLAIN users: the ``user_<name>="<password>"`` entries of the listener's PlainLoginModule JAAS config, as
Kafka's PlainServerCallbackHandler reads them; a user not listed there is checked against the SCRAM credential
store (the password is salted with the stored salt and iterations and compared with the StoredKey), so users
created with ``groupcoord users add`` or AlterUserScramCredentials can use PLAIN over TLS too — a groupcoord
addition; with neither, PLAIN fails as Kafka's does.

The TLS and SASL code (the authenticator, JAAS parsing, the principal mapper, TLS settings) is imported by
``build`` for a listener that uses it, so a broker with only PLAINTEXT listeners starts without loading it
(with server/connection.py importing server/secure_connection.py only for a secured connection).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from .listeners import Listener

if TYPE_CHECKING:
    from ..security.authenticator import SaslListenerConfig
    from ..security.credentials import CredentialStore
    from ..security.principal_mapper import SslPrincipalMapper
    from ..security.tls import TlsSettings


@dataclass
class ListenerSecurity:
    """What a listener needs to authenticate its connections: TLS context, principal mapper, SASL settings, timeouts."""
    listener: Listener
    ssl_context: ssl.SSLContext | None = None
    mapper: SslPrincipalMapper | None = None
    sasl: SaslListenerConfig | None = None
    auth_timeout_s: float = 10.0
    failed_auth_delay_s: float = 0.1

    @property
    def name(self) -> str:
        return self.listener.name

    @property
    def secured(self) -> bool:
        return self.ssl_context is not None or self.sasl is not None


def _get(cfg: Any, listener: str, name: str, mechanism: str | None = None) -> Any:
    return cfg.listener_setting(listener, name, mechanism)


def tls_settings(cfg: Any, listener: str) -> TlsSettings:
    from ..security.tls import TlsSettings

    return TlsSettings(
        keystore_location=_get(cfg, listener, "ssl.keystore.location"),
        keystore_key=_get(cfg, listener, "ssl.keystore.key"),
        keystore_certificate_chain=_get(cfg, listener, "ssl.keystore.certificate.chain"),
        key_password=_get(cfg, listener, "ssl.key.password") or _get(cfg, listener, "ssl.keystore.password"),
        truststore_location=_get(cfg, listener, "ssl.truststore.location"),
        truststore_certificates=_get(cfg, listener, "ssl.truststore.certificates"),
        client_auth=str(_get(cfg, listener, "ssl.client.auth") or "none"),
        enabled_protocols=str(_get(cfg, listener, "ssl.enabled.protocols")),
        cipher_suites=_get(cfg, listener, "ssl.cipher.suites"),
        keystore_type=str(_get(cfg, listener, "ssl.keystore.type")),
        truststore_type=str(_get(cfg, listener, "ssl.truststore.type")),
    )


def plain_check(jaas_users: dict[str, str], credentials: CredentialStore) -> Callable[[str, str], bool]:
    import hmac  # a SASL PLAIN listener's only: hmac imports hashlib (OpenSSL's), ~0.6 % of a daemon's start-up

    from ..security.scram import ScramMechanism

    def check(user: str, password: str) -> bool:
        expected = jaas_users.get(user)
        if expected is not None:
            return hmac.compare_digest(expected.encode(), password.encode())
        for mechanism in (ScramMechanism.SCRAM_SHA_512, ScramMechanism.SCRAM_SHA_256):
            credential = credentials.lookup(user, mechanism)
            if credential is not None:
                salted = mechanism.salted_password(password, credential.salt, credential.iterations)
                return hmac.compare_digest(mechanism.hash(mechanism.client_key(salted)), credential.stored_key)
        return False
    return check


def build(cfg: Any, listener: Listener, credentials: CredentialStore, observer: Any = None) -> ListenerSecurity:
    name = listener.name
    security = ListenerSecurity(listener, auth_timeout_s=cfg.authentication_timeout_ms / 1000,
                                failed_auth_delay_s=max(cfg.connection_failed_authentication_delay_ms, 0) / 1000)
    if listener.protocol.tls:
        from ..security.principal_mapper import SslPrincipalMapper
        from ..security.tls import server_context

        security.ssl_context = server_context(tls_settings(cfg, name))
        security.mapper = SslPrincipalMapper(str(_get(cfg, name, "ssl.principal.mapping.rules") or "DEFAULT"))
    if listener.protocol.sasl:
        from ..security.authenticator import SaslListenerConfig
        from ..security.jaas import plain_users
        from ..security.sasl_mechanisms import PLAIN, SUPPORTED_MECHANISMS

        mechanisms = tuple(m.strip().upper() for m in str(_get(cfg, name, "sasl.enabled.mechanisms")).split(",") if m.strip())
        unsupported = [m for m in mechanisms if m not in SUPPORTED_MECHANISMS]
        if unsupported or not mechanisms:
            raise ValueError(f"listener {name}: sasl.enabled.mechanisms {','.join(mechanisms) or '(empty)'}: "
                             f"supported are {', '.join(SUPPORTED_MECHANISMS)}")
        jaas = _get(cfg, name, "sasl.jaas.config", PLAIN)
        users = plain_users(str(jaas)) if jaas else {}
        observer_method = getattr(observer, "authentication", None)
        security.sasl = SaslListenerConfig(
            listener=name,
            mechanisms=mechanisms,
            scram_lookup=credentials.lookup,
            plain_check=plain_check(users, credentials),
            reauth_ms=int(_get(cfg, name, "connections.max.reauth.ms") or 0),
            reauth_ms_by_mechanism={m: int(_get(cfg, name, "connections.max.reauth.ms", m) or 0) for m in mechanisms},
            max_receive_size=int(_get(cfg, name, "sasl.server.max.receive.size")),
            observer=observer if observer_method is not None else None,
        )
    return security
