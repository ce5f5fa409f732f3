"""Idempotent producer rules, as a retrying librdkafka/Java producer exercises them."""
from groupcoord.coordinator.dataplane.producer_state import (INT32_MAX, PartitionProducerState, SequenceVerdict,
                                                  increment_sequence)

PID = 1000


def appended(state, epoch, first_seq, count, first_offset):
    check = state.check(PID, epoch, first_seq, count)
    assert check.verdict is SequenceVerdict.APPEND, check
    state.record(PID, epoch, first_seq, count, first_offset, first_offset + count - 1, 0)


def test_a_new_producer_may_start_at_sequence_zero():
    state = PartitionProducerState()
    appended(state, 0, 0, 10, 0)
    assert state.entry(PID).last_seq == 9


def test_the_next_in_order_batch_is_appended():
    state = PartitionProducerState()
    appended(state, 0, 0, 10, 0)
    appended(state, 0, 10, 5, 10)
    assert state.entry(PID).last_seq == 14


def test_a_retried_batch_is_recognised_with_its_original_offset():
    state = PartitionProducerState()
    appended(state, 0, 0, 10, 100)
    appended(state, 0, 10, 10, 110)
    check = state.check(PID, 0, 0, 10)
    assert check.verdict is SequenceVerdict.DUPLICATE
    assert check.duplicate_of.first_offset == 100


def test_only_the_last_five_batches_are_remembered():
    state = PartitionProducerState()
    for i in range(6):
        appended(state, 0, i * 2, 2, i * 2)
    assert state.check(PID, 0, 2, 2).verdict is SequenceVerdict.DUPLICATE
    assert state.check(PID, 0, 0, 2).verdict is SequenceVerdict.OUT_OF_ORDER_SEQUENCE


def test_a_gap_in_sequences_is_out_of_order():
    state = PartitionProducerState()
    appended(state, 0, 0, 10, 0)
    check = state.check(PID, 0, 11, 1)
    assert check.verdict is SequenceVerdict.OUT_OF_ORDER_SEQUENCE
    assert "11" in check.message


def test_an_older_epoch_is_fenced():
    state = PartitionProducerState()
    appended(state, 3, 0, 1, 0)
    assert state.check(PID, 2, 1, 1).verdict is SequenceVerdict.INVALID_PRODUCER_EPOCH


def test_a_bumped_epoch_must_restart_at_sequence_zero():
    state = PartitionProducerState()
    appended(state, 0, 0, 5, 0)
    assert state.check(PID, 1, 5, 1).verdict is SequenceVerdict.OUT_OF_ORDER_SEQUENCE
    appended(state, 1, 0, 1, 5)
    assert state.entry(PID).epoch == 1


def test_a_producer_without_state_is_accepted_at_any_sequence():
    """Kafka accepts unknown producers (state lost to retention) at any sequence."""
    state = PartitionProducerState()
    appended(state, 0, 42, 1, 0)


def test_sequences_wrap_after_int32_max():
    state = PartitionProducerState()
    appended(state, 0, INT32_MAX - 1, 2, 0)
    assert state.entry(PID).last_seq == INT32_MAX
    appended(state, 0, 0, 1, 2)
    assert increment_sequence(INT32_MAX, 1) == 0


def test_batches_without_producer_id_skip_all_checks():
    state = PartitionProducerState()
    assert state.check(-1, -1, -1, 3).verdict is SequenceVerdict.APPEND
    state.record(-1, -1, -1, 3, 0, 2, 0)
    assert len(state) == 0
