"""docker/compose.yaml's example runs under podman-compose: the broker, a producer and the consumer group
``orders-app`` of two kafka-python members, which share the topic's partitions and commit offsets.

The images are the ones the image test builds (compose's names for them); the compose file is used as it
is, except that its host ports become free loopback ports (this machine may already use 9092 and 9404) and
its build contexts absolute paths (it is copied to a temporary directory).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid

import pytest

from tests.docker.podman import ROOT, Podman, containers_conf

# About a minute with the images built: in the full run only (the image test covers the image by default).
pytestmark = [pytest.mark.container, pytest.mark.slow, pytest.mark.timeout(900),
              pytest.mark.skipif(not os.environ.get("GROUPCOORD_FULL_TESTS"),
                                 reason="compose example under podman-compose (~1 min): set GROUPCOORD_FULL_TESTS=1")]

SERVICES = ("groupcoord", "producer", "consumer-1", "consumer-2")
COMPOSE_TIMEOUT_S = 300
GROUP_DEADLINE_S = 120


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_compose_example_group_runs(engine: Podman, image: str, example_image: str, tmp_path):
    compose_cli = shutil.which("podman-compose")
    if compose_cli is None:
        pytest.skip(reason="podman-compose is not installed (apt-get install podman-compose)")
    subprocess.run(engine.base + ["tag", image, "localhost/groupcoord:latest"], check=True, timeout=60)
    text = (ROOT / "docker" / "compose.yaml").read_text()
    text = (text.replace('"9092:9092"', f'"127.0.0.1:{_free_port()}:9092"')
                .replace('"9404:9404"', f'"127.0.0.1:{_free_port()}:9404"')
                .replace("context: ..", f"context: {ROOT}")
                .replace("build: ./example", f"build: {ROOT / 'docker' / 'example'}"))
    compose = tmp_path / "compose.yaml"
    compose.write_text(text)
    project = f"gctest{uuid.uuid4().hex[:6]}"
    env = {**os.environ, "CONTAINERS_CONF": str(containers_conf(tmp_path))}
    base = [compose_cli, "-p", project, "-f", str(compose)]
    try:
        up = subprocess.run(base + ["up", "-d", *SERVICES], capture_output=True, text=True, env=env,
                            timeout=COMPOSE_TIMEOUT_S, cwd=tmp_path)
        assert up.returncode == 0, up.stdout[-3000:] + up.stderr[-3000:]
        broker = f"{project}_groupcoord_1"
        deadline, rows = time.monotonic() + GROUP_DEADLINE_S, []
        while time.monotonic() < deadline:
            described = subprocess.run(engine.base + ["exec", broker, "groupcoord", "groups", "describe", "orders-app",
                                                      "--bootstrap-server", "127.0.0.1:9092", "--json"],
                                       capture_output=True, text=True, timeout=60)
            if described.returncode == 0:
                rows = json.loads(described.stdout)
                members = {r["consumer_id"] for r in rows if r.get("consumer_id")}
                if len(members) == 2 and all((r.get("current_offset") or -1) > 0 for r in rows):
                    break
            time.sleep(2)
        assert len({r["consumer_id"] for r in rows if r.get("consumer_id")}) == 2, rows
        assert all(r["current_offset"] > 0 for r in rows), rows
        print(f"compose example: orders-app {json.dumps(rows)}")
    finally:
        subprocess.run(base + ["down", "-v"], capture_output=True, env=env, timeout=COMPOSE_TIMEOUT_S, cwd=tmp_path)
