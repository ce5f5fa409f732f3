"""Run `groupcoord serve` as a real child process (for SIGKILL/restart and daemon-level tests)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

_LISTENING = re.compile(r"^listening on (\S+):(\d+)$")
_LISTENER = re.compile(r"^listener (\S+) on (\S+:\d+)$")
_READY = re.compile(r"^ready: ")


class Daemon:
    def __init__(self, data_dir: Path, **settings: Any) -> None:
        self.data_dir = Path(data_dir)
        # As the pytest plugin's TEST_DEFAULTS: no initial rebalance delay, and KIP-848 targets computed in the
        # heartbeat that bumps the epoch (the daemon's default batches them per second, as Kafka 4.3 does).
        self.settings = {"listen": "127.0.0.1:0", "metrics-port": "0", "fsync": "batch",
                         "group-initial-rebalance-delay-ms": "0", "group-consumer-assignment-interval-ms": "0",
                         **{k.replace("_", "-"): v for k, v in settings.items()}}
        self.proc: subprocess.Popen[str] | None = None
        self.bootstrap_servers = ""
        self.port = 0
        self.output: list[str] = []
        self.listeners: dict[str, str] = {}  # listener name -> HOST:PORT, as the daemon printed them
        self.startup_seconds = 0.0

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "groupcoord.coordinator.ops.cli", "serve", "--data-dir", str(self.data_dir), "--log-format", "json"]
        for key, value in self.settings.items():
            for item in value if isinstance(value, (list, tuple)) else [value]:  # a list repeats the flag (--override)
                cmd += [f"--{key}", str(item)]
        return cmd

    def start(self, timeout: float = 20.0) -> "Daemon":
        if self.port:  # restart on the same port so clients can reconnect
            self.settings["listen"] = f"127.0.0.1:{self.port}"
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            self.command(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}
        )
        found = threading.Event()
        ready = threading.Event()

        def pump() -> None:
            assert self.proc is not None and self.proc.stdout is not None
            for line in self.proc.stdout:
                line = line.rstrip("\n")
                self.output.append(line)
                named = _LISTENER.match(line)
                if named:
                    self.listeners[named.group(1)] = named.group(2)
                if _READY.match(line):
                    ready.set()
                m = _LISTENING.match(line)
                if m and not found.is_set():
                    self.bootstrap_servers = f"{m.group(1)}:{m.group(2)}"
                    self.port = int(m.group(2))
                    found.set()

        threading.Thread(target=pump, daemon=True).start()
        if found.wait(timeout):
            deadline = time.monotonic() + 5
            while len(self.listeners) < self._expected_listeners() and time.monotonic() < deadline:
                time.sleep(0.01)
            # Serving starts before the coordinator partitions are loaded; the scenarios start from a broker
            # whose groups answer, so wait for that too (a daemon that exits meanwhile ends the wait).
            waited = time.monotonic() + timeout
            while not ready.is_set() and time.monotonic() < waited and self.proc.poll() is None:
                ready.wait(0.05)
        else:
            self.kill()
            raise RuntimeError("daemon did not start:\n" + "\n".join(self.output[-40:]))
        self.startup_seconds = time.perf_counter() - t0
        return self

    def _expected_listeners(self) -> int:
        listeners = str(self.settings.get("listeners") or "")
        return max(1, len([item for item in listeners.split(",") if item.strip()]))

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def terminate(self, timeout: float = 20.0) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)
