"""The one transition table: what Kafka allows and nothing else."""

import pytest

from groupcoord.coordinator.groups.classic.state import GroupState, IllegalStateTransition, check_transition, parse_state

S = GroupState


@pytest.mark.parametrize(
    "old, new",
    [(S.EMPTY, S.PREPARING_REBALANCE), (S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE), (S.COMPLETING_REBALANCE, S.STABLE),
     (S.STABLE, S.PREPARING_REBALANCE), (S.COMPLETING_REBALANCE, S.PREPARING_REBALANCE), (S.PREPARING_REBALANCE, S.EMPTY),
     (S.EMPTY, S.DEAD), (S.STABLE, S.DEAD)],
)
def test_legal_transitions(old, new):
    check_transition(old, new)


@pytest.mark.parametrize("old, new", [(S.EMPTY, S.STABLE), (S.STABLE, S.COMPLETING_REBALANCE), (S.DEAD, S.EMPTY), (S.STABLE, S.EMPTY)])
def test_illegal_transitions_are_bugs(old, new):
    with pytest.raises(IllegalStateTransition):
        check_transition(old, new)


def test_states_are_spelled_as_kafka_spells_them_and_filters_ignore_case():
    assert [s.value for s in S] == ["Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"]
    assert parse_state("stable") is S.STABLE and parse_state("nonsense") is None
