"""Running out of file descriptors: logged once, counted, and the daemon accepts again once they free up.

Before, uvloop accepted and at once closed every pending connection when accept() failed with EMFILE,
silently; nothing said why clients were being hung up on. The daemon's descriptor limit is lowered
from outside (prlimit) to a few above what it uses at rest, then more connections are opened than fit.
"""

import json
import os
import re
import resource
import socket
import time
import urllib.request

import pytest

from tests.support.daemon import Daemon
from tests.support.wire import WireClient

HEADROOM = 24
CONNECTIONS = 60


def _metric(port: int, name: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    return sum(float(m.group(1)) for m in re.finditer(rf"^{re.escape(name)}(?:{{[^}}]*}})? (\S+)$", text, re.M))


def _metrics_port(daemon: Daemon) -> int:
    for line in daemon.output:
        if line.startswith("{") and "metrics_port" in line:
            port = json.loads(line).get("metrics_port")
            if port:
                return int(port)
    raise AssertionError("the daemon did not say its metrics port")


@pytest.mark.skipif(not hasattr(resource, "prlimit"), reason="needs prlimit (Linux)")
def test_out_of_descriptors_is_logged_once_and_the_daemon_recovers(tmp_path):
    daemon = Daemon(tmp_path / "data", metrics_port=-1).start()
    try:
        in_use = len(os.listdir(f"/proc/{daemon.proc.pid}/fd"))
        _, hard = resource.prlimit(daemon.proc.pid, resource.RLIMIT_NOFILE)
        resource.prlimit(daemon.proc.pid, resource.RLIMIT_NOFILE, (in_use + HEADROOM, hard))
        held = [socket.create_connection(("127.0.0.1", daemon.port), timeout=5) for _ in range(CONNECTIONS)]
        time.sleep(1.0)
        assert daemon.proc.poll() is None
        said = [line for line in daemon.output if "out of file descriptors" in line]
        assert len(said) == 1, said
        for sock in held:
            sock.close()
        t0 = time.perf_counter()
        with WireClient(daemon.bootstrap_servers) as client:
            answer = client.request(18, 3, {"client_software_name": "p", "client_software_version": "1"})
        assert answer.error_code == 0 and time.perf_counter() - t0 < 5
        deadline = time.monotonic() + 5
        while not any("accepting again" in line for line in daemon.output) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any("accepting again" in line for line in daemon.output)
        resource.prlimit(daemon.proc.pid, resource.RLIMIT_NOFILE, (min(4096, hard), hard))  # room for the scrape
        assert _metric(_metrics_port(daemon), "groupcoord_accept_errors_total") >= 1
    finally:
        daemon.kill()
