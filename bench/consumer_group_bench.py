"""KIP-848 consumer-group figures over real sockets: how long a group of N members (one connection each) takes
from the first ConsumerGroupHeartbeat to a reconciled assignment, and how long it takes to settle again after
a quarter of the members leave.

Each member behaves like a KIP-848 client that reconciles at once: it heartbeats immediately after its
assignment changed (to acknowledge revocations and ask for what is still owned by others) and otherwise every
heartbeat interval the broker asks for, counted from the last heartbeat sent as the Java client counts it.
"Reconciled" means every member is at one epoch, the members' assignments cover every partition exactly once,
and ConsumerGroupDescribe says the group is Stable at that epoch (so members parked by assignment batching do
not count as reconciled).

    python -m bench.consumer_group_bench                        # starts its own groupcoord (fsync=never)
    python -m bench.consumer_group_bench --assignment-interval-ms 0   # target computed in every bumping heartbeat
    python -m bench.consumer_group_bench --java-epoch-rule --unreleased-heartbeat-interval-ms 0  # Kafka's interval
    python -m bench.consumer_group_bench --bootstrap HOST:PORT  # or measures any broker (e.g. Kafka 4.x)
    python -m bench.consumer_group_bench --timeline --runs 5    # where each run's time went (see `timeline`)
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
import uuid
from typing import Any

from .aioclient import AioConnection
from .servers import groupcoord
from .wire_bench import _cores

CONSUMER_GROUP_HEARTBEAT, CONSUMER_GROUP_DESCRIBE, CREATE_TOPICS, METADATA = 68, 69, 19, 3
TIMEOUT_S = 300.0
# The Java consumer's retry.backoff.ms (default 100) and the heartbeat request state's jitter (0.2, Kafka
# 4.3.1's AbstractHeartbeatRequestManager): after a successful answer RequestState.onSuccessfulAttempt sets
# backoffMs = exponentialBackoff.backoff(0), 80-120 ms, and canSendRequest waits that long after the answer.
RETRY_BACKOFF_S, RETRY_BACKOFF_JITTER = 0.1, 0.2


class _Member:
    """One KIP-848 consumer. It heartbeats at once when an answer moved it (a new assignment to acknowledge,
    or a new epoch: then it asks at once for what is still owned by others, as this bench always has; a
    Java consumer waits the interval after an epoch bump that brought no partitions, which
    ``java_epoch_rule`` does instead), and otherwise
    when the heartbeat timer expires, which it keeps as the Java client's heartbeat request manager does:
    reset to the interval when a heartbeat is *sent*, and from the answer only when the answer changed the
    interval (the first one: the Java client starts at 0); never two heartbeats in flight, and a heartbeat on
    the timer never sooner than the retry backoff (`RETRY_BACKOFF_S`) after the last answer, as its
    HeartbeatRequestState.canSendRequest also asks of RequestState (a heartbeat sent at once is not held:
    AbstractHeartbeatRequestManager.poll sends those without asking canSendRequest). The backoff binds only
    when an answer took nearly the whole interval, or when the broker answers with a short interval.

    The timer used to count from each answer. The first joiner, which receives every partition and
    acknowledges at once, had its acknowledgement answered only after the whole join burst, so its next
    heartbeat came a burst later than everyone else's: the group's next target was then computed in some
    other member's heartbeat and every member heartbeating before the first joiner's revocation was
    acknowledged waited a further interval for its partitions (the kip848 figure's 1 s "lost round")."""

    def __init__(self, conn: AioConnection, group: str, topic: str, progress: asyncio.Event,
                 java_epoch_rule: bool = False, retry_backoff_s: float = RETRY_BACKOFF_S) -> None:
        self.conn, self.group, self.topic = conn, group, topic
        # True: a new epoch alone does not bring the next heartbeat forward, only a changed assignment does
        # (the Java client's AbstractMembershipManager: an assignment equal to the current one is not
        # reconciled, so the member does not go to ACKNOWLEDGING and shouldHeartbeatNow() stays false)
        self.java_epoch_rule = java_epoch_rule
        self.retry_backoff_s = retry_backoff_s
        self.member_id = str(uuid.uuid4())
        self.epoch = 0
        self.owned: dict[uuid.UUID, tuple[int, ...]] = {}
        self.interval_s = 0.0  # the Java client's until the first answer
        self.leaving = False
        self.progress = progress  # set after every answer: what `wait_reconciled` waits for
        self._sleeper: asyncio.Future[None] | None = None
        # (sent, answered, member epoch, partitions owned after the answer) per heartbeat, in perf_counter
        # seconds: read only by `timeline` (an append per heartbeat, nothing the figure would notice).
        self.log: list[tuple[float, float, int, int]] = []

    def _body(self, full: bool) -> dict[str, Any]:
        return {"group_id": self.group, "member_id": self.member_id, "member_epoch": self.epoch, "instance_id": None,
                "rack_id": None, "rebalance_timeout": 60000 if full else -1,
                "subscribed_topic_names": [self.topic] if full else None, "subscribed_topic_regex": None,
                "server_assignor": None,
                "topic_partitions": [{"topic_id": t, "partitions": list(ps)} for t, ps in self.owned.items()]}

    async def run(self) -> None:
        full = True
        while not self.leaving:
            sent = time.perf_counter()
            due = sent + self.interval_s  # the timer is reset when the heartbeat is sent
            answer = await self.conn.send(CONSUMER_GROUP_HEARTBEAT, 1, self._body(full))
            answered = time.perf_counter()
            if answer.error_code != 0:
                raise RuntimeError(f"{self.member_id}: error {answer.error_code!r} {answer.error_message}")
            full = False
            interval = answer.heartbeat_interval.total_seconds()
            if interval != self.interval_s:
                self.interval_s, due = interval, answered + interval
            at_once = answer.member_epoch != self.epoch and not self.java_epoch_rule
            self.epoch = answer.member_epoch
            if answer.assignment is not None:
                new = {tp.topic_id: tuple(tp.partitions) for tp in answer.assignment.topic_partitions}
                at_once |= new != self.owned
                self.owned = new
            self.log.append((sent, answered, self.epoch, sum(len(ps) for ps in self.owned.values())))
            self.progress.set()
            if not at_once:
                backoff = self.retry_backoff_s * random.uniform(1 - RETRY_BACKOFF_JITTER, 1 + RETRY_BACKOFF_JITTER)
                await self._sleep(max(due, answered + backoff) - time.perf_counter())

    async def _sleep(self, seconds: float) -> None:
        """Until the next heartbeat is due, or until `stop` (one timer, no polling: a thousand members)."""
        if seconds <= 0 or self.leaving:
            return
        loop = asyncio.get_running_loop()
        sleeper = self._sleeper = loop.create_future()
        timer = loop.call_later(seconds, lambda: sleeper.done() or sleeper.set_result(None))
        try:
            await sleeper
        finally:
            timer.cancel()
            self._sleeper = None

    def stop(self) -> None:
        self.leaving = True
        if self._sleeper is not None and not self._sleeper.done():
            self._sleeper.set_result(None)

    async def leave(self) -> None:
        self.stop()
        self.epoch = -1
        await self.conn.send(CONSUMER_GROUP_HEARTBEAT, 1, self._body(False))


def reconciled(members: list[_Member], partitions: int) -> bool:
    owned = [(t, p) for m in members for t, ps in m.owned.items() for p in ps]
    return (len(owned) == partitions == len(set(owned)) and len({m.epoch for m in members}) == 1)


async def group_stable_at(admin: AioConnection, group: str, epoch: int, count: int) -> bool:
    """The broker's word (ConsumerGroupDescribe): Stable, its target at the group epoch, every member there.

    The members' own view is not enough with assignment batching (Kafka 4.3's default interval): members
    that joined within the interval sit at the old target's epoch with nothing assigned, which looks
    reconciled from the client side while the group is still Assigning."""
    answer = await admin.send(CONSUMER_GROUP_DESCRIBE, 0,
                              {"group_ids": [group], "include_authorized_operations": False})
    g = answer.groups[0]
    return (g.error_code == 0 and g.group_state == "Stable" and g.group_epoch == g.assignment_epoch == epoch
            and len(g.members) == count)


async def _stable(admin: AioConnection, members: list[_Member], checks: list[tuple[float, str]] | None) -> bool:
    asked = time.perf_counter()
    stable = await group_stable_at(admin, members[0].group, members[0].epoch, len(members))
    if checks is not None:
        checks.append((asked, f"describe {'Stable' if stable else 'not yet'} "
                              f"({(time.perf_counter() - asked) * 1000:.0f} ms)"))
    return stable


def timeline(members: list[_Member], t0: float, done: float, checks: list[tuple[float, str]]) -> list[str]:
    """Where the time to reconcile went, from the members' own heartbeats (ms after the first one): the
    spread of the joins and of their answers, when each target epoch first reached a member (the broker
    computed it by then), the revocations and their acknowledgements, when members got their final
    partitions, and the ConsumerGroupDescribe checks. A run that loses a heartbeat interval shows here
    which step it was lost in."""
    def ms(t: float) -> float:
        return (t - t0) * 1000

    def spread(values: list[float]) -> str:
        values = sorted(values)
        pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]  # noqa: E731
        return f"{pick(0):,.0f} / {pick(0.5):,.0f} / {pick(0.9):,.0f} / {values[-1]:,.0f}"

    lines = [f"joins sent (min / p50 / p90 / max ms): {spread([ms(m.log[0][0]) for m in members])}",
             f"joins answered:                         {spread([ms(m.log[0][1]) for m in members])}"]
    first_seen: dict[int, tuple[float, int]] = {}
    for m in members:
        for _, answered, epoch, owned in m.log:
            if epoch not in first_seen or answered < first_seen[epoch][0]:
                first_seen[epoch] = (answered, owned)
    epochs = sorted(first_seen)
    lines.append(f"member epochs seen: {len(epochs)} ({epochs[0]}..{epochs[-1]}); the highest first at "
                 f"{ms(first_seen[epochs[-1]][0]):,.0f} ms" + "".join(
                     f"; epoch {e} first at {ms(first_seen[e][0]):,.0f} ms" for e in epochs[:3] if e != epochs[-1]))
    answered_at, sent_at, first = min(((answered, sent, m) for m in members for sent, answered, epoch, _ in m.log
                                       if epoch == epochs[-1]), key=lambda seen: seen[:2])
    lines.append(f"the first member at epoch {epochs[-1]} sent that heartbeat at {ms(sent_at):,.0f} ms "
                 f"(its join answered at {ms(first.log[0][1]):,.0f} ms)")
    for m in members:
        for i in range(1, len(m.log)):
            before, after = m.log[i - 1], m.log[i]
            if after[3] < before[3]:
                nxt = m.log[i + 1] if i + 1 < len(m.log) else None
                lines.append(f"revocation: {before[3]} -> {after[3]} partitions sent at {ms(after[0]):,.0f}, "
                             f"answered {ms(after[1]):,.0f} ms; acknowledged by the heartbeat answered at "
                             + (f"{ms(nxt[1]):,.0f} ms (epoch {nxt[2]})" if nxt else "-")
                             + f"; this member's heartbeats (sent, answered, epoch, partitions): "
                             + ", ".join(f"({ms(a):,.0f}, {ms(b):,.0f}, {e}, {o})" for a, b, e, o in m.log[:5]))
    final_epoch = members[0].epoch
    finals, waited = [], 0
    for m in members:
        owned = sum(len(ps) for ps in m.owned.values())
        settled = next(i for i in range(len(m.log)) if all(e == final_epoch and o == owned for _, _, e, o in m.log[i:]))
        finals.append(ms(m.log[settled][1]))
        at_epoch = next(i for i, (_, _, e, _) in enumerate(m.log) if e == final_epoch)
        if at_epoch < settled:
            waited += 1
    lines.append(f"members at their final partitions (min / p50 / p90 / max ms): {spread(finals)}; {waited} of "
                 f"{len(members)} reached the final epoch before their partitions were free")
    buckets: dict[int, int] = {}
    for f in finals:
        buckets[int(f // 250)] = buckets.get(int(f // 250), 0) + 1
    lines.append("final partitions per 250 ms: " + ", ".join(f"{b * 250}-: {n}" for b, n in sorted(buckets.items())))
    lines += [f"{ms(at):,.0f} ms: {what}" for at, what in checks]
    lines.append(f"reconciled declared at {ms(done):,.0f} ms")
    return lines


async def wait_reconciled(members: list[_Member], partitions: int, t0: float,
                          admin: AioConnection | None = None, checks: list[tuple[float, str]] | None = None) -> float:
    progress = members[0].progress  # one event every member sets after each answer: no task per member
    while True:
        progress.clear()  # before the checks: an answer that comes during the describe is not missed
        if reconciled(members, partitions) and (admin is None or await _stable(admin, members, checks)):
            return time.perf_counter() - t0
        if time.perf_counter() - t0 > TIMEOUT_S:
            raise RuntimeError(f"not reconciled after {TIMEOUT_S} s")
        try:
            await asyncio.wait_for(progress.wait(), 1.0)
        except asyncio.TimeoutError:
            pass


async def run(bootstrap: str, count: int, partitions: int, show_timeline: bool = False,
              java_epoch_rule: bool = False) -> tuple[float, float]:
    """Prints and returns (seconds to reconcile after the first heartbeat, seconds to settle after a quarter
    of the members left); with ``show_timeline``, where the first of the two went (`timeline`);
    ``java_epoch_rule``: the members heartbeat early only for a changed assignment (`_Member`)."""
    stamp = time.time_ns()
    topic, group = f"kip848-bench-{stamp}", f"kip848-bench-group-{stamp}"
    admin = await AioConnection.open(bootstrap)
    created = await admin.send(CREATE_TOPICS, 7, {"topics": [{"name": topic, "num_partitions": partitions,
                                                              "replication_factor": 1, "assignments": [],
                                                              "configs": []}],
                                                  "timeout": 30000, "validate_only": False})
    assert created.topics[0].error_code == 0, created.topics[0]
    conns = [await AioConnection.open(bootstrap) for _ in range(count)]
    progress = asyncio.Event()
    members = [_Member(c, group, topic, progress, java_epoch_rule) for c in conns]
    t0 = time.perf_counter()
    tasks = [asyncio.create_task(m.run()) for m in members]
    try:
        checks: list[tuple[float, str]] = []
        joined = await wait_reconciled(members, partitions, t0, admin, checks)
        if show_timeline:
            print("\n".join(timeline(members, t0, t0 + joined, checks)))
        print(f"{count:,} members, {partitions:,} partitions: reconciled {joined * 1000:,.0f} ms after the first "
              f"heartbeat (group epoch {members[0].epoch})")
        leaving, staying = members[: count // 4], members[count // 4:]
        t1 = time.perf_counter()
        await asyncio.gather(*(m.leave() for m in leaving))
        settled = await wait_reconciled(staying, partitions, t1, admin)
        print(f"{len(leaving):,} members leave: the other {len(staying):,} reconciled {settled * 1000:,.0f} ms later")
        return joined, settled
    finally:
        for m in members:
            m.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
        for c in conns + [admin]:
            await c.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.consumer_group_bench")
    parser.add_argument("--bootstrap", default=None)
    parser.add_argument("--members", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--heartbeat-interval-ms", type=int, default=1000,
                        help="group.consumer.heartbeat.interval.ms of the broker this bench starts")
    parser.add_argument("--assignment-interval-ms", type=int, default=None,
                        help="group.consumer.assignment.interval.ms of the broker this bench starts (default: "
                             "the broker's, 1000 as in Kafka 4.3; 0 assigns in the heartbeat that bumps the epoch)")
    parser.add_argument("--unreleased-heartbeat-interval-ms", type=int, default=None,
                        help="group.consumer.unreleased.heartbeat.interval.ms of the broker this bench starts "
                             "(default: the broker's, 100; 0 tells waiting members the group's interval, as Kafka)")
    parser.add_argument("--timeline", action="store_true",
                        help="print where the time to reconcile went (joins, target epochs, revocations, describes)")
    parser.add_argument("--runs", type=int, default=1, help="runs, each against a fresh broker")
    parser.add_argument("--java-epoch-rule", action="store_true",
                        help="members heartbeat early only when their assignment changed, never for a new epoch "
                             "alone, as the Java client")
    ns = parser.parse_args(argv)
    if ns.bootstrap:
        asyncio.run(run(ns.bootstrap, ns.members, ns.partitions, ns.timeline, ns.java_epoch_rule))
        return
    server_cores, _ = _cores()
    settings = {"group_consumer_heartbeat_interval_ms": ns.heartbeat_interval_ms}
    if ns.assignment_interval_ms is not None:
        settings["group_consumer_assignment_interval_ms"] = ns.assignment_interval_ms
    if ns.unreleased_heartbeat_interval_ms is not None:
        settings["group_consumer_unreleased_heartbeat_interval_ms"] = ns.unreleased_heartbeat_interval_ms
    for _ in range(ns.runs):
        with groupcoord(server_cores, fsync="never", **settings) as (address, _):
            print("groupcoord, " + ", ".join(f"{k.replace('_', '.')}={v}" for k, v in settings.items()))
            asyncio.run(run(address, ns.members, ns.partitions, ns.timeline, ns.java_epoch_rule))


if __name__ == "__main__":
    main()
