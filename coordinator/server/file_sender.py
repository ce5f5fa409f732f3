"""Answers holding file regions (a fetch's batches left in the segment files), sent with ``os.sendfile``.

A fetch answer of megabytes read into memory and written with ``writelines`` costs this process a copy in
and a copy out of every byte; ``sendfile`` hands the segment's pages to the socket in the kernel, as Kafka's
``FileRecords.writeTo`` does. uvloop's transports do not implement ``loop.sendfile``, so the connection
writes such an answer to the socket's descriptor itself, on the condition that nothing else is writing to
it: the transport's buffer is empty when the answer starts, and every answer given while it is being sent
queues behind it here, in order (``KafkaConnection._sender`` routes them), so the wire keeps the request
order. When the socket takes no more (EAGAIN) the sender waits for it to be writable on a ``dup`` of its
descriptor (uvloop refuses ``add_writer`` on a descriptor a transport owns) and pauses the connection's
reading meanwhile (``pause_writing``: the answers owed stay bounded as with a full transport buffer).

Where the bytes are transformed (TLS) or the transport still buffers an earlier write, the regions are read and
the answer written through the transport as before (``write_pieces``' fallback). Every region is closed once
sent or abandoned (a send error, the peer gone, the connection closed): see ``cancel``.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque
from itertools import islice
from typing import TYPE_CHECKING, Any

import structlog

from groupcoord.protocol.file_region import FileRegion

if TYPE_CHECKING:
    from .connection import KafkaConnection
    from .listeners import Listener

log = structlog.get_logger("groupcoord.connection")
_IOV_MAX = 1024
_SENDFILE_MAX = 0x7FFFF000  # Linux's cap on one sendfile (and write) call


def sends_regions(listener: "Listener") -> bool:
    """Whether a listener's connections send file regions as they are: not under TLS, whose records would
    have to be read to be encrypted (SASL PLAIN and SCRAM do not wrap the bytes after authentication)."""
    return not listener.protocol.tls


def write_pieces(conn: "KafkaConnection", pieces: list[Any]) -> "FileSender | None":
    """Write an answer's pieces (bytes, views, regions) to ``conn``'s socket. Returns the sender still sending
    them (what the connection answers next must go through it) or None when they have all left or been handed
    to the transport."""
    transport = conn.transport
    if not any(type(p) is FileRegion for p in pieces):
        transport.writelines(pieces)
        return None
    security = conn.security
    if (security is None or security.ssl_context is None) and not transport.get_write_buffer_size():
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sender = FileSender(conn, sock.fileno())
            sender.send(pieces)
            return sender if sender.waiting else None
    transport.writelines(read_regions(pieces))
    return None


def read_regions(pieces: list[Any]) -> list[Any]:
    """The pieces with each region replaced by its bytes (and closed): for a transport that writes bytes."""
    out = []
    for piece in pieces:
        if type(piece) is FileRegion:
            try:
                out.append(bytes(piece))
            finally:
                piece.close()
        else:
            out.append(piece)
    return out


def close_regions(pieces: Any) -> None:
    for piece in pieces:
        if type(piece) is FileRegion:
            piece.close()


class FileSender:
    """One connection's answers from the one holding a region until all have left, written to its socket
    in order: bytes with ``writev``, regions with ``sendfile``, resumed on writability after EAGAIN."""

    __slots__ = ("_conn", "_fd", "_queue", "_done", "_watch_fd", "_close_when_sent")

    def __init__(self, conn: "KafkaConnection", fd: int) -> None:
        self._conn = conn
        self._fd = fd  # the transport's: written to, never closed here
        self._queue: deque[Any] = deque()
        self._done = 0  # bytes of the first queued piece already sent
        self._watch_fd = -1  # a dup of the socket's descriptor while waiting for writability
        self._close_when_sent = False

    @property
    def waiting(self) -> bool:
        """Waiting for the socket to take more (neither done nor failed)."""
        return self._watch_fd >= 0

    @property
    def queued(self) -> int:
        """Bytes still to send."""
        return sum(len(p) for p in self._queue) - self._done

    def send(self, pieces: list[Any]) -> None:
        """Queue ``pieces`` behind what is queued and send what the socket takes now (``waiting`` tells
        whether some is left for when it is writable again)."""
        self._queue.extend(pieces)
        if self._watch_fd < 0:  # (else the writability callback goes on from where the socket stopped)
            self._pump()

    def close_when_sent(self) -> None:
        """The connection closes (gracefully, as ``transport.close()``) once everything queued has left."""
        self._close_when_sent = True

    def _pump(self) -> None:
        queue = self._queue
        fd = self._fd
        try:
            while queue:
                piece = queue[0]
                if type(piece) is FileRegion:
                    left = piece.length - self._done
                    sent = os.sendfile(fd, piece.fd, piece.position + self._done, min(left, _SENDFILE_MAX)) \
                        if left > 0 else 0
                    if sent < left:
                        if sent == 0:
                            raise OSError(f"the segment file ended {left} bytes short of its region")
                        self._done += sent
                        continue
                    queue.popleft().close()
                    self._done = 0
                    continue
                buffers = [memoryview(piece)[self._done:]] if self._done else [piece]
                for more in islice(queue, 1, _IOV_MAX):
                    if type(more) is FileRegion:
                        break
                    buffers.append(more)
                sent = os.writev(fd, buffers)
                for buffer in buffers:  # drop what went out; a partly written piece keeps its rest
                    size = len(buffer)
                    if sent < size:
                        self._done += sent
                        break
                    sent -= size
                    queue.popleft()
                    self._done = 0
        except BlockingIOError:
            self._wait()
            return
        except OSError as exc:  # the peer reset or went away, or the segment file failed
            self._fail(exc)
            return
        self._finish()

    def _wait(self) -> None:
        if self._watch_fd < 0:
            conn = self._conn
            loop = conn._loop
            if loop is None:
                loop = conn._loop = asyncio.get_running_loop()
            self._watch_fd = os.dup(self._fd)
            loop.add_writer(self._watch_fd, self._on_writable)
            conn.pause_writing()  # reading pauses while the socket is full, as with a full transport buffer

    def _on_writable(self) -> None:
        if self._watch_fd < 0:
            return  # cancelled after the loop saw the socket writable
        conn = self._conn
        conn.server.deadlines.active(conn, time.monotonic())
        self._pump()

    def _stop_watching(self) -> bool:
        watch, self._watch_fd = self._watch_fd, -1
        if watch < 0:
            return False
        loop = self._conn._loop
        if loop is not None and not loop.is_closed():
            loop.remove_writer(watch)
        os.close(watch)
        return True

    def _finish(self) -> None:
        conn = self._conn
        if conn._sender is self:
            conn._sender = None
        waited = self._stop_watching()
        if self._close_when_sent:
            if conn.transport is not None:
                conn.transport.close()
        elif waited and not conn._closed:
            conn.resume_writing()

    def _fail(self, exc: OSError) -> None:
        self.cancel()
        conn = self._conn
        if isinstance(exc, ConnectionError):  # the peer reset or closed: ordinary, as when a transport's write fails
            log.debug("peer gone mid-send", peer=conn.peer, connection=conn.id, error=str(exc))
            conn._closed = True
            if conn.transport is not None:
                conn.transport.abort()
        else:
            conn._abort("send failed", error=str(exc))

    def cancel(self) -> None:
        """Stop sending (the connection is gone or failed): close the regions queued and the watched descriptor."""
        conn = self._conn
        if conn._sender is self:
            conn._sender = None
        self._stop_watching()
        queue, self._queue = self._queue, deque()
        close_regions(queue)
        self._done = 0
