"""``groupcoord users add|list|remove``: SCRAM users, offline on a data directory or over the wire.

Offline (``--data-dir``) the credential file is changed directly, under the data directory's lock, so a
running broker's directory is refused (use ``--bootstrap-server`` then). Over the wire
(``--bootstrap-server`` with ``--command-config``) it is Kafka's DescribeUserScramCredentials and
AlterUserScramCredentials, so it works against Apache Kafka too (as ``kafka-configs.sh --alter --add-config
'SCRAM-SHA-512=[password=...]' --entity-type users``). Either way the password never leaves this process:
only a fresh salt and the salted password are written or sent.

The password comes from ``--password-file`` (its first line), from standard input when it is not a terminal,
or from a prompt; ``--password`` on the command line is accepted for scripts but shows in ``ps``.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path
from typing import Any, TextIO

from groupcoord.coordinator.ops.data_dir_lock import DataDirInUse, DataDirLock
from groupcoord.coordinator.security.credential_changes import Deletion, Upsertion
from groupcoord.coordinator.security.credentials import CredentialStore
from groupcoord.coordinator.security.scram import DEFAULT_ITERATIONS, ScramMechanism, secure_random_string
from groupcoord.protocol.errors import kafka_name

from . import render
from .client import AdminClient, AdminError, ApiKey, check_error
from .commands import client_security

HEADERS = ("USER", "MECHANISM", "ITERATIONS")
DEFAULT_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")


def _mechanisms(names: list[str] | None) -> list[ScramMechanism]:
    out = []
    for name in names or DEFAULT_MECHANISMS:
        mechanism = ScramMechanism.by_name(name.upper())
        if mechanism is None:
            raise AdminError(f"unknown SCRAM mechanism {name!r}: SCRAM-SHA-256 or SCRAM-SHA-512")
        out.append(mechanism)
    return out


def _password(args: argparse.Namespace) -> str:
    if args.password is not None:
        return args.password
    if args.password_file:
        try:
            return Path(args.password_file).read_text().splitlines()[0]
        except (OSError, IndexError) as exc:
            raise AdminError(f"cannot read a password from {args.password_file}") from exc
    if not sys.stdin.isatty():
        line = sys.stdin.readline().rstrip("\n")
        if not line:
            raise AdminError("no password on standard input")
        return line
    first = getpass.getpass(f"Password for {args.user}: ")
    if first != getpass.getpass("Again: "):
        raise AdminError("the passwords differ")
    return first


def _offline_store(args: argparse.Namespace) -> tuple[DataDirLock, CredentialStore]:
    try:
        lock = DataDirLock(Path(args.data_dir)).acquire()
    except DataDirInUse as exc:
        raise AdminError(f"{exc}; change users of a running broker with --bootstrap-server") from None
    return lock, CredentialStore.open(Path(args.data_dir))


def _raise_failures(results: list[Any]) -> None:
    failed = [r for r in results if int(r.error_code) != 0]
    if failed:
        raise AdminError("; ".join(f"user {r.user!r}: {kafka_name(int(r.error_code))}"
                                   f"{': ' + r.error_message if r.error_message else ''}" for r in failed))


def _upsertions(user: str, password: str, mechanisms: list[ScramMechanism], iterations: int) -> list[Upsertion]:
    out = []
    for mechanism in mechanisms:
        salt = secure_random_string().encode()
        out.append(Upsertion(user, mechanism.wire_type, iterations, salt,
                             mechanism.salted_password(password, salt, iterations)))
    return out


async def users_add(args: argparse.Namespace, out: TextIO) -> None:
    mechanisms = _mechanisms(args.mechanism)
    upsertions = _upsertions(args.user, _password(args), mechanisms, args.iterations)
    if args.data_dir:
        lock, store = _offline_store(args)
        try:
            for upsertion in upsertions:  # one at a time, as over the wire (a user twice in one change is refused)
                _raise_failures(store.alter([upsertion], []))
        finally:
            lock.release()
    else:
        async with AdminClient(args.bootstrap_server, timeout=args.timeout, security=client_security(args)) as client:
            for upsertion in upsertions:  # one request per mechanism: Kafka refuses a user twice in one request
                _, response = await client.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, {"deletions": [], "upsertions": [{
                    "name": upsertion.name, "mechanism": upsertion.mechanism, "iterations": upsertion.iterations,
                    "salt": upsertion.salt, "salted_password": upsertion.salted_password}]})
                _raise_failures(list(response.results))
    names = ", ".join(m.mechanism_name for m in mechanisms)
    out.write(render.to_json({"user": args.user, "mechanisms": [m.mechanism_name for m in mechanisms],
                              "iterations": args.iterations}) + "\n" if args.json
              else f"Added {names} credentials for user {args.user} ({args.iterations} iterations).\n")


async def _described(args: argparse.Namespace, users: list[str]) -> list[tuple[str, str, int]]:
    if args.data_dir:
        lock, store = _offline_store(args)
        lock.release()
        known = store.users()
        missing = [u for u in users if u not in known]
        if missing:
            raise AdminError(f"no such user: {', '.join(missing)}")
        return [(u, m.mechanism_name, i) for u in (users or sorted(known)) for m, i in known[u]]
    async with AdminClient(args.bootstrap_server, timeout=args.timeout, security=client_security(args)) as client:
        _, response = await client.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
                                           {"users": [{"name": u} for u in users] if users else None})
        check_error(response.error_code, "DescribeUserScramCredentials", response.error_message)
        _raise_failures(list(response.results))
        rows = []
        for result in sorted(response.results, key=lambda r: r.user):
            for info in result.credential_infos:
                mechanism = ScramMechanism.by_type(int(info.mechanism))
                rows.append((result.user, mechanism.mechanism_name if mechanism else str(info.mechanism),
                             int(info.iterations)))
        return rows


async def users_list(args: argparse.Namespace, out: TextIO) -> None:
    rows = await _described(args, list(args.users or []))
    if args.json:
        out.write(render.to_json([{"user": u, "mechanism": m, "iterations": i} for u, m, i in rows]) + "\n")
    elif rows:
        out.write(render.table(HEADERS, rows) + "\n")


async def users_remove(args: argparse.Namespace, out: TextIO) -> None:
    if args.mechanism:
        mechanisms = [m.mechanism_name for m in _mechanisms(args.mechanism)]
    else:
        mechanisms = [m for _, m, _ in await _described(args, [args.user])]
    deletions = [Deletion(args.user, ScramMechanism.by_name(m).wire_type) for m in mechanisms]  # type: ignore[union-attr]
    if args.data_dir:
        lock, store = _offline_store(args)
        try:
            for deletion in deletions:
                _raise_failures(store.alter([], [deletion]))
        finally:
            lock.release()
    else:
        async with AdminClient(args.bootstrap_server, timeout=args.timeout, security=client_security(args)) as client:
            for deletion in deletions:
                _, response = await client.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, {"upsertions": [], "deletions": [
                    {"name": deletion.name, "mechanism": deletion.mechanism}]})
                _raise_failures(list(response.results))
    out.write(render.to_json({"user": args.user, "removed": mechanisms}) + "\n" if args.json
              else f"Removed {', '.join(mechanisms)} credentials of user {args.user}.\n")


def add_users_command(subparsers: argparse._SubParsersAction, leaf: Any) -> None:
    """``leaf(sub, name, command, help)`` is the admin CLI's own (it adds --bootstrap-server, --json, ...)."""
    users = subparsers.add_parser("users", help="add, list and remove SCRAM users (offline or over the wire)")
    sub = users.add_subparsers(dest="users_command", required=True)

    add = leaf(sub, "add", users_add, "add a SCRAM user, or change its password")
    add.add_argument("user", metavar="USER")
    add.add_argument("--mechanism", action="append", metavar="SCRAM-SHA-256|SCRAM-SHA-512",
                     help="repeatable (default: both)")
    add.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS, help="4096..16384 (default 4096)")
    secret = add.add_mutually_exclusive_group()
    secret.add_argument("--password-file", metavar="FILE", help="read the password from the file's first line")
    secret.add_argument("--password", help="the password itself (visible in ps; prefer --password-file or stdin)")

    listing = leaf(sub, "list", users_list, "list SCRAM users with their mechanisms and iterations")
    listing.add_argument("users", nargs="*", metavar="USER")

    remove = leaf(sub, "remove", users_remove, "remove a user's SCRAM credentials")
    remove.add_argument("user", metavar="USER")
    remove.add_argument("--mechanism", action="append", metavar="SCRAM-SHA-256|SCRAM-SHA-512",
                        help="repeatable (default: every mechanism the user has)")
