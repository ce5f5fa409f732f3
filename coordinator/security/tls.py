"""TLS for SSL and SASL_SSL listeners through Python's ``ssl``, configured with Kafka's PEM setting names.

``server_context`` builds the listener's ``SSLContext``: the key and certificate chain from
``ssl.keystore.location`` (one PEM file holding both) or inline ``ssl.keystore.key`` +
``ssl.keystore.certificate.chain``, an encrypted key opened with ``ssl.key.password``; client certificates
checked against ``ssl.truststore.location``/``ssl.truststore.certificates`` as ``ssl.client.auth`` says
(none / requested / required); TLS 1.2 and 1.3 only, whatever ``ssl.enabled.protocols`` asks.

``subject_dn`` renders a verified peer certificate's subject as RFC 2253 text, as Java's
``X500Principal.getName()`` does (most specific RDN first: ``CN=alice,OU=eng,O=Acme,C=GB``), which is what
``ssl.principal.mapping.rules`` are written against.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from typing import Any

from groupcoord.protocol.frozen import frozen_dataclass

CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
_PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}

# RFC 2253 / RFC 4514 attribute type keywords, as Java prints them; others as their OID.
_KEYWORDS = {
    "commonName": "CN", "countryName": "C", "localityName": "L", "stateOrProvinceName": "ST",
    "organizationName": "O", "organizationalUnitName": "OU", "streetAddress": "STREET",
    "domainComponent": "DC", "userId": "UID",
}
_OIDS = {"emailAddress": "1.2.840.113549.1.9.1", "serialNumber": "2.5.4.5", "surname": "2.5.4.4",
         "givenName": "2.5.4.42", "title": "2.5.4.12", "pseudonym": "2.5.4.65", "dnQualifier": "2.5.4.46",
         "generationQualifier": "2.5.4.44", "initials": "2.5.4.43", "name": "2.5.4.41",
         "businessCategory": "2.5.4.15", "postalCode": "2.5.4.17"}


class TlsConfigError(ValueError):
    pass


@frozen_dataclass(slots=False)
class TlsSettings:
    """One listener's TLS settings (Kafka's names, resolved per listener by the server)."""

    keystore_location: str | None = None
    keystore_key: str | None = None
    keystore_certificate_chain: str | None = None
    key_password: str | None = None
    truststore_location: str | None = None
    truststore_certificates: str | None = None
    client_auth: str = "none"
    enabled_protocols: str = "TLSv1.2,TLSv1.3"
    cipher_suites: str | None = None
    keystore_type: str = "PEM"
    truststore_type: str = "PEM"


def _inline_pem_file(pem: str) -> str:
    """``load_cert_chain`` only reads files: inline PEM goes through a private temporary file, removed at once."""
    fd, path = tempfile.mkstemp(prefix="groupcoord-pem-", suffix=".pem")
    try:
        os.write(fd, pem.encode())
    finally:
        os.close(fd)
    return path


def server_context(s: TlsSettings) -> ssl.SSLContext:
    for kind, value in (("ssl.keystore.type", s.keystore_type), ("ssl.truststore.type", s.truststore_type)):
        if str(value).upper() != "PEM":
            raise TlsConfigError(f"{kind}={value}: only PEM is supported (convert a JKS/PKCS12 store with openssl)")
    auth = str(s.client_auth).strip().lower()
    if auth not in CLIENT_AUTH:
        raise TlsConfigError(f"ssl.client.auth={s.client_auth}: expected none, requested or required")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    versions = [v.strip() for v in str(s.enabled_protocols).split(",") if v.strip()]
    unknown = [v for v in versions if v not in _PROTOCOLS]
    if unknown or not versions:
        raise TlsConfigError(f"ssl.enabled.protocols={s.enabled_protocols}: only TLSv1.2 and TLSv1.3 are accepted")
    ctx.minimum_version = min(_PROTOCOLS[v] for v in versions)
    ctx.maximum_version = max(_PROTOCOLS[v] for v in versions)
    if s.cipher_suites:
        ctx.set_ciphers(s.cipher_suites)
    password = s.key_password or None
    if s.keystore_location:
        _load_chain(ctx, s.keystore_location, None, password)
    elif s.keystore_key and s.keystore_certificate_chain:
        chain = _inline_pem_file(s.keystore_certificate_chain)
        key = _inline_pem_file(s.keystore_key)
        try:
            _load_chain(ctx, chain, key, password)
        finally:
            os.unlink(chain)
            os.unlink(key)
    else:
        raise TlsConfigError("a TLS listener needs ssl.keystore.location (PEM key and certificate chain), or "
                             "ssl.keystore.key and ssl.keystore.certificate.chain")
    ctx.verify_mode = CLIENT_AUTH[auth]
    if auth != "none":
        if s.truststore_location:
            ctx.load_verify_locations(cafile=s.truststore_location)
        elif s.truststore_certificates:
            ctx.load_verify_locations(cadata=s.truststore_certificates)
        else:
            raise TlsConfigError(f"ssl.client.auth={auth} needs ssl.truststore.location or ssl.truststore.certificates")
    return ctx


def _load_chain(ctx: ssl.SSLContext, certfile: str, keyfile: str | None, password: str | None) -> None:
    try:
        ctx.load_cert_chain(certfile, keyfile, password=password)
    except (ssl.SSLError, OSError) as exc:
        raise TlsConfigError(f"cannot load the TLS key and certificate chain: {exc}") from None


def client_context(cafile: str | None = None, cadata: str | None = None, certfile: str | None = None,
                   keyfile: str | None = None, password: str | None = None, check_hostname: bool = True) -> ssl.SSLContext:
    """What the admin client and tests connect with (``ssl.endpoint.identification.algorithm`` empty turns the
    host name check off, as in Kafka's clients)."""
    ctx = ssl.create_default_context(cafile=cafile, cadata=cadata)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.check_hostname = check_hostname
    if certfile:
        ctx.load_cert_chain(certfile, keyfile, password=password)
    return ctx


def _escape(value: str) -> str:
    out = []
    for i, ch in enumerate(value):
        if ch in ',+"\\<>;' or (ch == "#" and i == 0) or (ch == " " and (i == 0 or i == len(value) - 1)):
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def subject_dn(peercert: dict[str, Any] | None) -> str | None:
    """RFC 2253 subject of ``SSLSocket.getpeercert()``'s dict; None without a verified certificate."""
    if not peercert:
        return None
    rdns = peercert.get("subject") or ()
    parts = []
    for rdn in reversed(rdns):
        parts.append("+".join(f"{_KEYWORDS.get(k) or _OIDS.get(k, k)}={_escape(v)}" for k, v in rdn))
    return ",".join(parts)
