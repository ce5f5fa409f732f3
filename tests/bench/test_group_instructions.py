"""bench.group_instructions reads the Ir total of a callgrind dump (its summary line, else its totals line)."""

from __future__ import annotations

import pytest

from bench.group_instructions import total_instructions


def test_the_summary_line_gives_the_total(tmp_path):
    dump = tmp_path / "callgrind.out.1.1"
    dump.write_text("version: 1\ncreator: callgrind-3.18.1\nevents: Ir\nfn=main\n3 120\nsummary: 972639712\n"
                    "totals: 1002448096\n")
    assert total_instructions(str(dump)) == 972639712


def test_the_totals_line_when_there_is_no_summary(tmp_path):
    dump = tmp_path / "callgrind.out.1.1"
    dump.write_text("events: Ir\nfn=main\n3 120\ntotals: 81541699\n")
    assert total_instructions(str(dump)) == 81541699


def test_a_file_that_is_not_a_dump_is_refused(tmp_path):
    dump = tmp_path / "notes.txt"
    dump.write_text("nothing here\n")
    with pytest.raises(ValueError):
        total_instructions(str(dump))
