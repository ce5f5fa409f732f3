"""Test certificates made on the spot with ``cryptography``: a CA, a broker certificate for 127.0.0.1 and
localhost, and client certificates for mutual TLS, all written as PEM files (Kafka's ssl.keystore.type=PEM).

``make_pki(directory)`` returns the paths; the broker's PEM file holds its key and chain (what
``ssl.keystore.location`` takes), each client gets a key file, a certificate file and a combined file.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class Identity:
    key: Path
    cert: Path
    combined: Path  # key + certificate chain in one PEM


@dataclass(frozen=True)
class Pki:
    ca: Path
    broker: Identity
    clients: dict[str, Identity]


def _name(cn: str, ou: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COUNTRY_NAME, "GB"), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Groupcoord Tests")]
    if ou:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, ou))
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(attrs)


def _cert(subject, issuer, public_key, signer, ca=False, sans=None, client=False):
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
               .not_valid_after(now + datetime.timedelta(days=2))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    if not ca:
        usage = [x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH] if client else [x509.oid.ExtendedKeyUsageOID.SERVER_AUTH,
                                                                           x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]
        builder = builder.add_extension(x509.ExtendedKeyUsage(usage), critical=False)
    return builder.sign(signer, hashes.SHA256())


def _write(directory: Path, name: str, key, cert, ca_cert) -> Identity:
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    chain = cert.public_bytes(serialization.Encoding.PEM) + ca_cert.public_bytes(serialization.Encoding.PEM)
    paths = Identity(directory / f"{name}.key.pem", directory / f"{name}.cert.pem", directory / f"{name}.pem")
    paths.key.write_bytes(key_pem)
    paths.cert.write_bytes(chain)
    paths.combined.write_bytes(key_pem + chain)
    return paths


def make_pki(directory: Path, clients: dict[str, tuple[str, str | None]] | None = None) -> Pki:
    """``clients`` maps a file name to (CN, OU); by default one client ``alice`` (CN=alice,OU=eng)."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("Groupcoord Test CA")
    ca_cert = _cert(ca_name, ca_name, ca_key.public_key(), ca_key, ca=True)
    (directory / "ca.pem").write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    broker_key = ec.generate_private_key(ec.SECP256R1())
    sans = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    broker = _write(directory, "broker", broker_key,
                    _cert(_name("localhost"), ca_name, broker_key.public_key(), ca_key, sans=sans), ca_cert)
    out = {}
    for file_name, (cn, ou) in (clients or {"alice": ("alice", "eng")}).items():
        key = ec.generate_private_key(ec.SECP256R1())
        out[file_name] = _write(directory, file_name, key,
                                _cert(_name(cn, ou), ca_name, key.public_key(), ca_key, client=True), ca_cert)
    return Pki(directory / "ca.pem", broker, out)
