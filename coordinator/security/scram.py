"""SCRAM (RFC 5802, RFC 7677) as Kafka speaks it: mechanisms, credentials, the four messages, the maths.

One place for everything both halves share — the server (``scram_server.py``), the client
(``sasl_client.py``) and the credential store (``credentials.py``) — so the two sides cannot drift:

- ``ScramMechanism``: SCRAM-SHA-256 and SCRAM-SHA-512 with Kafka's wire type numbers (1 and 2, the
  ``mechanism`` field of Describe/AlterUserScramCredentials) and iteration bounds (at least 4096, as Kafka's
  ScramMechanism; at most 16384, as Kafka's ScramControlManager accepts).
- ``ScramCredential``: what a server keeps (salt, StoredKey, ServerKey, iterations), never the password.
- The messages parsed with Kafka's own grammar (ScramMessages: gs2 header ``n`` only — no channel binding —
  an optional ``a=`` authzid, the ``m=`` reserved extension tolerated, extensions ``,key=value`` kept).

Hi() is PBKDF2-HMAC with a 1-block output, which is exactly what ``hashlib.pbkdf2_hmac`` computes (in C).
"""

from __future__ import annotations

import base64
import binascii
import enum
import functools
import hashlib
import hmac
import re
import secrets
from dataclasses import field

from groupcoord.protocol.frozen import frozen_dataclass

MAX_ITERATIONS = 16384
"""Kafka's ScramControlManager refuses more (UNACCEPTABLE_CREDENTIAL "Too many iterations")."""
DEFAULT_ITERATIONS = 4096


class ScramError(ValueError):
    """A malformed or inconsistent SCRAM message (the exchange fails; nothing secret in the text)."""


class ScramMechanism(enum.Enum):
    SCRAM_SHA_256 = ("SCRAM-SHA-256", "sha256", 1, 4096)
    SCRAM_SHA_512 = ("SCRAM-SHA-512", "sha512", 2, 4096)

    def __init__(self, mechanism_name: str, hash_name: str, wire_type: int, min_iterations: int) -> None:
        self.mechanism_name = mechanism_name
        self.hash_name = hash_name
        self.wire_type = wire_type
        self.min_iterations = min_iterations

    @classmethod
    def by_name(cls, name: str) -> "ScramMechanism | None":
        for m in cls:
            if m.mechanism_name == name:
                return m
        return None

    @classmethod
    def by_type(cls, wire_type: int) -> "ScramMechanism | None":
        for m in cls:
            if m.wire_type == wire_type:
                return m
        return None

    # -- the maths (RFC 5802 section 3) -----------------------------------------------------------
    def hmac(self, key: bytes, data: bytes) -> bytes:
        return hmac.new(key, data, self.hash_name).digest()

    def hash(self, data: bytes) -> bytes:
        return hashlib.new(self.hash_name, data).digest()

    def salted_password(self, password: str, salt: bytes, iterations: int) -> bytes:
        """Hi(Normalize(password), salt, i). Kafka's normalisation is plain UTF-8 (no SASLprep), and so is ours,
        so a password with characters SASLprep would map gives the same credential on both brokers."""
        return hashlib.pbkdf2_hmac(self.hash_name, password.encode("utf-8"), salt, iterations)

    def client_key(self, salted_password: bytes) -> bytes:
        return self.hmac(salted_password, b"Client Key")

    def server_key(self, salted_password: bytes) -> bytes:
        return self.hmac(salted_password, b"Server Key")

    def credential(self, salt: bytes, salted_password: bytes, iterations: int) -> "ScramCredential":
        return ScramCredential(salt, self.hash(self.client_key(salted_password)), self.server_key(salted_password), iterations)

    def new_credential(self, password: str, iterations: int = DEFAULT_ITERATIONS, salt: bytes | None = None) -> "ScramCredential":
        salt = secure_random_string().encode() if salt is None else salt
        return self.credential(salt, self.salted_password(password, salt, iterations), iterations)


@frozen_dataclass(slots=False)
class ScramCredential:
    salt: bytes
    stored_key: bytes = field(repr=False)
    server_key: bytes = field(repr=False)
    iterations: int


def xor(a: bytes, b: bytes) -> bytes:
    if len(a) != len(b):
        raise ScramError("proof of the wrong length")
    return bytes(x ^ y for x, y in zip(a, b))


def secure_random_string() -> str:
    """Kafka's ScramFormatter.secureRandomString: a 130-bit random number in base 36 (printable, no ',')."""
    n = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = []
    while n:
        n, r = divmod(n, 36)
        out.append(digits[r])
    return "".join(reversed(out)) or "0"


def sasl_name(username: str) -> str:
    """RFC 5802 saslname: '=' as '=3D' and ',' as '=2C'."""
    return username.replace("=", "=3D").replace(",", "=2C")


def username(saslname: str) -> str:
    name = saslname.replace("=2C", ",")
    if "=" in name.replace("=3D", ""):
        raise ScramError("invalid username")
    return name.replace("=3D", "=")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError) as exc:
        raise ScramError("invalid base64") from exc


