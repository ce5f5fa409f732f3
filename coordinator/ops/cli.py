"""`groupcoord` command line: `serve` runs the daemon; admin and pipeline commands are added by their packages."""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import shutil
import signal
import sys
from typing import Callable, Sequence

from .. import config as config_mod
from .logging import configure_logging
from .startup_errors import EXIT_REFUSED, explain_config_error, explain_start_error


def _refuse(reason: str) -> int:
    """One line on stderr and exit status 2: a start the user can fix, not a crash."""
    print(f"groupcoord: cannot start: {reason}", file=sys.stderr, flush=True)
    return EXIT_REFUSED


GC_GEN0_THRESHOLD = 20_000

GIL_SWITCH_INTERVAL_S = 0.0005
"""How long a thread that wants the GIL waits before it asks the holder to let go (CPython's default: 5 ms).

The storage threads (log writes, fsync/syncfs rounds, fetch reads) each make system calls that release the GIL
and must take it back; the event loop, busy under load, releases it on its own only when it polls. With the
default each take-back waits out the 5 ms, so a storage job of a dozen system calls (a write round over a dozen
partitions) took tens of ms, and every Produce and Fetch waited behind it: franz-go's TestGroupETL (500,000
records, 13 topics of 7-31 partitions; bench.franz_etl, fsync=batch, two alternated pairs) ran 122 and 120 s at
5 ms, 95 and 112 s at 0.5 ms. Only the daemon sets it: an
application embedding the broker owns its interpreter's settings."""


def settle_heap() -> None:
    """Once the broker serves, and again once the warm-up after listening has imported what the common APIs'
    first requests would (apis/warm_up.py: ~15,000 more objects as long-lived as the rest): what start-up
    built (modules, kio's schema classes, compiled codecs) lives as long as the process, so it is moved out of
    the collector's sight (``gc.freeze``), and the youngest
    generation is collected every 20,000 allocations instead of 700. Requests allocate short-lived
    objects that reference counting frees; with the defaults the collector ran every few dozen requests
    and its older-generation passes walked the whole start-up heap (a quarter of a Heartbeat's time in
    bench/hotpath_bench.py). Cycles are still collected, just in fewer, cheaper passes."""
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GC_GEN0_THRESHOLD, gen1, gen2)


def keep_test_libraries_out() -> None:
    """The command line never imports hypothesis. kio imports it whenever it is installed (a test or dev
    environment), only to register strategies for its types: ~150-200 ms of a daemon's ~500-700 ms start-up.
    Marking it absent in ``sys.modules`` is Python's documented way to make an import fail, and kio falls
    back to not registering them. Done by ``main`` before anything imports kio (this module imports the
    broker only inside ``_serve``), for the console script and ``python -m groupcoord`` alike, and never
    in a process that already imported hypothesis or kio (pytest, an application embedding the broker)."""
    if "hypothesis" not in sys.modules and "kio" not in sys.modules:
        sys.modules["hypothesis"] = None  # type: ignore[assignment]


