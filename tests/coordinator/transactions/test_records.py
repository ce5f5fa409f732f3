"""The __transaction_state codec: Kafka's TransactionLogKey v0 and TransactionLogValue v0/v1, byte for byte."""

import struct

import pytest

from groupcoord.coordinator.transactions.records import (
    TransactionLogKey,
    TransactionLogValue,
    TransactionRecordError,
    UnknownTransactionKey,
    decode_key,
    decode_record,
    decode_value,
    encode_key,
    encode_value,
)

VALUE = TransactionLogValue(1000, 3, 60000, 1, (("orders", (0, 2)), ("__consumer_offsets", (17,))),
                            1_700_000_000_123, 1_700_000_000_000)


def test_the_key_is_version_0_and_a_java_string():
    assert encode_key(TransactionLogKey("tx")) == b"\x00\x00\x00\x02tx"
    assert decode_key(b"\x00\x00\x00\x02tx") == TransactionLogKey("tx")


def test_a_key_of_an_unknown_version_is_reported_not_parsed():
    assert decode_record(b"\x00\x07junk", b"\x00\x00") == (UnknownTransactionKey(7), None)


def test_value_v0_layout():
    raw = encode_value(VALUE)
    expected = (struct.pack(">hqhib", 0, 1000, 3, 60000, 1) + struct.pack(">i", 2)
                + struct.pack(">h", 6) + b"orders" + struct.pack(">iii", 2, 0, 2)
                + struct.pack(">h", 18) + b"__consumer_offsets" + struct.pack(">ii", 1, 17)
                + struct.pack(">qq", 1_700_000_000_123, 1_700_000_000_000))
    assert raw == expected
    assert decode_value(raw) == VALUE


def test_an_empty_transaction_writes_a_null_partition_array():
    empty = TransactionLogValue(1, 0, 60000, 0, None, 5, -1)
    assert encode_value(empty)[2 + 8 + 2 + 4 + 1:][:4] == b"\xff\xff\xff\xff"
    assert decode_value(encode_value(empty)) == empty


def test_value_v1_is_flexible_with_tagged_fields():
    v1 = TransactionLogValue(1000, 3, 60000, 4, (), 10, 9, previous_producer_id=999, next_producer_id=-1,
                             client_transaction_version=2, version=1)
    raw = encode_value(v1)
    assert raw[:2] == b"\x00\x01"
    assert raw.endswith(b"\x02" + b"\x00\x08" + struct.pack(">q", 999) + b"\x02\x02" + struct.pack(">h", 2))
    decoded = decode_value(raw)
    assert decoded == v1 and decoded.version == 1


def test_a_tombstone_is_none():
    assert encode_value(None) is None and decode_value(None) is None


@pytest.mark.parametrize("cut", [3, 12, 20, 40])
def test_a_truncated_value_is_an_error_not_a_crash(cut):
    with pytest.raises((TransactionRecordError, ValueError)):
        decode_value(encode_value(VALUE)[:cut])


def test_a_lying_array_count_is_refused():
    raw = bytearray(encode_value(VALUE))
    raw[17:21] = struct.pack(">i", 1_000_000)
    with pytest.raises(TransactionRecordError):
        decode_value(bytes(raw))
