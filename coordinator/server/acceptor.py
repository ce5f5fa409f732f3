"""Accept connections on the listening socket directly, so that running out of descriptors is seen.

``loop.create_server`` hides it: uvloop (libuv) answers EMFILE by accepting and at once closing every
pending connection, silently, and asyncio's own loop logs each failed accept (hundreds of thousands of
lines in a burst). Here an accept that fails for want of descriptors is reported to the server (which
logs it once per burst and counts it), accepting pauses briefly while the pending connections wait in
the kernel's backlog, and resumes by itself, so the broker serves again as soon as descriptors free up.
"""

from __future__ import annotations

import asyncio
import errno
import socket
from typing import Callable

import structlog

log = structlog.get_logger("groupcoord.server")

OUT_OF_DESCRIPTORS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
RETRY_AFTER_S = 0.1
ACCEPTS_PER_WAKEUP = 128  # then yield to the loop, so a connect flood cannot starve the connections


def listening_socket(host: str, port: int, backlog: int) -> socket.socket:
    family, kind, proto, _, address = socket.getaddrinfo(_ascii_host(host) or None, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(backlog)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def _ascii_host(host: str) -> str | bytes:
    """The bytes ``getaddrinfo`` would make of an ASCII host name, made here: given a ``str`` it encodes it with
    the ``idna`` codec, whose first use imports encodings.idna, stringprep and unicodedata (~0.5 % of the
    daemon's start-up). For an ASCII name the codec's result is the ASCII bytes, once each label is checked to be
    1-63 characters (the last may be empty); any other name is left to the codec (the same bytes or error)."""
    if host.isascii():
        labels = host.split(".")
        if all(0 < len(label) < 64 for label in labels[:-1]) and len(labels[-1]) < 64:
            return host.encode("ascii")
    return host


class Acceptor:
    def __init__(self, sock: socket.socket, on_socket: Callable[[socket.socket, str], None],
                 on_exhausted: Callable[[OSError], None], on_recovered: Callable[[], None]) -> None:
        self.sock = sock
        self._on_socket = on_socket
        self._on_exhausted = on_exhausted
        self._on_recovered = on_recovered
        self._loop: asyncio.AbstractEventLoop | None = None
        self._retry: asyncio.TimerHandle | None = None
        self._reading = False
        self.exhausted = False

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._resume()

    def close(self) -> None:
        self._pause()
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        self.sock.close()

    def _resume(self) -> None:
        self._retry = None
        if not self._reading and self._loop is not None and self.sock.fileno() >= 0:
            self._loop.add_reader(self.sock.fileno(), self._accept_ready)
            self._reading = True

    def _pause(self) -> None:
        if self._reading and self._loop is not None:
            self._loop.remove_reader(self.sock.fileno())
            self._reading = False

    def _accept_ready(self) -> None:
        for _ in range(ACCEPTS_PER_WAKEUP):
            try:
                conn, address = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError as exc:
                if exc.errno in OUT_OF_DESCRIPTORS:
                    self.exhausted = True
                    self._on_exhausted(exc)
                    self._pause()
                    assert self._loop is not None
                    self._retry = self._loop.call_later(RETRY_AFTER_S, self._resume)
                else:
                    log.warning("accept failed", error=str(exc))
                return
            if self.exhausted:
                self.exhausted = False
                self._on_recovered()
            peer = address[0] if isinstance(address, tuple) else str(address)
            self._on_socket(conn, peer)
