"""Operators type times as epoch milliseconds or ISO-8601; both must mean the same instant."""

import pytest

from groupcoord.pipeline.timeparse import format_instant, parse_instant


def test_epoch_milliseconds_are_taken_as_is():
    assert parse_instant("1700000000000") == 1_700_000_000_000


def test_iso_with_zulu_and_with_offset_name_the_same_instant():
    assert parse_instant("2023-11-14T22:13:20Z") == 1_700_000_000_000
    assert parse_instant("2023-11-14T23:13:20+01:00") == 1_700_000_000_000


def test_iso_without_zone_is_utc_whatever_the_machine_zone():
    assert parse_instant("2023-11-14T22:13:20.250") == 1_700_000_000_250


def test_round_trip_through_the_report_format():
    assert parse_instant(format_instant(1_700_000_000_123)) == 1_700_000_000_123


def test_nonsense_is_rejected_with_the_input_in_the_message():
    with pytest.raises(ValueError, match="yesterday"):
        parse_instant("yesterday")
