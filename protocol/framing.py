"""Size-prefixed framing: every Kafka request and response is an int32 length followed by that many bytes.

The decoder is fed whatever the socket delivered and hands back whole frames, so the server never
parses a partial request. The size limit is checked as soon as the 4-byte prefix is seen — before any
buffering — so an absurd length costs nothing (Kafka's `socket.request.max.bytes`, default 100 MiB).
"""

from __future__ import annotations

import struct

from .errors import ProtocolError

DEFAULT_MAX_FRAME_SIZE = 100 * 1024 * 1024
_SIZE = struct.Struct(">i")


class FrameTooLarge(ProtocolError):
    pass


class FrameDecoder:
    """Incremental frame splitter; `feed` returns the frames completed by the new bytes."""

    __slots__ = ("max_frame_size", "_buf", "_need")

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self.max_frame_size = max_frame_size
        self._buf = bytearray()
        self._need = -1  # size of the frame being assembled, -1 while the prefix is incomplete

    @property
    def buffered(self) -> int:
        return len(self._buf)

    def feed(self, data: bytes) -> list[bytes]:
        buf = self._buf
        buf += data
        frames: list[bytes] = []
        pos = 0
        end = len(buf)
        while True:
            if self._need < 0:
                if end - pos < 4:
                    break
                (size,) = _SIZE.unpack_from(buf, pos)
                if size < 0 or size > self.max_frame_size:
                    raise FrameTooLarge(f"frame size {size} outside 0..{self.max_frame_size}")
                self._need = size
                pos += 4
            if end - pos < self._need:
                break
            frames.append(bytes(buf[pos : pos + self._need]))
            pos += self._need
            self._need = -1
        if pos:
            del buf[:pos]
        return frames


def encode_frame(payload: bytes) -> bytes:
    return _SIZE.pack(len(payload)) + payload


def frame_parts(*parts: bytes) -> bytes:
    """One frame holding the parts back to back (a response header and its body)."""
    return b"".join((_SIZE.pack(sum(len(p) for p in parts)), *parts))