def _serve(ns: argparse.Namespace) -> int:
    """The daemon. The cyclic collector is off from here until the broker is ready: start-up imports some
    500 modules and builds ~200 dataclasses, all of it living as long as the process, and the collector's
    ~100 passes over that heap cost 12-37 ms of a ~300 ms start-up (more when its older-generation passes
    happen to fall in it: one source of the start-up's spread). The coordinator partitions' load already
    ran with it off; ``settle_heap`` then collects and freezes what start-up built, and it comes back on."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _serve_with_collector_off(ns, was_enabled)
    finally:
        if was_enabled:
            gc.enable()


def _serve_with_collector_off(ns: argparse.Namespace, collector_was_enabled: bool) -> int:
    from ..apis import warm_up
    from ..broker import Broker, new_event_loop
    try:
        cfg = config_mod.from_args(ns)
    except Exception as exc:
        reason = explain_config_error(exc)
        if reason is None:
            raise
        return _refuse(reason)
    configure_logging(cfg.log_level, cfg.log_format)
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    loop = new_event_loop()
    asyncio.set_event_loop(loop)
    broker = Broker(cfg)
    stop = asyncio.Event()
    started = False
    warming: list[asyncio.Task[None]] = []

    def serving() -> None:
        # Said as soon as every API answers; the coordinator partitions load behind it (their groups answer
        # COORDINATOR_LOAD_IN_PROGRESS meanwhile, and clients retry, as with Kafka), then `ready` is said.
        # A stop asked for from here on waits for the load to finish, then stops cleanly.
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        print(f"listening on {broker.bootstrap_servers}", flush=True)
        for listener in broker.listeners:
            print(f"listener {listener.name} on {listener.advertised_host}:{listener.advertised_port}", flush=True)
        # What the common APIs' first requests would import, imported now, a step per loop turn (apis/warm_up.py)
        warm = warm_up.start()[1]
        warm.add_done_callback(warmed)
        warming.append(warm)

    def warmed(task: asyncio.Task[None]) -> None:
        # Its modules join start-up's frozen heap; a warm-up done before `ready` is frozen by that settle_heap,
        # a cancelled one (the daemon stopping) is left as it is.
        if started and not task.cancelled():
            settle_heap()

    async def main() -> None:
        nonlocal started
        try:
            await broker.start(on_serving=serving)
            started = True
            settle_heap()
            if collector_was_enabled:
                gc.enable()
            print(f"ready: coordinator partitions loaded in {broker.startup_seconds:.3f} s", flush=True)
            await stop.wait()
        finally:
            for task in warming:  # stopped at a step's boundary, whether the start failed or the daemon stops
                task.cancel()
            await asyncio.gather(*warming, return_exceptions=True)
        await broker.stop()

    try:
        loop.run_until_complete(main())
    except Exception as exc:
        reason = None if started else explain_start_error(exc, str(cfg.data_path), f"{cfg.listen_host}:{cfg.listen_port}")
        if reason is None:
            raise
        return _refuse(reason)
    finally:
        loop.close()
    return 0


def _version() -> str:
    """The installed distribution's version (pyproject's), as pip reports it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("groupcoord")
    except PackageNotFoundError:
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """``--version``: the version is looked up only when asked (importlib.metadata costs start-up time)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"groupcoord {_version()}")  # to stdout, as argparse's own version action
        parser.exit()


def _help_formatter() -> Callable[..., argparse.HelpFormatter]:
    """argparse's own HelpFormatter at the width it would take (the terminal's, less 2), asked for once: argparse
    makes a formatter for every option added, only to check the option's metavar, and each asked the terminal its
    size (two environment look-ups and an ioctl that fails off a terminal: ~4 M instructions of the daemon's
    start-up for serve's ~130 options). Help, usage and errors are formatted as before."""
    return functools.partial(argparse.HelpFormatter, width=shutil.get_terminal_size().columns - 2)


def build_parser(serve_only: bool = False) -> argparse.ArgumentParser:
    """``serve_only``: the daemon's start-up does not import the admin, log and pipeline commands."""
    formatter = _help_formatter()
    parser = argparse.ArgumentParser(prog="groupcoord", description=__doc__, formatter_class=formatter)
    parser.add_argument("--version", action=_VersionAction, help="print the installed version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the broker daemon", description="Run the broker daemon.",
                           formatter_class=formatter)
    config_mod.add_arguments(serve)
    serve.set_defaults(func=_serve)
    if not serve_only:
        _add_optional_commands(sub)
    return parser


def _add_optional_commands(sub: argparse._SubParsersAction) -> None:
    """Admin, log maintenance and pipeline commands live with their code; each adds its own sub-commands."""
    from ..admin.cli import add_admin_commands
    from .log_cli import add_log_commands

    add_admin_commands(sub)
    add_log_commands(sub)
    try:
        from groupcoord.pipeline.cli import add_pipeline_command
    except ImportError as exc:  # pyspark is an optional extra
        note = str(exc)
        p = sub.add_parser("pipeline", help="offsets analytics on PySpark (needs the 'pipeline' extra)")
        p.set_defaults(func=lambda ns: _missing_pipeline(note))
    else:
        add_pipeline_command(sub)


def _missing_pipeline(note: str) -> int:
    print(f"the pipeline needs the 'pipeline' extra (pip install 'groupcoord[pipeline]'): {note}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    keep_test_libraries_out()
    args = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(serve_only=args[:1] == ["serve"] and "-h" not in args and "--help" not in args)
    ns = parser.parse_args(args)
    return int(ns.func(ns) or 0)


if __name__ == "__main__":
    sys.exit(main())
