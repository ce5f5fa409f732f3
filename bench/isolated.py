"""Run one figure's measurement in a fresh interpreter of its own, so the load it drives is not slowed by the
state the harness has gathered.

Why: several figures drive their load from Python in the measuring process (the group benches' members, the
confluent-kafka consumer of the fetch row, the KIP-848 members). In `bench.compare` that process has already
run other figures, and whatever they left on its heap makes every cyclic collection slower. The fetch row is
bounded by its consumer's core, so it showed this most: the same consumer read 100 MB three times slower with
2 million live objects beside it (118 against 370-395 MB/s on 11-29), and the faster broker lost most of its
lead. A fresh spawned process per measurement gives every broker and every run the same, clean client.

The child inherits the parent's CPU affinity (the client cores), runs ``FIGURES[name].measure`` and sends its
figures back through a pipe; an exception in it is raised here with its traceback's text. The child is not a
daemon, so the figures that start processes of their own (ctp's members, loadgen's workers) still can.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import sys
import traceback
from typing import Any

SPAWN = mp.get_context("spawn")
KILL_GRACE_S = 30.0


class FigureFailed(RuntimeError):
    """The figure raised in its own process; the message carries the child's traceback."""


def _child(conn: Any, name: str, args: tuple) -> None:
    from .compare_figures import FIGURES

    try:
        with contextlib.redirect_stdout(sys.stderr):  # the benches' own progress lines
            values = FIGURES[name].measure(*args)
    except BaseException as exc:  # every failure goes back to the harness, which records it and goes on
        conn.send(("error", f"{type(exc).__name__}: {exc}", traceback.format_exc()))
    else:
        conn.send(("ok", values, ""))
    finally:
        conn.close()


def measure(name: str, bootstrap: str, sizes: Any, shared: dict, client_cores: list[int] | None,
            limit_s: float) -> dict[str, float]:
    """``FIGURES[name].measure(bootstrap, sizes, shared, client_cores)`` in a fresh process, bounded by
    ``limit_s`` (the child is killed past it)."""
    receive, send = SPAWN.Pipe(duplex=False)
    child = SPAWN.Process(target=_child, args=(send, name, (bootstrap, sizes, shared, client_cores)),
                          name=f"figure-{name}")
    child.start()
    send.close()
    try:
        if not receive.poll(limit_s):
            raise TimeoutError(f"figure {name} gave no result within {limit_s:.0f} s")
        status, payload, trace = receive.recv()
    except EOFError:
        child.join(KILL_GRACE_S)
        raise FigureFailed(f"figure {name}'s process ended without a result (exit code {child.exitcode})") from None
    finally:
        receive.close()
        child.join(KILL_GRACE_S)
        if child.is_alive():
            child.kill()
            child.join()
    if status != "ok":
        raise FigureFailed(f"{payload}\n--- in the figure's process:\n{trace}")
    return payload
