"""The consumer- and share-group records (consumer_share_records) load on first use, whichever way they are
first reached, and offsets_records reads and writes them the same either way. Each case runs in a fresh
interpreter: what is imported is the point."""

from __future__ import annotations

import subprocess
import sys

import pytest

MODULE = "groupcoord.coordinator.groups.consumer_share_records"

PRELUDE = f"""
import sys
from groupcoord.coordinator.groups import offsets_records as o
assert {MODULE!r} not in sys.modules
"""


def _run(body: str) -> None:
    done = subprocess.run([sys.executable, "-c", PRELUDE + body], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("first_use", [
    # the reader meets a record type it does not know yet (a consumer group's metadata, type 3)
    "key = o.decode_key(bytes.fromhex('0003000167'))\nassert type(key).__name__ == 'ConsumerGroupMetadataKey'",
    # a name asked of offsets_records, as the consumer and share group modules and the pipeline ask
    "from groupcoord.coordinator.groups.offsets_records import ShareGroupMetadataKey\nkey = ShareGroupMetadataKey('g')",
    "key = o.ConsumerGroupMetadataKey('g')",
    # the module imported directly: its record types are in the tables all the same
    f"import {MODULE} as m\nkey = m.ShareGroupMetadataKey('g')",
])
def test_first_use_loads_them_and_they_read_and_write_as_before(first_use):
    _run(first_use + f"""
assert {MODULE!r} in sys.modules
assert o.decode_key(o.encode_key(key)) == key
value = o.ShareGroupMetadataValue(3, 7) if type(key).__name__.startswith('Share') else o.ConsumerGroupMetadataValue(3)
assert o.decode_value(key, o.encode_value(value)) == value
assert o.record_type_of(o.ConsumerGroupMemberMetadataKey('g', 'm')) == 5
""")


def test_lower_case_probes_and_unknown_types_do_not_need_them():
    _run(f"""
assert not hasattr(o, 'replay_raw') and not hasattr(o, '_private')
assert {MODULE!r} not in sys.modules
key = o.decode_key(o.encode_key(o.OffsetCommitKey('g', 't', 0)))
assert key == o.OffsetCommitKey('g', 't', 0) and {MODULE!r} not in sys.modules
unknown = o.decode_key(bytes.fromhex('0009000167'))  # type 9: no longer written, skipped as unknown
assert type(unknown) is o.UnknownKey and unknown.record_type == 9
try:
    o.NoSuchRecord
except AttributeError:
    pass
else:
    raise AssertionError('NoSuchRecord')
""")
