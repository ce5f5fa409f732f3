"""`groupcoord` command line: `serve` runs the daemon; admin and pipeline commands are added by their packages."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from typing import Sequence

from .. import config as config_mod
from ..broker import Broker, new_event_loop
from .logging import configure_logging
from .startup_errors import EXIT_REFUSED, explain_config_error, explain_start_error


def _refuse(reason: str) -> int:
    """One line on stderr and exit status 2: a start the user can fix, not a crash."""
    print(f"groupcoord: cannot start: {reason}", file=sys.stderr, flush=True)
    return EXIT_REFUSED


def _serve(ns: argparse.Namespace) -> int:
    try:
        cfg = config_mod.from_args(ns)
    except Exception as exc:
        reason = explain_config_error(exc)
        if reason is None:
            raise
        return _refuse(reason)
    configure_logging(cfg.log_level, cfg.log_format)
    loop = new_event_loop()
    asyncio.set_event_loop(loop)
    broker = Broker(cfg)
    stop = asyncio.Event()
    started = False

    async def main() -> None:
        nonlocal started
        await broker.start()
        started = True
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        print(f"listening on {broker.bootstrap_servers}", flush=True)
        await stop.wait()
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="groupcoord", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the broker daemon", description="Run the broker daemon.")
    config_mod.add_arguments(serve)
    serve.set_defaults(func=_serve)
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
    parser = build_parser()
    ns = parser.parse_args(argv)
    return int(ns.func(ns) or 0)


if __name__ == "__main__":
    sys.exit(main())
