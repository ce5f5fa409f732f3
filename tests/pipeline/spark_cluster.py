"""A real Spark standalone cluster on loopback: one master and two workers, each its own JVM process,
started from the `spark-class` PySpark ships, waited for with a bound, and torn down by the caller."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

START_TIMEOUT_S = 180.0  # generous: the CI box (and this shared one) is busy; the wait ends as soon as all report


class ClusterUnavailable(RuntimeError):
    pass


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


@dataclass
class StandaloneCluster:
    work_dir: Path
    workers: int = 2
    cores_per_worker: int = 1
    memory_per_worker: str = "1g"
    port: int = 0
    processes: list[tuple[subprocess.Popen, Path]] = field(default_factory=list)

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        return {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": "127.0.0.1",
                "SPARK_NO_DAEMONIZE": "1", "PYSPARK_PYTHON": sys.executable, "SPARK_WORKER_DIR": str(self.work_dir)}

    def _spawn(self, name: str, args: list[str]) -> Path:
        log = self.work_dir / f"{name}.log"
        handle = log.open("w")
        proc = subprocess.Popen([str(spark_home() / "bin" / "spark-class"), *args], stdout=handle,
                                stderr=subprocess.STDOUT, env=self.env(), start_new_session=True)
        self.processes.append((proc, log))
        return log

    def _wait_for(self, log: Path, marker: str, deadline: float) -> None:
        while time.monotonic() < deadline:
            if marker in log.read_text(errors="replace"):
                return
            for proc, _ in self.processes:
                if proc.poll() is not None:
                    raise ClusterUnavailable(f"a cluster process exited early:\n{log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.5)
        raise ClusterUnavailable(f"no {marker!r} within {START_TIMEOUT_S}s:\n{log.read_text(errors='replace')[-2000:]}")

    def start(self) -> "StandaloneCluster":
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            master = self._spawn("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                            "--port", str(self.port), "--webui-port", "0"])
            self._wait_for(master, "I have been elected leader", deadline)
            logs = [self._spawn(f"worker-{n}", ["org.apache.spark.deploy.worker.Worker", self.master_url,
                                                 "--host", "127.0.0.1", "--cores", str(self.cores_per_worker),
                                                 "--memory", self.memory_per_worker, "--webui-port", "0",
                                                 "--work-dir", str(self.work_dir / f"worker-{n}")])
                    for n in range(self.workers)]
            for log in logs:
                self._wait_for(log, "Successfully registered with master", deadline)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for proc, _ in reversed(self.processes):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc, _ in self.processes:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        self.processes.clear()
