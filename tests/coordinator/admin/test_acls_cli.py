"""`groupcoord acls add|list|remove` against a real broker running the StandardAuthorizer.

The CLI connects on PLAINTEXT as User:ANONYMOUS, which these brokers make a super user (once listeners
authenticate, `--command-config` names the admin's credentials instead).
"""

from __future__ import annotations

import argparse
import json

import pytest

from groupcoord.coordinator.admin.cli import add_admin_commands
from groupcoord.coordinator.broker import run_in_thread
from groupcoord.coordinator.security.acl import ANY_FILTER
from groupcoord.coordinator.security.authorizer import STANDARD_AUTHORIZER as STANDARD

pytestmark = pytest.mark.timeout(60)


def run(broker, capsys, *argv: str) -> tuple[int, str, str]:
    p = argparse.ArgumentParser(prog="groupcoord")
    add_admin_commands(p.add_subparsers(dest="command", required=True))
    ns = p.parse_args([*argv, "--bootstrap-server", broker.bootstrap_servers])
    code = ns.func(ns)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def broker():
    with run_in_thread(authorizer_class_name=STANDARD, super_users="User:ANONYMOUS") as b:
        yield b


def bindings(broker) -> set[tuple]:
    return {(b.pattern.resource_type.name, b.pattern.name, b.pattern.pattern_type.name, b.entry.principal,
             b.entry.host, b.entry.operation.name, b.entry.permission_type.name)
            for b in broker.authorizer.acls(ANY_FILTER)}


def test_add_list_and_remove_as_kafka_acls_does(broker, capsys):
    code, out, err = run(broker, capsys, "acls", "add", "--allow-principal", "User:alice", "--operation", "Read",
                         "--operation", "Describe", "--topic", "orders", "--group", "payments")
    assert (code, err) == (0, "")
    assert "Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`: \n" in out
    assert "\t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)" in out
    code, _, _ = run(broker, capsys, "acls", "add", "--deny-principal", "User:mallory", "--deny-host", "10.0.0.9",
                     "--topic", "pay", "--resource-pattern-type", "prefixed")
    assert code == 0
    assert bindings(broker) == {
        ("TOPIC", "orders", "LITERAL", "User:alice", "*", "READ", "ALLOW"),
        ("TOPIC", "orders", "LITERAL", "User:alice", "*", "DESCRIBE", "ALLOW"),
        ("GROUP", "payments", "LITERAL", "User:alice", "*", "READ", "ALLOW"),
        ("GROUP", "payments", "LITERAL", "User:alice", "*", "DESCRIBE", "ALLOW"),
        ("TOPIC", "pay", "PREFIXED", "User:mallory", "10.0.0.9", "ALL", "DENY"),
    }
    code, out, _ = run(broker, capsys, "acls", "list", "--topic", "payments", "--resource-pattern-type", "match")
    assert out.startswith("Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=pay, patternType=PREFIXED)`: \n")
    assert "\t(principal=User:mallory, host=10.0.0.9, operation=ALL, permissionType=DENY)" in out
    code, out, _ = run(broker, capsys, "acls", "list", "--principal", "User:alice", "--json")
    assert code == 0 and len(json.loads(out)) == 4
    code, out, _ = run(broker, capsys, "acls", "remove", "--allow-principal", "User:alice", "--operation", "Read",
                       "--group", "payments", "--force", "--json")
    assert json.loads(out) == {"removed": [{"resource_type": "GROUP", "resource_name": "payments", "pattern_type": "LITERAL",
                                            "principal": "User:alice", "host": "*", "operation": "READ",
                                            "permission_type": "ALLOW"}]}
    code, _, _ = run(broker, capsys, "acls", "remove", "--topic", "orders", "--force")
    assert code == 0
    assert bindings(broker) == {("GROUP", "payments", "LITERAL", "User:alice", "*", "DESCRIBE", "ALLOW"),
                                ("TOPIC", "pay", "PREFIXED", "User:mallory", "10.0.0.9", "ALL", "DENY")}


def test_producer_and_consumer_conveniences(broker, capsys):
    code, _, err = run(broker, capsys, "acls", "add", "--allow-principal", "User:app", "--producer", "--idempotent",
                       "--consumer", "--topic", "events", "--group", "app", "--transactional-id", "app-tx")
    assert (code, err) == (0, "")
    assert bindings(broker) == {
        *{("TOPIC", "events", "LITERAL", "User:app", "*", op, "ALLOW") for op in ("WRITE", "DESCRIBE", "CREATE", "READ")},
        ("GROUP", "app", "LITERAL", "User:app", "*", "READ", "ALLOW"),
        *{("TRANSACTIONAL_ID", "app-tx", "LITERAL", "User:app", "*", op, "ALLOW") for op in ("WRITE", "DESCRIBE")},
        ("CLUSTER", "kafka-cluster", "LITERAL", "User:app", "*", "IDEMPOTENT_WRITE", "ALLOW"),
    }


def test_usage_errors_and_refusals_are_one_line_and_exit_1(broker, capsys):
    code, _, err = run(broker, capsys, "acls", "add", "--topic", "t")
    assert code == 1 and "--allow-principal, --deny-principal" in err
    code, _, err = run(broker, capsys, "acls", "add", "--allow-principal", "User:a", "--operation", "Read", "--cluster")
    assert code == 1 and "ResourceType CLUSTER only supports operations" in err
    code, _, err = run(broker, capsys, "acls", "add", "--allow-principal", "alice", "--topic", "t")
    assert code == 1 and "Type:name" in err


def test_without_an_authorizer_the_broker_says_security_is_disabled(capsys):
    with run_in_thread() as b:
        code, _, err = run(b, capsys, "acls", "list")
    assert code == 1 and "SECURITY_DISABLED" in err


def test_a_principal_without_alter_on_the_cluster_is_refused(capsys):
    with run_in_thread(authorizer_class_name=STANDARD) as b:
        code, _, err = run(b, capsys, "acls", "add", "--allow-principal", "User:x", "--topic", "t")
    assert code == 1 and "CLUSTER_AUTHORIZATION_FAILED" in err
