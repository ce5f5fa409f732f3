"""The command line's help, usage and errors are what argparse's own HelpFormatter makes at the terminal's width
(cli.py hands argparse the formatter with the width asked for once, not once per option)."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from groupcoord.coordinator.ops import cli


def _outputs(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as done:
        cli.build_parser(serve_only=argv[:1] == ["serve"] and "--help" not in argv).parse_args(argv)
    return done.value.code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("columns", ["40", "80", "132"])
@pytest.mark.parametrize("argv", [["--help"], ["serve", "--help"], ["serve", "--fsync"], [], ["groups", "--help"]])
def test_help_usage_and_errors_as_argparse_makes_them(monkeypatch, columns: str, argv: list[str]) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    ours = _outputs(argv)
    monkeypatch.setattr(cli, "_help_formatter", lambda: argparse.HelpFormatter)
    assert ours == _outputs(argv)
    assert ours[1] or ours[2]