# -- messages, with Kafka's grammar (ScramMessages) ------------------------------------------------
_VALUE = r"[\x01-\x2b\x2d-\x7f]+"            # [\x01-\x7F] except ','
_VALUE_SAFE = r"[\x01-\x2b\x2d-\x3c\x3e-\x7f]+"  # ... and except '='
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"        # [\x21-\x7E] except ','
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_B64C = r"[a-zA-Z0-9/+]"
_BASE64 = rf"(?:{_B64C}{{4}})*(?:{_B64C}{{3}}=|{_B64C}{{2}}==)?"
_RESERVED = rf"(?:m={_VALUE},)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"

# The four messages' patterns, compiled on first use (``_fullmatch``, kept once compiled): compiling them
# took ~2.5 ms of every daemon's start-up, which authenticates no one before its first SASL request.
_CLIENT_FIRST = (
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,{_RESERVED}n=(?P<saslname>{_SASLNAME}),r=(?P<nonce>{_PRINTABLE})(?P<extensions>{_EXTENSIONS})")
_SERVER_FIRST = (
    rf"{_RESERVED}r=(?P<nonce>{_PRINTABLE}),s=(?P<salt>{_BASE64}),i=(?P<iterations>[0-9]+){_EXTENSIONS}")
_CLIENT_FINAL = (
    rf"c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS},p=(?P<proof>{_BASE64})")
_SERVER_FINAL = rf"(?:e=(?P<error>{_VALUE_SAFE}))|(?:v=(?P<signature>{_BASE64}){_EXTENSIONS})"


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.DOTALL)


def _fullmatch(pattern: str, text: str) -> re.Match[str] | None:
    return _compiled(pattern).fullmatch(text)


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScramError("not UTF-8") from exc


def parse_extensions(text: str) -> dict[str, str]:
    """``key=value,key=value`` (ScramExtensions): Kafka knows only ``tokenauth``; others are kept and ignored."""
    out: dict[str, str] = {}
    for item in text.split(",") if text else ():
        key, sep, value = item.partition("=")
        if sep:
            out[key] = value
    return out


@frozen_dataclass(slots=False)
class ClientFirst:
    saslname: str
    nonce: str
    authzid: str = ""
    extensions: dict[str, str] = field(default_factory=dict)

    @property
    def gs2_header(self) -> str:
        return f"n,{self.authzid},"  # Kafka writes the authzid it read back unescaped; it is the saslname form

    @property
    def bare(self) -> str:
        ext = ",".join(f"{k}={v}" for k, v in self.extensions.items())
        return f"n={self.saslname},r={self.nonce}" + (f",{ext}" if ext else "")

    def to_bytes(self) -> bytes:
        return (self.gs2_header + self.bare).encode()

    @classmethod
    def parse(cls, data: bytes) -> "ClientFirst":
        m = _fullmatch(_CLIENT_FIRST, _text(data))
        if m is None:
            raise ScramError("Invalid SCRAM client first message format")
        ext = m.group("extensions")
        return cls(m.group("saslname"), m.group("nonce"), m.group("authzid") or "", parse_extensions(ext[1:] if ext else ""))


@frozen_dataclass(slots=False)
class ServerFirst:
    nonce: str  # client nonce + server nonce
    salt: bytes
    iterations: int

    def to_text(self) -> str:
        return f"r={self.nonce},s={b64(self.salt)},i={self.iterations}"

    def to_bytes(self) -> bytes:
        return self.to_text().encode()

    @classmethod
    def parse(cls, data: bytes) -> "ServerFirst":
        m = _fullmatch(_SERVER_FIRST, _text(data))
        if m is None:
            raise ScramError("Invalid SCRAM server first message format")
        iterations = int(m.group("iterations")[:10])
        if iterations <= 0 or len(m.group("iterations")) > 10:
            raise ScramError("Invalid SCRAM server first message format: invalid iterations")
        return cls(m.group("nonce"), unb64(m.group("salt")), iterations)


@frozen_dataclass(slots=False)
class ClientFinal:
    channel_binding: bytes
    nonce: str
    proof: bytes = b""

    @property
    def without_proof(self) -> str:
        return f"c={b64(self.channel_binding)},r={self.nonce}"

    def to_bytes(self) -> bytes:
        return f"{self.without_proof},p={b64(self.proof)}".encode()

    @classmethod
    def parse(cls, data: bytes) -> "ClientFinal":
        m = _fullmatch(_CLIENT_FINAL, _text(data))
        if m is None:
            raise ScramError("Invalid SCRAM client final message format")
        return cls(unb64(m.group("channel")), m.group("nonce"), unb64(m.group("proof")))


@frozen_dataclass(slots=False)
class ServerFinal:
    error: str | None = None
    signature: bytes | None = None

    def to_bytes(self) -> bytes:
        return (f"e={self.error}" if self.error is not None else f"v={b64(self.signature or b'')}").encode()

    @classmethod
    def parse(cls, data: bytes) -> "ServerFinal":
        m = _fullmatch(_SERVER_FINAL, _text(data))
        if m is None:
            raise ScramError("Invalid SCRAM server final message format")
        if m.group("error") is not None:
            return cls(error=m.group("error"))
        return cls(signature=unb64(m.group("signature")))


def auth_message(first: ClientFirst, server_first: ServerFirst, final: ClientFinal) -> bytes:
    return f"{first.bare},{server_first.to_text()},{final.without_proof}".encode()
