"""argparse wiring of the admin commands into `groupcoord` (coordinator/ops/cli.py calls `add_admin_commands`).

Every command runs in its own short-lived event loop and maps failures to exit code 1 with one line on stderr,
so shell scripts can chain them the way they chain Kafka's tools.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Awaitable, Callable, TextIO

from . import acls, commands
from .client import DEFAULT_TIMEOUT_S, AdminError
from .users import add_users_command

Command = Callable[[argparse.Namespace, TextIO], Awaitable[None]]

EXIT_OK = 0
EXIT_ERROR = 1


def run_command(command: Command, args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        asyncio.run(command(args, out))
    except AdminError as exc:
        err.write(f"Error: {exc}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        err.write("Error: interrupted\n")
        return EXIT_ERROR
    except Exception as exc:  # a broker answer we could not handle: still one line and exit 1, not a traceback
        err.write(f"Error: unexpected {type(exc).__name__}: {exc}\n")
        return EXIT_ERROR
    return EXIT_OK


def _common(parser: argparse.ArgumentParser, offline: bool = False) -> None:
    where = parser.add_mutually_exclusive_group(required=True) if offline else parser
    where.add_argument("--bootstrap-server", required=not offline, metavar="HOST:PORT",
                       help="broker to connect to (comma-separated list accepted)")
    if offline:
        where.add_argument("--data-dir", metavar="DIR", help="work on a stopped broker's data directory instead")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help=f"per-request timeout (default {DEFAULT_TIMEOUT_S:g})")
    parser.add_argument("--command-config", metavar="FILE",
                        help="client properties as Kafka's tools take them: security.protocol, sasl.mechanism, "
                             "sasl.jaas.config (or sasl.username/sasl.password), ssl.truststore.location, ...")


def _leaf(sub: argparse._SubParsersAction, name: str, command: Command, help_text: str,
          offline: bool = False) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=help_text, description=help_text)
    _common(parser, offline)
    # `admin_command` lets embedders and tests run the command with their own output streams.
    parser.set_defaults(func=lambda ns: run_command(command, ns), admin_command=command)
    return parser


def add_admin_commands(subparsers: argparse._SubParsersAction) -> None:
    """Add `health`, `groups`, `offsets`, `topics`, `transactions`, `users` and `acls` to the `groupcoord` command line."""
    health = _leaf(subparsers, "health", commands.health,
                   "check that a broker answers ApiVersions and that its /health (metrics port) is healthy: "
                   "writes succeed, nothing offline")
    health.add_argument("--metrics-port", type=int, default=9404, metavar="PORT",
                        help="the broker's metrics port, where /health is served (0: check ApiVersions only)")
    _add_groups(subparsers)
    _add_offsets(subparsers)
    _add_topics(subparsers)
    _add_transactions(subparsers)
    add_users_command(subparsers, lambda sub, name, command, text: _leaf(sub, name, command, text, offline=True))
    _add_acls(subparsers)


def _add_transactions(subparsers: argparse._SubParsersAction) -> None:
    transactions = subparsers.add_parser("transactions", help="list and describe transactions (kafka-transactions.sh)")
    sub = transactions.add_subparsers(dest="transactions_command", required=True)
    listing = _leaf(sub, "list", commands.transactions_list, "list transactions, as kafka-transactions.sh list")
    listing.add_argument("--duration-filter", type=int, default=None, metavar="MS",
                         help="only transactions running longer than this many milliseconds")
    listing.add_argument("--state", action="append", metavar="STATE",
                         help="only transactions in this state (Ongoing, PrepareCommit, Empty, ...); repeatable")
    listing.add_argument("--producer-id", action="append", type=int, metavar="ID",
                         help="only transactions of this producer id; repeatable")
    describe = _leaf(sub, "describe", commands.transactions_describe,
                     "one transactional id's state, as kafka-transactions.sh describe")
    describe.add_argument("--transactional-id", required=True, metavar="ID")


def _add_groups(subparsers: argparse._SubParsersAction) -> None:
    groups = subparsers.add_parser("groups", help="list, describe and delete consumer groups")
    sub = groups.add_subparsers(dest="groups_command", required=True)

    listing = _leaf(sub, "list", commands.groups_list, "list consumer groups")
    listing.add_argument("--state", action="append", metavar="STATE",
                         help="only groups in this state (Stable, Empty, PreparingRebalance, ...); repeatable")
    listing.add_argument("--type", action="append", metavar="TYPE", choices=("classic", "consumer", "share"),
                         help="only groups of this type (classic, consumer, share); repeatable")

    describe = _leaf(sub, "describe", commands.groups_describe,
                     "offsets and lag per partition of a group (like kafka-consumer-groups --describe; a share "
                     "group as kafka-share-groups --describe shows it)")
    describe.add_argument("group", metavar="GROUP")
    view = describe.add_mutually_exclusive_group()
    view.add_argument("--members", action="store_true", help="one row per member instead of per partition")
    view.add_argument("--state", action="store_true", help="the group's state, coordinator and strategy")

    delete = _leaf(sub, "delete", commands.groups_delete, "delete inactive groups and their offsets")
    delete.add_argument("groups", nargs="+", metavar="GROUP")


def _add_offsets(subparsers: argparse._SubParsersAction) -> None:
    offsets = subparsers.add_parser("offsets", help="reset and export committed offsets")
    sub = offsets.add_subparsers(dest="offsets_command", required=True)

    reset = _leaf(sub, "reset", commands.offsets_reset,
                  "plan (default) or --execute an offsets reset of an inactive group")
    reset.add_argument("--group", required=True)
    scope = reset.add_mutually_exclusive_group()
    scope.add_argument("--topic", action="append", metavar="TOPIC[:P,...]",
                       help="topic, optionally with partitions; repeatable")
    scope.add_argument("--all-topics", action="store_true", help="every topic the group has offsets for")
    how = reset.add_mutually_exclusive_group(required=True)
    how.add_argument("--to-earliest", action="store_true")
    how.add_argument("--to-latest", action="store_true")
    how.add_argument("--to-datetime", metavar="ISO-8601", help="e.g. 2024-01-31T12:00:00.000Z (no zone = local)")
    how.add_argument("--to-offset", type=int, metavar="N")
    how.add_argument("--shift-by", type=int, metavar="N")
    how.add_argument("--from-file", metavar="CSV", help="offsets CSV as written by `offsets export`")
    reset.add_argument("--execute", action="store_true", help="commit the plan (default: only print it)")

    export = _leaf(sub, "export", commands.offsets_export, "write the group's committed offsets as CSV")
    export.add_argument("--group", required=True)
    export.add_argument("--out", metavar="FILE", help="output file (default: stdout)")


def _add_topics(subparsers: argparse._SubParsersAction) -> None:
    topics = subparsers.add_parser("topics", help="list, create, describe and delete topics")
    sub = topics.add_subparsers(dest="topics_command", required=True)

    listing = _leaf(sub, "list", commands.topics_list, "list topic names")
    listing.add_argument("--exclude-internal", action="store_true", help="leave out __consumer_offsets and friends")

    create = _leaf(sub, "create", commands.topics_create, "create a topic")
    create.add_argument("--topic", required=True)
    create.add_argument("--partitions", type=int, default=1)
    create.add_argument("--replication-factor", type=int, default=1)
    create.add_argument("--config", action="append", metavar="KEY=VALUE", help="topic config; repeatable")

    describe = _leaf(sub, "describe", commands.topics_describe, "partitions, leaders and replicas of topics")
    describe.add_argument("--topic", action="append", required=True, help="repeatable")

    delete = _leaf(sub, "delete", commands.topics_delete, "delete topics")
    delete.add_argument("--topic", action="append", required=True, help="repeatable")


def _add_acls(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("acls", help="add, list and remove ACLs (kafka-acls.sh's options and output)")
    sub = parser.add_subparsers(dest="acls_command", required=True)
    add = _leaf(sub, "add", acls.acls_add, "add ACLs (CreateAcls)")
    acls.add_options(add)
    listing = _leaf(sub, "list", acls.acls_list, "list ACLs, of the resources given or all (DescribeAcls)")
    acls.add_options(listing)
    listing.add_argument("--principal", action="append", default=[], metavar="TYPE:NAME",
                         help="only the ACLs of this principal; repeatable")
    remove = _leaf(sub, "remove", acls.acls_remove, "remove ACLs (DeleteAcls); without principals, all of the resource's")
    acls.add_options(remove)
    remove.add_argument("--force", action="store_true", help="do not ask for confirmation")
