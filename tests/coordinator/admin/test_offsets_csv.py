"""The offsets CSV round trip between `offsets export` and `offsets reset --from-file`."""

from __future__ import annotations

import io

import pytest

from groupcoord.coordinator.admin.client import AdminError
from groupcoord.coordinator.admin.model import CommittedOffset
from groupcoord.coordinator.admin.offsets_csv import CSV_HEADER, read_offsets_csv, write_offsets_csv


def test_export_writes_the_snapshot_header_and_sorted_rows():
    out = io.StringIO()
    write_offsets_csv("g", [CommittedOffset("b", 0, 5, 3, "m"), CommittedOffset("a", 1, 7, commit_timestamp=1700)], out)
    assert out.getvalue().splitlines() == [
        ",".join(CSV_HEADER),
        "g,a,1,7,-1,,1700",
        "g,b,0,5,3,m,",
    ]


def test_an_exported_file_reads_back_as_a_reset_plan_for_its_group():
    out = io.StringIO()
    write_offsets_csv("g", [CommittedOffset("a", 0, 7), CommittedOffset("a", 1, 9)], out)
    text = out.getvalue() + "other,a,0,1,-1,,\n"
    assert read_offsets_csv(text, "g") == {("a", 0): 7, ("a", 1): 9}


def test_kafka_style_headerless_plans_are_accepted():
    assert read_offsets_csv("a,0,7\na,1,9\n", "g") == {("a", 0): 7, ("a", 1): 9}
    assert read_offsets_csv("g,a,0,7\nh,a,0,1\n", "g") == {("a", 0): 7}


def test_unusable_files_are_refused_with_a_reason():
    with pytest.raises(AdminError, match="empty"):
        read_offsets_csv("\n", "g")
    with pytest.raises(AdminError, match="no offsets for group 'g'"):
        read_offsets_csv("h,a,0,7\n", "g")
    with pytest.raises(AdminError, match="bad row 1"):
        read_offsets_csv("group,topic,partition,offset\ng,a,zero,7\n", "g")
    with pytest.raises(AdminError, match="lacks columns"):
        read_offsets_csv("group,topic,offset\ng,a,7\n", "g")
