"""Can a new client still get in while idle and slow-loris connections flood the broker?

Opens ``--idle`` connections that send nothing and ``--loris`` connections that trickle one byte of a
never-finished request every few seconds (so they are never idle), spread over ``--attacker-addresses``
loopback addresses (127.0.1.1, 127.0.1.2, ...), against a `groupcoord serve` child process. Then a new
client from 127.0.0.2 connects and asks ApiVersions, retrying every half second; the script prints how
many attacking connections were accepted and refused, and how long the new client took to be answered
(connect + ApiVersions of the successful attempt, and the time until it succeeded).

``--limits off`` runs the daemon with the new bounds disabled (no per-IP cap, deadlines of a day), i.e. the
broker as it was before them: only ``max.connections``.

    python -m bench.connection_flood [--idle 1000] [--loris 1000] [--attacker-addresses 1] [--limits on]
        [--max-connections 1500] [--max-connections-per-ip 500] [--wait-s 60]
"""

from __future__ import annotations

import argparse
import asyncio
import struct
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from groupcoord.protocol.build import build
from groupcoord.protocol.headers import encode_request_header
from groupcoord.protocol.registry import encode_entity, is_flexible, request_class
from tests.support.daemon import Daemon

API_VERSIONS = 18
DAY_MS = 86_400_000
TRICKLE_S = 5.0


@dataclass
class Attack:
    accepted: int = 0
    refused: int = 0


def _api_versions_frame() -> bytes:
    header = encode_request_header(API_VERSIONS, 3, 1, "flood-probe", is_flexible(API_VERSIONS, 3))
    body = encode_entity(build(request_class(API_VERSIONS, 3),
                               {"client_software_name": "probe", "client_software_version": "1"}))
    return struct.pack(">i", len(header) + len(body)) + header + body


async def _refused(reader: asyncio.StreamReader, timeout: float) -> bool:
    try:
        return await asyncio.wait_for(reader.read(1), timeout) == b""
    except asyncio.TimeoutError:  # before OSError: TimeoutError is one
        return False
    except (ConnectionError, OSError):
        return True


async def _open_attackers(port: int, count: int, addresses: list[str], loris: bool,
                          holders: list[asyncio.StreamWriter]) -> list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    opened = []
    for i in range(count):
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(addresses[i % len(addresses)], 0))
        except OSError:
            continue
        if loris:
            writer.write(struct.pack(">i", 100) + b"\x00")  # a 100-byte frame of which 1 byte ever arrives
        holders.append(writer)
        opened.append((reader, writer))
    return opened


async def _trickle(writers: list[asyncio.StreamWriter], stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), TRICKLE_S)
        except asyncio.TimeoutError:
            for writer in writers:
                if not writer.is_closing():
                    try:
                        writer.write(b"\x00")
                    except (ConnectionError, OSError):
                        pass


async def _new_client(port: int, timeout: float) -> float:
    t0 = time.perf_counter()
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port, local_addr=("127.0.0.2", 0)), timeout)
    try:
        writer.write(_api_versions_frame())
        size = struct.unpack(">i", await asyncio.wait_for(reader.readexactly(4), timeout))[0]
        await asyncio.wait_for(reader.readexactly(size), timeout)
        return time.perf_counter() - t0
    finally:
        writer.close()


async def run(port: int, idle: int, loris: int, attacker_addresses: int, wait_s: float) -> int:
    addresses = [f"127.0.1.{i + 1}" for i in range(attacker_addresses)]
    writers: list[asyncio.StreamWriter] = []
    t0 = time.perf_counter()
    idle_conns = await _open_attackers(port, idle, addresses, False, writers)
    loris_conns = await _open_attackers(port, loris, addresses, True, writers)
    stop = asyncio.Event()
    trickle = asyncio.create_task(_trickle([w for _, w in loris_conns], stop))
    refused = await asyncio.gather(*(_refused(r, 1.0) for r, _ in idle_conns + loris_conns))
    attack = Attack(accepted=refused.count(False), refused=refused.count(True) + (idle + loris - len(refused)))
    print(f"attack: {idle} idle + {loris} slow-loris connections from {attacker_addresses} address(es) opened in "
          f"{time.perf_counter() - t0:.1f} s: {attack.accepted} held open, {attack.refused} refused or closed")
    started = time.perf_counter()
    attempts = 0
    answered_after = latency = None
    while time.perf_counter() - started < wait_s:
        attempts += 1
        try:
            latency = await _new_client(port, 2.0)
            answered_after = time.perf_counter() - started
            break
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
            await asyncio.sleep(0.5)
    stop.set()
    await trickle
    for writer in writers:
        writer.close()
    if answered_after is None:
        print(f"new client from 127.0.0.2: LOCKED OUT for {wait_s:.0f} s ({attempts} attempts)")
        return 1
    print(f"new client from 127.0.0.2: connect + ApiVersions {latency * 1000:.1f} ms, answered "
          f"{answered_after:.2f} s after the flood ({attempts} attempt(s))")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--loris", type=int, default=1000)
    parser.add_argument("--attacker-addresses", type=int, default=1)
    parser.add_argument("--limits", choices=("on", "off"), default="on")
    parser.add_argument("--max-connections", type=int, default=1500)
    parser.add_argument("--max-connections-per-ip", type=int, default=500)
    parser.add_argument("--connections-max-idle-ms", type=int, default=600_000)
    parser.add_argument("--socket-request-read-timeout-ms", type=int, default=30_000)
    parser.add_argument("--wait-s", type=float, default=60.0)
    args = parser.parse_args(argv)
    settings = {"max_connections": args.max_connections}
    if args.limits == "on":
        settings.update(max_connections_per_ip=args.max_connections_per_ip,
                        connections_max_idle_ms=args.connections_max_idle_ms,
                        socket_request_read_timeout_ms=args.socket_request_read_timeout_ms)
    else:
        settings.update(max_connections_per_ip=2147483647, connections_max_idle_ms=DAY_MS,
                        socket_request_read_timeout_ms=DAY_MS)
    print("daemon: " + ", ".join(f"{k.replace('_', '.')}={v}" for k, v in settings.items()))
    with tempfile.TemporaryDirectory(prefix="groupcoord-flood-") as tmp:
        daemon = Daemon(Path(tmp) / "data", fsync="never", **settings).start()
        try:
            return asyncio.run(run(daemon.port, args.idle, args.loris, args.attacker_addresses, args.wait_s))
        finally:
            daemon.kill()


if __name__ == "__main__":
    sys.exit(main())
