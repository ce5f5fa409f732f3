"""The README's secured daemon, as written: its three lines of TOML and its `groupcoord users add` line,
with only the certificate path, the port and the data directory swapped for the test's; a kafka-python
client then authenticates over SASL_SSL with SCRAM-SHA-512."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.support.certs import make_pki
from tests.support.daemon import Daemon

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_the_readme_secured_daemon_serves_a_scram_client(tmp_path):
    section = README[README.index("## Security"):]
    toml = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
    users_line = next(line for line in re.search(r"```sh\n(.*?)```", section, re.S).group(1).splitlines()
                      if line.startswith("groupcoord users add"))
    assert len([line for line in toml.splitlines() if line.strip()]) == 3
    pki = make_pki(tmp_path / "pki")
    data = tmp_path / "data"
    config = tmp_path / "groupcoord.toml"
    config.write_text(toml.replace("/etc/groupcoord/broker.pem", str(pki.broker.combined))
                      .replace("0.0.0.0:9093", "127.0.0.1:0"))
    (tmp_path / "pw.txt").write_text("alice-secret\n")
    args = shlex.split(users_line)[1:]
    args[args.index("--data-dir") + 1] = str(data)
    args[args.index("--password-file") + 1] = str(tmp_path / "pw.txt")
    added = subprocess.run([sys.executable, "-m", "groupcoord.coordinator.ops.cli", *args], capture_output=True,
                           text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    daemon = Daemon(data, config=str(config)).start()
    try:
        from kafka import KafkaProducer

        producer = KafkaProducer(bootstrap_servers=daemon.listeners["SASL_SSL"], security_protocol="SASL_SSL",
                                 ssl_cafile=str(pki.ca), sasl_mechanism="SCRAM-SHA-512",
                                 sasl_plain_username="alice", sasl_plain_password="alice-secret")
        producer.send("readme-secured", b"hello").get(timeout=30)
        producer.close()
    finally:
        daemon.kill()
