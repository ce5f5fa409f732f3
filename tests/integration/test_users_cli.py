"""`groupcoord users add|list|remove`: offline on a stopped broker's data directory (refused while a broker
holds it), and over the wire with --command-config against a running SASL broker; the users then log in."""

from __future__ import annotations

import io
import json
from argparse import Namespace

import pytest

from groupcoord.coordinator.admin.cli import run_command
from groupcoord.coordinator.admin.users import users_add, users_list, users_remove
from groupcoord.coordinator.broker import run_in_thread
from groupcoord.coordinator.ops.cli import build_parser
from tests.support.sasl import SaslRefused, sasl_client

JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";'


def run(argv: list[str]) -> tuple[int, str, str]:
    ns = build_parser().parse_args(argv)
    out, err = io.StringIO(), io.StringIO()
    code = run_command(ns.admin_command, ns, out, err)
    return code, out.getvalue(), err.getvalue()


def test_offline_add_list_remove_and_a_live_directory_is_refused(tmp_path):
    data = str(tmp_path / "data")
    assert run(["users", "add", "alice", "--data-dir", data, "--password", "pw-a"])[0] == 0
    assert run(["users", "add", "bob", "--data-dir", data, "--password", "pw-b", "--mechanism", "SCRAM-SHA-256",
                "--iterations", "8192"])[0] == 0
    code, out, _ = run(["users", "list", "--data-dir", data, "--json"])
    assert code == 0 and json.loads(out) == [
        {"user": "alice", "mechanism": "SCRAM-SHA-256", "iterations": 4096},
        {"user": "alice", "mechanism": "SCRAM-SHA-512", "iterations": 4096},
        {"user": "bob", "mechanism": "SCRAM-SHA-256", "iterations": 8192}]
    code, _, err = run(["users", "add", "carol", "--data-dir", data, "--password", "x", "--iterations", "100"])
    assert code == 1 and "UNACCEPTABLE_CREDENTIAL" in err and "Too few iterations" in err
    assert run(["users", "remove", "alice", "--data-dir", data])[0] == 0
    code, out, _ = run(["users", "list", "--data-dir", data])
    assert "alice" not in out and "bob" in out
    with run_in_thread(data_dir=data, listeners="SASL_PLAINTEXT://127.0.0.1:0") as broker:
        code, _, err = run(["users", "add", "dave", "--data-dir", data, "--password", "x"])
        assert code == 1 and "in use" in err
        with sasl_client(broker.bootstrap_servers, "SCRAM-SHA-256", "bob", "pw-b"):
            pass


def test_over_the_wire_with_command_config(tmp_path):
    config = tmp_path / "admin.properties"
    with run_in_thread(listeners="SASL_PLAINTEXT://127.0.0.1:0", sasl_enabled_mechanisms="PLAIN,SCRAM-SHA-512",
                       override=[f"listener.name.sasl_plaintext.plain.sasl.jaas.config={JAAS}"]) as broker:
        config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                          f"sasl.jaas.config={JAAS[:-1]} username=\"admin\" password=\"admin-secret\";\n")
        common = ["--bootstrap-server", broker.bootstrap_servers, "--command-config", str(config)]
        assert run(["users", "add", "erin", "--password", "erin-pw", "--mechanism", "SCRAM-SHA-512", *common])[0] == 0
        code, out, _ = run(["users", "list", "erin", *common])
        assert code == 0 and "erin SCRAM-SHA-512 4096" in out
        with sasl_client(broker.bootstrap_servers, "SCRAM-SHA-512", "erin", "erin-pw"):
            pass
        assert run(["users", "remove", "erin", *common])[0] == 0
        with pytest.raises(SaslRefused):
            sasl_client(broker.bootstrap_servers, "SCRAM-SHA-512", "erin", "erin-pw")
        code, _, err = run(["users", "list", "nobody", *common])
        assert code == 1 and "RESOURCE_NOT_FOUND" in err
        config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.username=admin\n"
                          "sasl.password=wrong\n")
        code, _, err = run(["users", "list", *common])
        assert code == 1 and "SASL_AUTHENTICATION_FAILED" in err
