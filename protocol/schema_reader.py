"""A bounds-checked reader for the records of Kafka's internal topics (``__transaction_state``,
``__share_group_state``), whose bytes come from disk or from another broker: every length is checked against
the bytes that are there before it is used, and a mismatch raises the record module's own error."""

from __future__ import annotations

import struct

from groupcoord.protocol.varint import decode_unsigned_varint

_I16, _I32 = struct.Struct(">h"), struct.Struct(">i")


class SchemaReader:
    """Reads one record's key or value; ``error`` is the ``ValueError`` subclass its decoder raises."""

    __slots__ = ("buf", "pos", "error")

    def __init__(self, buf: bytes, error: type[ValueError]) -> None:
        self.buf = memoryview(buf)
        self.pos = 0
        self.error = error

    def take(self, s: struct.Struct) -> int:
        if self.pos + s.size > len(self.buf):
            raise self.error(f"record ends at {len(self.buf)}, {s.size} more bytes needed at {self.pos}")
        (value,) = s.unpack_from(self.buf, self.pos)
        self.pos += s.size
        return value

    def uvarint(self) -> int:
        value, self.pos = decode_unsigned_varint(self.buf, self.pos)
        return value

    def raw(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.buf):
            raise self.error(f"length {n} at {self.pos} runs past the record ({len(self.buf)} bytes)")
        out = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return out

    def string(self, flexible: bool) -> str:
        n = self.uvarint() - 1 if flexible else self.take(_I16)
        if n < 0:
            raise self.error(f"null string at {self.pos} where the schema has none")
        return self.raw(n).decode("utf-8")

    def array_length(self, flexible: bool, nullable: bool = False) -> int:
        """An array's length (-1 for a null one where the schema allows it), refused when its entries cannot
        fit in what is left of the record."""
        n = self.uvarint() - 1 if flexible else self.take(_I32)
        if n < 0:
            if n == -1 and nullable:
                return -1
            raise self.error(f"null array at {self.pos} where the schema has none")
        if n > len(self.buf) - self.pos:
            raise self.error(f"array of {n} at {self.pos} cannot fit in the record")
        return n

    def tagged_fields(self) -> dict[int, bytes]:
        tags = {}
        for _ in range(self.uvarint()):
            tag = self.uvarint()
            tags[tag] = self.raw(self.uvarint())
        return tags
