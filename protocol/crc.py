"""CRC-32C (Castagnoli), the checksum of record batch v2.

``zlib.crc32`` is the IEEE polynomial and gives different answers, so every batch
checksum in the project goes through here.
"""

from __future__ import annotations

from crc32c import crc32c as _crc32c


def crc32c(data: bytes | bytearray | memoryview, value: int = 0) -> int:
    return _crc32c(data, value)
