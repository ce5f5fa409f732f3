"""The admin commands: each takes the parsed arguments and an output stream, runs over an `AdminClient`,
and prints either a table or one JSON document. Failures raise `AdminError`; cli.py turns them into exit 1.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TextIO

from groupcoord.protocol.errors import kafka_name

from . import operations as ops
from . import render
from . import share_groups
from . import transactions as txns
from .client import AdminClient, AdminError, ApiKey
from .client_security import ClientConfigError, ClientSecurity
from .model import GroupDescription
from .offsets_csv import read_offsets_csv, write_offsets_csv
from .reset_plan import ResetSpec, ResetStrategy, parse_datetime_ms, plan_reset, select_partitions


def client_security(args: argparse.Namespace) -> ClientSecurity:
    """The connection's security from ``--command-config`` (Kafka's client properties), PLAINTEXT without it."""
    path = getattr(args, "command_config", None)
    if not path:
        return ClientSecurity()
    try:
        return ClientSecurity.from_file(path)
    except ClientConfigError as exc:
        raise AdminError(str(exc)) from None


def _client(args: argparse.Namespace) -> AdminClient:
    return AdminClient(args.bootstrap_server, timeout=args.timeout, security=client_security(args))


def _emit(out: TextIO, text: str) -> None:
    if text:
        out.write(text if text.endswith("\n") else text + "\n")


async def health(args: argparse.Namespace, out: TextIO) -> None:
    """An ApiVersions round trip, then the broker's own /health on its metrics port: a broker that answers
    but cannot write (a full disk, EIO) or has partitions offline is reported unhealthy (exit code 1). The
    report says what was checked: the ApiVersions version and how many APIs the broker serves, and (from
    /health) its data directory, partition logs and coordinator partitions by load state."""
    async with _client(args) as client:
        conn = await client.connection()
        version = conn.version_for(ApiKey.API_VERSIONS)
        apis = len(conn.api_ranges)
    report: dict = {"ok": True, "api_versions_version": version, "apis": apis}
    if args.metrics_port:
        host = args.bootstrap_server.rpartition(":")[0].strip("[]") or "127.0.0.1"
        report.update(await _broker_health(host, args.metrics_port, args.timeout))
    if not report.get("healthy", True):
        report["ok"] = False
        problems = "; ".join(f"{p['partition']}: {p['problem']} ({p['error']})" for p in report["problems"])
        _emit(out, render.to_json(report) if args.json else f"unhealthy: {problems}\n{_checked(report)}")
        raise AdminError(f"broker unhealthy: {len(report['problems'])} problem(s)")
    _emit(out, render.to_json(report) if args.json else f"ok\n{_checked(report)}")


def _checked(report: dict) -> str:
    lines = [f"checked: ApiVersions v{report['api_versions_version']} answered ({report['apis']} APIs)"]
    checked = report.get("checked")
    if checked is None:
        lines.append("not checked: data directory and coordinator load state (no --metrics-port)")
    else:
        shards = checked["coordinator_partitions"]
        lines.append(f"checked: coordinator partitions {shards['loaded']} loaded, {shards['loading']} loading, "
                     f"{shards['unavailable']} unavailable")
        lines.append(f"checked: data dir {checked['data_dir']}: {checked['partition_logs']} partition logs, "
                     f"{len(report.get('problems', []))} problem(s)")
    return "\n".join(lines)


async def _broker_health(host: str, port: int, timeout: float) -> dict:
    """GET /health from the broker's metrics endpoint (200 healthy, 503 not, both with the problems)."""
    import asyncio
    import json

    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except (OSError, asyncio.TimeoutError) as exc:
        raise AdminError(f"the broker answers, but its health endpoint http://{host}:{port}/health does not "
                         f"({exc}); pass --metrics-port 0 to check ApiVersions only") from exc
    try:
        writer.write(f"GET /health HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        raw = await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200") and not head.startswith(b"HTTP/1.1 503"):
        raise AdminError(f"unexpected answer from http://{host}:{port}/health: {head[:80]!r}")
    return json.loads(body)


async def groups_list(args: argparse.Namespace, out: TextIO) -> None:
    async with _client(args) as client:
        groups = await ops.list_groups(client, args.state or (), getattr(args, "type", None) or ())
    if args.json:
        _emit(out, render.to_json(render.groups_json(groups)))
    else:
        _emit(out, render.groups_table(groups))


