"""Size-prefixed framing: every Kafka request and response is an int32 length followed by that many bytes.

The decoder is fed whatever the socket delivered and hands back whole frames, so the server never
parses a partial request. The size limit is checked as soon as the 4-byte prefix is seen — before any
buffering — so an absurd length costs nothing (Kafka's `socket.request.max.bytes`, default 100 MiB).
"""

from __future__ import annotations

import struct
from typing import Any

from .errors import ProtocolError
from .file_region import FileRegion

DEFAULT_MAX_FRAME_SIZE = 100 * 1024 * 1024
_SIZE = struct.Struct(">i")


class FrameTooLarge(ProtocolError):
    pass


class FrameDecoder:
    """Incremental frame splitter. ``spans`` hands back the frames completed by the new bytes where they
    lie, without copying each one out (the server's frame loop reads pipelined requests in place);
    ``feed`` hands them back as separate ``bytes``."""

    __slots__ = ("max_frame_size", "partial", "_need")

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self.max_frame_size = max_frame_size
        self.partial = bytearray()
        """The start of an incomplete frame, size prefix included: empty (false) when the reads so far ended where
        a frame did. Read as it is by the server's frame loop after each read (``buffered`` is its length)."""
        self._need = 0  # bytes `partial` must hold before a frame can complete (4 while the prefix is partial)

    @property
    def buffered(self) -> int:
        return len(self.partial)

    def spans(self, data: bytes) -> tuple[bytes, list[int]]:
        """(buffer, bounds): the frames completed by ``data`` are ``buffer[bounds[i]:bounds[i + 1]]`` for
        even ``i`` (size prefixes excluded). ``buffer`` is ``data`` itself unless part of a frame was waiting
        from earlier reads; a frame still incomplete is kept for the next call, and while its size is
        known, further pieces of it are only appended (a large frame is not re-scanned per read)."""
        buf = self.partial
        if buf:
            buf += data
            need = self._need
            if len(buf) < need:
                return data, []
            if need > 4 and not self._holds_whole_frame(buf, need):
                # The waiting frame is complete and what follows it completes nothing: hand the frame over
                # as its own buffer (one copy of its payload, not a copy of everything then a slice of it),
                # and keep the rest waiting.
                frame = bytes(memoryview(buf)[4:need])
                del buf[:need]
                self._need = 4
                if len(buf) >= 4:
                    size = _SIZE.unpack_from(buf, 0)[0]
                    if size < 0 or size > self.max_frame_size:
                        raise FrameTooLarge(f"frame size {size} outside 0..{self.max_frame_size}")
                    self._need = 4 + size
                return frame, [0, len(frame)]
            data = bytes(buf)
            buf.clear()
        elif len(data) >= 4:
            # The commonest read: exactly one whole frame (a client with one request in flight), told by its
            # size prefix alone, without the loop below.
            size = _SIZE.unpack_from(data, 0)[0]
            if size == len(data) - 4 and size <= self.max_frame_size:
                return data, [4, len(data)]
        bounds: list[int] = []
        pos = 0
        end = len(data)
        limit = self.max_frame_size
        unpack = _SIZE.unpack_from
        while end - pos >= 4:
            size = unpack(data, pos)[0]
            if size < 0 or size > limit:
                raise FrameTooLarge(f"frame size {size} outside 0..{limit}")
            stop = pos + 4 + size
            if stop > end:
                self._need = 4 + size
                buf += memoryview(data)[pos:]
                return data, bounds
            bounds.append(pos + 4)
            bounds.append(stop)
            pos = stop
        if pos < end:
            self._need = 4
            buf += memoryview(data)[pos:]
        return data, bounds

    @staticmethod
    def _holds_whole_frame(buf: bytearray, start: int) -> bool:
        """Whether ``buf`` holds a whole frame (or an empty one) at ``start``, the end of the one completing."""
        if len(buf) - start < 4:
            return False
        return len(buf) - start - 4 >= _SIZE.unpack_from(buf, start)[0]

    def feed(self, data: bytes) -> list[bytes]:
        buffer, bounds = self.spans(data)
        return [buffer[bounds[i]:bounds[i + 1]] for i in range(0, len(bounds), 2)]


class FrameParts:
    """A response frame in pieces (small encoded parts and the large records views or file regions between
    them), written to the socket with one writelines (regions with sendfile: coordinator/server/file_sender.py),
    never joined. ``len()`` is the frame's size in bytes; ``bytes()`` joins it, reading its regions (for
    whoever needs it whole)."""

    __slots__ = ("parts", "nbytes")

    def __init__(self, parts: list[Any]) -> None:
        self.parts = parts
        self.nbytes = sum(len(p) for p in parts)

    def __len__(self) -> int:
        return self.nbytes

    def __bytes__(self) -> bytes:
        return b"".join([bytes(p) if type(p) is FileRegion else p for p in self.parts])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrameParts):
            return bytes(self) == bytes(other)
        if isinstance(other, (bytes, bytearray, memoryview)):
            return bytes(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def encode_frame(payload: bytes) -> bytes:
    return _SIZE.pack(len(payload)) + payload


def opened(parts: Any) -> list[Any]:
    """``parts`` in order, each FrameParts among them replaced by its own pieces: what a frame in pieces is
    built from and what the connection hands to the socket's writelines."""
    pieces: list[Any] = []
    for p in parts:
        if type(p) is FrameParts:
            pieces.extend(p.parts)
        else:
            pieces.append(p)
    return pieces


def frame_parts(*parts: Any) -> Any:
    """One frame holding the parts back to back (a response header and its body). A part that is itself in
    pieces (encode.FrameParts: a fetch's records spliced in uncopied) keeps the frame in pieces."""
    if not any(type(p) is FrameParts for p in parts):
        return b"".join((_SIZE.pack(sum(len(p) for p in parts)), *parts))
    pieces = opened(parts)
    head: list[Any] = [_SIZE.pack(sum(len(p) for p in pieces))]
    while pieces and type(pieces[0]) is not memoryview and type(pieces[0]) is not FileRegion:
        head.append(pieces.pop(0))  # the size, the header and the body up to the first records: one piece
    return FrameParts([b"".join(head), *pieces])
