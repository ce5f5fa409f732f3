"""The ceiling: a bare uvloop server that answers every frame with one fixed ApiVersions answer.

It frames, echoes the correlation id and writes — nothing else — so its rate is the most any Python
server on this machine can answer. Our server's rate for the same request is reported as a ratio of it.

    python -m bench.bare_server --listen 127.0.0.1:0      # prints "listening on HOST:PORT"
"""

from __future__ import annotations

import argparse
import asyncio
import struct

from groupcoord.protocol.build import build
from groupcoord.protocol.registry import encode_entity, response_class

_SIZE = struct.Struct(">i")


def _fixed_body() -> bytes:
    body = {"error_code": 0, "throttle_time": 0, "api_keys": [{"api_key": k, "min_version": 0, "max_version": 4} for k in range(20)]}
    return encode_entity(build(response_class(18, 3), body))


class BareProtocol(asyncio.Protocol):
    body = b""

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.buf = bytearray()

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        pos = 0
        out = []
        body = self.body
        while len(buf) - pos >= 4:
            (size,) = _SIZE.unpack_from(buf, pos)
            if len(buf) - pos - 4 < size:
                break
            correlation = bytes(buf[pos + 8 : pos + 12])
            out.append(_SIZE.pack(4 + len(body)) + correlation + body)
            pos += 4 + size
        if pos:
            del buf[:pos]
        if out:
            self.transport.writelines(out)


async def serve(host: str, port: int) -> None:
    BareProtocol.body = _fixed_body()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(BareProtocol, host, port, reuse_address=True, backlog=1024)
    h, p = server.sockets[0].getsockname()[:2]
    print(f"listening on {h}:{p}", flush=True)
    await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--listen", default="127.0.0.1:0")
    ns = parser.parse_args()
    host, _, port = ns.listen.rpartition(":")
    import uvloop

    uvloop.run(serve(host, int(port)))


if __name__ == "__main__":
    main()
