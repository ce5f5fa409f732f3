"""Who sent a request, named as Kafka names it (``KafkaPrincipal``: ``User:alice``).

Every request carries one in its ``RequestContext``: ``User:ANONYMOUS`` on a PLAINTEXT listener (and on an
SSL listener without a client certificate), ``User:<name>`` after SASL, the mapped certificate subject after
mutual TLS. The authorizer matches ACLs against it, so it is a plain value that compares by its two parts.
"""

from __future__ import annotations

from groupcoord.protocol.frozen import frozen_dataclass


@frozen_dataclass
class KafkaPrincipal:
    """Who a connection is, as Kafka's KafkaPrincipal (``User:alice``): what ACLs and quotas match."""
    principal_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"

    @classmethod
    def parse(cls, text: str) -> "KafkaPrincipal":
        """``User:alice`` → KafkaPrincipal("User", "alice"), as Kafka's SecurityUtils.parseKafkaPrincipal."""
        kind, sep, name = text.partition(":")
        if not sep or not kind:
            raise ValueError(f"expected a principal as Type:name, got {text!r}")
        return cls(kind, name)


ANONYMOUS = KafkaPrincipal("User", "ANONYMOUS")
