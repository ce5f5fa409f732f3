"""Named listeners as Kafka configures them: ``listeners``, ``advertised.listeners``,
``listener.security.protocol.map``, ``inter.broker.listener.name``.

``listeners = "PLAINTEXT://127.0.0.1:9092,SASL_SSL://0.0.0.0:9093"`` gives two sockets; each listener's
security protocol comes from the map (names not in it must be protocol names themselves), and each is told
to clients at its advertised address, so Metadata and FindCoordinator answer a client with the address of
the listener it came in on. Without ``listeners`` the broker has one PLAINTEXT listener on ``--listen``
(advertised as ``--advertised``), as before.
"""

from __future__ import annotations

import enum
import re
import socket
from dataclasses import replace
from typing import Any

from groupcoord.protocol.frozen import frozen_dataclass

_ENDPOINT = re.compile(r"^(?P<name>[A-Za-z0-9_-]+)://(?P<host>\[[^\]]*\]|[^:/]*):(?P<port>-?\d+)$")


class SecurityProtocol(enum.StrEnum):
    PLAINTEXT = "PLAINTEXT"
    SSL = "SSL"
    SASL_PLAINTEXT = "SASL_PLAINTEXT"
    SASL_SSL = "SASL_SSL"

    @property
    def tls(self) -> bool:
        return self in (SecurityProtocol.SSL, SecurityProtocol.SASL_SSL)

    @property
    def sasl(self) -> bool:
        return self in (SecurityProtocol.SASL_PLAINTEXT, SecurityProtocol.SASL_SSL)


@frozen_dataclass(slots=False)
class Listener:
    """One named listener: security protocol, bind address and the address advertised to clients."""
    name: str
    protocol: SecurityProtocol
    host: str                 # bind address ("" or 0.0.0.0: every interface)
    port: int                 # 0 until bound when a free port was asked for
    advertised_host: str
    advertised_port: int

    def bound(self, port: int) -> "Listener":
        """The listener once its socket is bound (a port-0 listener learns its port; so does its advertisement)."""
        return replace(self, port=port, advertised_port=port if self.advertised_port == 0 else self.advertised_port)


def parse_endpoints(text: str, setting: str) -> list[tuple[str, str, int]]:
    out = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        m = _ENDPOINT.match(item)
        if m is None:
            raise ValueError(f"{setting}: expected NAME://HOST:PORT, got {item!r}")
        port = int(m.group("port"))
        if not 0 <= port <= 65535:
            raise ValueError(f"{setting}: port out of range in {item!r}")
        out.append((m.group("name").upper(), m.group("host").strip("[]"), port))
    names = [n for n, _, _ in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"{setting}: each listener must have a different name, {', '.join(dupes)} repeated")
    return out


def parse_protocol_map(text: str) -> dict[str, SecurityProtocol]:
    out = {}
    for item in (t.strip() for t in str(text).split(",")):
        if not item:
            continue
        name, sep, protocol = item.partition(":")
        if not sep:
            raise ValueError(f"listener.security.protocol.map: expected NAME:PROTOCOL, got {item!r}")
        try:
            out[name.strip().upper()] = SecurityProtocol(protocol.strip().upper())
        except ValueError:
            raise ValueError(f"listener.security.protocol.map: unknown security protocol {protocol!r}") from None
    return out


def _default_advertised_host(host: str) -> str:
    """Kafka advertises the canonical host name for a wildcard bind; a client cannot connect to 0.0.0.0."""
    if host in ("", "0.0.0.0", "::"):
        return socket.getfqdn() or "localhost"
    return host


def configured_listeners(cfg: Any) -> list[Listener]:
    """The broker's listeners from its config (a ``BrokerConfig``)."""
    protocols = parse_protocol_map(cfg.listener_security_protocol_map)
    if not cfg.listeners:
        host, port = cfg.listen
        adv_host, adv_port = cfg.advertised or (host, port)
        return [Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT, host, port, _default_advertised_host(adv_host), adv_port)]
    endpoints = parse_endpoints(cfg.listeners, "listeners")
    advertised = {n: (h, p) for n, h, p in parse_endpoints(cfg.advertised_listeners or "", "advertised.listeners")}
    unknown = sorted(set(advertised) - {n for n, _, _ in endpoints})
    if unknown:
        raise ValueError(f"advertised.listeners names listeners that are not in listeners: {', '.join(unknown)}")
    ports = [p for _, _, p in endpoints if p != 0]
    if len(ports) != len(set(ports)):
        raise ValueError("listeners: each listener must use a different port")
    if cfg.inter_broker_listener_name and cfg.inter_broker_listener_name.upper() not in {n for n, _, _ in endpoints}:
        raise ValueError(f"inter.broker.listener.name={cfg.inter_broker_listener_name} is not in listeners")
    out = []
    for i, (name, host, port) in enumerate(endpoints):
        protocol = protocols.get(name)
        if protocol is None:
            try:
                protocol = SecurityProtocol(name)
            except ValueError:
                raise ValueError(f"listener {name} has no entry in listener.security.protocol.map") from None
        if name in advertised:
            adv_host, adv_port = advertised[name]
        elif i == 0 and cfg.advertised:
            adv_host, adv_port = cfg.advertised
        else:
            adv_host, adv_port = host, port
        out.append(Listener(name, protocol, host, port, _default_advertised_host(adv_host), adv_port))
    return out