async def groups_describe(args: argparse.Namespace, out: TextIO) -> None:
    async with _client(args) as client:
        share = None
        if ApiKey.SHARE_GROUP_DESCRIBE in (await client.connection(None)).api_ranges:
            share = await share_groups.describe_share_group(client, args.group)
        if share is not None:
            offsets = None if args.members or args.state else await share_groups.describe_share_offsets(client, args.group)
            _share_describe(args, out, share, offsets)
            return
        if args.members or args.state:
            group = await ops.describe_group(client, args.group)
            rows = None
        else:
            group, rows = await ops.describe_lag(client, args.group)
    if group.state == ops.DEAD_STATE:
        raise AdminError(f"Consumer group '{args.group}' does not exist.")
    if args.json:
        if args.state:
            document = render.state_json(group)
        elif args.members:
            document = render.members_json(group)
        else:
            document = render.lag_json(rows)
        _emit(out, render.to_json(document))
        return
    if args.state:
        _emit(out, render.state_table(group))
    elif args.members:
        _emit(out, _no_members_note(group) or render.members_table(group))
    else:
        note = _no_members_note(group)
        if note:
            _emit(out, note)
        if rows:
            _emit(out, render.lag_table(rows))


def _share_describe(args: argparse.Namespace, out: TextIO, group, offsets) -> None:
    """kafka-share-groups.sh --describe: offsets (START-OFFSET, LAG) by default, --members, --state. Where the
    broker cannot describe share-partition offsets the default view shows the members."""
    members_view = args.members or (not args.state and offsets is None)
    if args.json:
        if args.state:
            document = render.share_state_json(group)
        elif members_view:
            document = render.share_members_json(group)
        else:
            document = render.share_offsets_json(offsets)
        _emit(out, render.to_json(document))
        return
    if not group.members and not args.state:
        _emit(out, f"Share group '{group.group_id}' has no active members.")
    if args.state:
        _emit(out, render.share_state_table(group))
    elif members_view:
        if group.members:
            _emit(out, render.share_members_table(group))
    elif offsets:
        _emit(out, render.share_offsets_table(offsets))


def _no_members_note(group: GroupDescription) -> str:
    """kafka-consumer-groups prints this line when nobody is consuming, so scripts grepping for it keep working."""
    if group.members:
        return ""
    if group.state == "Empty":
        return f"Consumer group '{group.group_id}' has no active members."
    return ""


async def groups_delete(args: argparse.Namespace, out: TextIO) -> None:
    async with _client(args) as client:
        results = await ops.delete_groups(client, args.groups)
    failed = {g: code for g, code in results.items() if code != 0}
    if args.json:
        _emit(out, render.to_json({g: {"error_code": code, "deleted": code == 0} for g, code in results.items()}))
    else:
        ok = [g for g, code in results.items() if code == 0]
        if ok:
            names = ", ".join(f"'{g}'" for g in ok)
            _emit(out, f"Deletion of requested consumer groups ({names}) was successful.")
    if failed:
        details = "; ".join(f"group '{g}' could not be deleted due to: {kafka_name(c)}" for g, c in failed.items())
        raise AdminError(f"Deletion of some consumer groups failed: {details}")


async def offsets_reset(args: argparse.Namespace, out: TextIO) -> None:
    spec = _reset_spec(args)
    async with _client(args) as client:
        group = await ops.describe_group(client, args.group)
        if not group.is_inactive:
            raise AdminError(
                f"Assignments can only be reset if the group '{args.group}' is inactive, "
                f"but the current state is {group.state}."
            )
        committed = await ops.fetch_committed(client, args.group)
        if spec.strategy is ResetStrategy.FROM_FILE:
            partitions = sorted(spec.file_offsets)
        else:
            cluster = await client.metadata(None if args.all_topics else _topic_names(args.topic))
            topic_partitions = {name: list(t.partitions) for name, t in cluster.topics.items() if t.error_code == 0}
            partitions = select_partitions(args.topic or (), args.all_topics, topic_partitions, committed)
        if not partitions:
            raise AdminError(f"no partitions to reset for group '{args.group}'")
        timestamp = spec.value if spec.strategy is ResetStrategy.TO_DATETIME else None
        state = await ops.partition_offsets(client, partitions, committed, timestamp)
        plan = plan_reset(spec, state)
        if args.execute:
            await ops.commit_offsets(client, args.group, {(p.topic, p.partition): p.new_offset for p in plan})
    if args.json:
        _emit(out, render.to_json(render.reset_json(args.group, plan, args.execute)))
    else:
        _emit(out, render.reset_table(args.group, plan))


def _topic_names(topic_args: list[str] | None) -> list[str]:
    return sorted({arg.partition(":")[0] for arg in topic_args or ()})


