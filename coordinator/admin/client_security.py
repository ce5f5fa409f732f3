"""How the admin client secures its connections: Kafka's client properties, from ``--command-config FILE``.

The file is what Kafka's tools take (``kafka-consumer-groups.sh --command-config client.properties``):

    security.protocol=SASL_SSL
    sasl.mechanism=SCRAM-SHA-512
    sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
        username="alice" password="alice-secret";
    ssl.truststore.type=PEM
    ssl.truststore.location=/etc/kafka/ca.pem

``sasl.username``/``sasl.password`` (librdkafka's names) are accepted instead of the JAAS line; for mutual TLS,
``ssl.keystore.location`` (PEM key and chain, ``ssl.keystore.type=PEM``) or librdkafka's
``ssl.certificate.location``/``ssl.key.location``; ``ssl.endpoint.identification.algorithm=`` (empty) turns
the host name check off, as in Kafka's clients. Unknown properties are ignored, as Kafka's tools warn and
ignore them, so one file serves both.
"""

from __future__ import annotations

import ssl
from dataclasses import field
from pathlib import Path

from groupcoord.coordinator.properties_file import read_properties
from groupcoord.coordinator.security.jaas import client_login
from groupcoord.coordinator.security.tls import client_context
from groupcoord.protocol.frozen import frozen_dataclass

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
__all__ = ["ClientConfigError", "ClientSecurity", "read_properties"]


class ClientConfigError(ValueError):
    pass


@frozen_dataclass(slots=False)
class ClientSecurity:
    protocol: str = "PLAINTEXT"
    mechanism: str = "GSSAPI"
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ssl_context: ssl.SSLContext | None = field(default=None, repr=False)

    @property
    def sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    @classmethod
    def from_file(cls, path: Path | str) -> "ClientSecurity":
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise ClientConfigError(f"cannot read --command-config {path}: {exc.strerror or exc}") from None
        return cls.from_properties(read_properties(text))

    @classmethod
    def from_properties(cls, props: dict[str, str]) -> "ClientSecurity":
        protocol = props.get("security.protocol", "PLAINTEXT").strip().upper()
        if protocol not in PROTOCOLS:
            raise ClientConfigError(f"security.protocol={protocol}: expected one of {', '.join(PROTOCOLS)}")
        mechanism = props.get("sasl.mechanism", props.get("sasl.mechanisms", "GSSAPI")).strip().upper()
        username = password = None
        if protocol.startswith("SASL"):
            if mechanism not in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
                raise ClientConfigError(f"sasl.mechanism={mechanism}: the admin client speaks PLAIN, SCRAM-SHA-256 "
                                        "and SCRAM-SHA-512")
            if props.get("sasl.jaas.config"):
                try:
                    username, password = client_login(props["sasl.jaas.config"])
                except ValueError as exc:
                    raise ClientConfigError(str(exc)) from None
            else:
                username, password = props.get("sasl.username"), props.get("sasl.password")
            if not username or password is None:
                raise ClientConfigError(f"{protocol} needs sasl.jaas.config (username and password) or "
                                        "sasl.username and sasl.password")
        context = None
        if protocol in ("SSL", "SASL_SSL"):
            for kind in ("ssl.truststore.type", "ssl.keystore.type"):
                if props.get(kind, "PEM").upper() != "PEM":
                    raise ClientConfigError(f"{kind}={props[kind]}: the admin client reads PEM files only")
            cafile = props.get("ssl.truststore.location") or props.get("ssl.ca.location") or None
            cadata = props.get("ssl.truststore.certificates") or None
            certfile = props.get("ssl.keystore.location") or props.get("ssl.certificate.location") or None
            keyfile = props.get("ssl.key.location") or None
            key_password = props.get("ssl.key.password") or props.get("ssl.keystore.password") or None
            check = props.get("ssl.endpoint.identification.algorithm", "https").strip().lower() == "https"
            try:
                context = client_context(cafile, cadata, certfile, keyfile, key_password, check_hostname=check)
            except (OSError, ssl.SSLError) as exc:
                raise ClientConfigError(f"cannot set up TLS from --command-config: {exc}") from None
        return cls(protocol, mechanism, username, password, context)
