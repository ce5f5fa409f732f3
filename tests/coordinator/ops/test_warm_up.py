"""The daemon's background warm-up (coordinator/apis/warm_up.py): once `groupcoord serve` listens, it imports
what the common APIs' first requests would, a step at a time, and requests are answered meanwhile."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

from groupcoord.coordinator.apis import warm_up

# A fresh daemon whose warm-up is slowed down (each step waits for 30 ms of idle loop), with a client thread
# that sends ApiVersions v0 (hand-encoded, so the test's own process imports nothing of kio) every 20 ms
# from `listening on` until the warm-up has finished; the daemon stops itself then and reports.
SCENARIO = r"""
import builtins, json, os, signal, socket, struct, sys, threading, time
from groupcoord.coordinator.apis import warm_up
from groupcoord.coordinator.ops import cli

real_start, real_print = warm_up.start, print
seen = {"answers": []}

def slowed_start(idle_s=warm_up.IDLE_S):
    warm, task = real_start(idle_s=0.03)
    seen["warm"] = warm
    task.add_done_callback(lambda _: os.kill(os.getpid(), signal.SIGTERM))
    return warm, task

def client(port):
    sock = socket.create_connection(("127.0.0.1", port))
    correlation = 0
    while True:
        warm = seen.get("warm")
        if warm is not None and warm.finished.is_set():
            break
        correlation += 1
        body = struct.pack(">hhih", 18, 0, correlation, 4) + b"test"  # ApiVersions v0, client id "test"
        sock.sendall(struct.pack(">i", len(body)) + body)
        size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
        answer = sock.recv(size, socket.MSG_WAITALL)
        progress = (warm.done, warm.total) if warm is not None else (0, -1)
        seen["answers"].append((struct.unpack_from(">i", answer)[0] == correlation, *progress))
        time.sleep(0.02)
    sock.close()

def spy(*args, **kwargs):
    text = str(args[0]) if args else ""
    if text.startswith("ready:"):
        import gc
        seen["frozen_at_ready"] = gc.get_freeze_count()
    if text.startswith("listening on") and "at_listening" not in seen:
        seen["at_listening"] = sorted(sys.modules)
        port = int(text.rsplit(":", 1)[1])
        threading.Thread(target=client, args=(port,), daemon=True).start()
    return real_print(*args, **kwargs)

warm_up.start = slowed_start
builtins.print = spy
status = cli.main(["serve", "--listen", "127.0.0.1:0", "--metrics-port", "0", "--data-dir", sys.argv[1]])
warm = seen["warm"]
real_print("REPORT " + json.dumps({
    "status": status, "done": warm.done, "total": warm.total, "answers": seen["answers"],
    "at_listening": seen["at_listening"], "after": sorted(sys.modules),
    "frozen_at_ready": seen.get("frozen_at_ready"), "frozen_after": __import__("gc").get_freeze_count()}))
"""


def _expected_modules() -> set[str]:
    """What the warm-up imports: each listed API's handler module, and kio's request and response schema
    modules of each listed version; the consumer protocol's schemas; the consumer and share group records;
    hashlib; prometheus-client for the first metrics scrape."""
    from kio.schema.index import api_key_map

    expected = {"groupcoord.coordinator.groups.consumer_share_records",
                "kio.schema.consumer_protocol_subscription.v3.data", "hashlib", *warm_up.METRICS_EXPOSITION}
    for name, key, versions in warm_up.WARM_UP:
        expected.add(f"groupcoord.coordinator.apis.{name}")
        for version in versions:
            expected.add(f"kio.schema.{api_key_map[key]}.v{version}.request")
            expected.add(f"kio.schema.{api_key_map[key]}.v{version}.response")
    return expected


def test_after_listening_the_daemon_imports_the_listed_modules_and_answers_meanwhile(tmp_path):
    done = subprocess.run([sys.executable, "-c", SCENARIO, str(tmp_path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("REPORT ")]
    report = json.loads(line.removeprefix("REPORT "))
    assert report["status"] == 0 and report["done"] == report["total"] > 20

    expected = _expected_modules()
    lazy_handlers = {m for m in expected if m.startswith("groupcoord.coordinator.apis.")} - {
        "groupcoord.coordinator.apis.join_group", "groupcoord.coordinator.apis.sync_group"}  # eager: they bind codecs
    assert lazy_handlers and not lazy_handlers & set(report["at_listening"])  # not imported to listen
    assert "kio.schema.fetch.v16.request" not in report["at_listening"]
    assert "prometheus_client" not in report["at_listening"]
    assert expected <= set(report["after"]), sorted(expected - set(report["after"]))

    # what the warm-up imported is frozen with the rest of start-up's heap once it is done (cli.settle_heap)
    assert report["frozen_at_ready"] is not None and report["frozen_after"] > report["frozen_at_ready"]

    answers = report["answers"]
    assert answers and all(correct for correct, _, _ in answers)  # every request answered, in order
    assert any(0 < steps_done < total for _, steps_done, total in answers), answers  # some while warming


async def test_a_failing_step_is_logged_and_the_others_still_run():
    ran = []

    def broken():
        raise ImportError("no such module")

    warm = warm_up.WarmUp([("first", lambda: ran.append(1)), ("broken", broken), ("last", lambda: ran.append(3))],
                          idle_s=0.001)
    await warm.run()
    assert ran == [1, 3] and warm.done == warm.total == 3 and warm.finished.is_set()


async def test_a_step_waits_while_the_loop_is_busy():
    """A step runs only after the loop has been idle for ``idle_s``: while something keeps it busy, none."""
    ran = []
    warm = warm_up.WarmUp([("only", lambda: ran.append(1))], idle_s=0.005)
    task = asyncio.get_running_loop().create_task(warm.run())
    loop = asyncio.get_running_loop()
    until = loop.time() + 0.1
    while loop.time() < until:  # busy: each turn blocks the loop for 10 ms, longer than the idle wait allows
        await asyncio.sleep(0)
        deadline = loop.time() + 0.01
        while loop.time() < deadline:
            pass
    assert ran == []
    await asyncio.wait_for(task, 5)
    assert ran == [1]


def test_every_warmed_version_is_served():
    """WARM_UP lists versions the broker serves (registry.API_TABLE), so no step imports something useless."""
    from groupcoord.coordinator.apis.registry import API_TABLE

    served = {name: (key, low, high) for name, key, low, high in API_TABLE}
    for name, key, versions in warm_up.WARM_UP:
        assert served[name][0] == key
        assert all(served[name][1] <= v <= served[name][2] for v in versions), (name, versions)


async def test_a_loop_that_is_never_idle_leaves_the_rest_to_first_use():
    """Past ``give_up_s`` without an idle moment the warm-up ends (finished, the rest not run): it does not wake a
    busy daemon's loop for ever."""
    ran = []
    warm = warm_up.WarmUp([("first", lambda: ran.append(1)), ("second", lambda: ran.append(2))], idle_s=0.005,
                          give_up_s=0.1)
    loop = asyncio.get_running_loop()
    task = loop.create_task(warm.run())
    until = loop.time() + 0.3
    while loop.time() < until and not task.done():  # busy throughout: 10 ms blocks, longer than the idle wait
        await asyncio.sleep(0)
        deadline = loop.time() + 0.01
        while loop.time() < deadline:
            pass
    assert task.done() and warm.finished.is_set()
    assert ran == [] and warm.done == 0 < warm.total