def _reset_spec(args: argparse.Namespace) -> ResetSpec:
    if args.from_file is not None:
        if args.topic or args.all_topics:
            raise AdminError("--from-file takes its partitions from the file; drop --topic/--all-topics")
        text = _read_text(args.from_file)
        return ResetSpec(ResetStrategy.FROM_FILE, file_offsets=read_offsets_csv(text, args.group))
    if not args.topic and not args.all_topics:
        raise AdminError("one of --topic or --all-topics is required")
    if args.to_earliest:
        return ResetSpec(ResetStrategy.TO_EARLIEST)
    if args.to_latest:
        return ResetSpec(ResetStrategy.TO_LATEST)
    if args.to_datetime is not None:
        return ResetSpec(ResetStrategy.TO_DATETIME, parse_datetime_ms(args.to_datetime))
    if args.to_offset is not None:
        return ResetSpec(ResetStrategy.TO_OFFSET, args.to_offset)
    return ResetSpec(ResetStrategy.SHIFT_BY, args.shift_by)


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError as exc:
        raise AdminError(f"cannot read {path}: {exc.strerror}") from None


async def offsets_export(args: argparse.Namespace, out: TextIO) -> None:
    async with _client(args) as client:
        committed = await ops.fetch_committed(client, args.group)
    if args.out:
        try:
            with open(args.out, "w", newline="") as handle:
                write_offsets_csv(args.group, committed.values(), handle)
        except OSError as exc:
            raise AdminError(f"cannot write {args.out}: {exc.strerror}") from None
        _emit(out, f"exported {len(committed)} offsets of group '{args.group}' to {args.out}")
    else:
        write_offsets_csv(args.group, committed.values(), out)


async def topics_list(args: argparse.Namespace, out: TextIO) -> None:
    async with _client(args) as client:
        topics = await ops.list_topics(client)
    names = [name for name, t in topics.items() if not (args.exclude_internal and t.is_internal)]
    _emit(out, render.to_json(names) if args.json else "\n".join(names))


async def topics_describe(args: argparse.Namespace, out: TextIO) -> None:
    async with _client(args) as client:
        topics = await ops.describe_topics(client, args.topic)
    if args.json:
        _emit(out, render.to_json([
            {
                "topic": t.name,
                "internal": t.is_internal,
                "partitions": [
                    {"partition": p.partition, "leader": p.leader, "replicas": list(p.replicas), "isr": list(p.isr)}
                    for p in sorted(t.partitions.values(), key=lambda p: p.partition)
                ],
            }
            for t in topics
        ]))
        return
    lines = []
    for t in topics:
        replication = max((len(p.replicas) for p in t.partitions.values()), default=0)
        lines.append(f"Topic: {t.name}\tPartitionCount: {len(t.partitions)}\tReplicationFactor: {replication}")
        for p in sorted(t.partitions.values(), key=lambda p: p.partition):
            lines.append(
                f"\tTopic: {t.name}\tPartition: {p.partition}\tLeader: {p.leader}\t"
                f"Replicas: {','.join(map(str, p.replicas))}\tIsr: {','.join(map(str, p.isr))}"
            )
    _emit(out, "\n".join(lines))


async def topics_create(args: argparse.Namespace, out: TextIO) -> None:
    configs = dict(_config_pair(c) for c in args.config or ())
    async with _client(args) as client:
        await ops.create_topic(client, args.topic, args.partitions, args.replication_factor, configs)
    _emit(out, render.to_json({"created": args.topic}) if args.json else f"Created topic {args.topic}.")


def _config_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise AdminError(f"bad --config {text!r}: expected KEY=VALUE")
    return key, value


async def topics_delete(args: argparse.Namespace, out: TextIO) -> None:
    async with _client(args) as client:
        await ops.delete_topics(client, args.topic)
    _emit(out, render.to_json({"deleted": args.topic}) if args.json else f"Deleted topics {', '.join(args.topic)}.")


__all__ = [
    "groups_delete",
    "groups_describe",
    "groups_list",
    "health",
    "offsets_export",
    "offsets_reset",
    "topics_create",
    "topics_delete",
    "topics_describe",
    "topics_list",
]


async def transactions_list(args: argparse.Namespace, out: TextIO) -> None:
    async with _client(args) as client:
        listings = await txns.list_transactions(client, args.duration_filter, tuple(args.state or ()),
                                                tuple(args.producer_id or ()))
    _emit(out, render.to_json(render.transactions_json(listings)) if args.json else render.transactions_table(listings))


async def transactions_describe(args: argparse.Namespace, out: TextIO) -> None:
    async with _client(args) as client:
        described = await txns.describe_transaction(client, args.transactional_id)
    now_ms = int(time.time() * 1000)
    _emit(out, render.to_json(render.transaction_json(described, now_ms)) if args.json
          else render.transaction_table(described, now_ms))
