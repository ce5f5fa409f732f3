"""What the shard binds once for its hot path: whether its logger writes INFO (the classic group's state
changes and member events are built only then; a bound structlog logger keeps its level), and its timer's
next deadline (bound again when a load makes a new timer)."""

import logging

import structlog

from groupcoord.coordinator.groups.classic.group import ClassicGroup
from groupcoord.coordinator.groups.classic.state import EMPTY, PREPARING_REBALANCE
from groupcoord.coordinator.groups.observer import ObserverAdapter
from groupcoord.coordinator.groups.shard_state import ShardState


class Recording:
    """A logger without ``is_enabled_for``: taken as writing every level."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict]] = []

    def info(self, event: str, **fields) -> None:
        self.events.append((event, fields))


def state_with(log) -> ShardState:
    return ShardState(partition=0, config=None, topics=None, observer=ObserverAdapter(None), log=log,
                      new_member_id=lambda prefix: f"{prefix}-1")


def test_a_logger_that_writes_info_gets_every_event():
    log = Recording()
    state = state_with(log)
    assert state.info_logged
    group = ClassicGroup("g")
    state.on_transition(group, EMPTY, PREPARING_REBALANCE, "why")
    state.log_member(group, "m-1", "joined", "new member")
    assert [e for e, _ in log.events] == ["group state change", "member joined"]
    assert log.events[0][1]["old"] == "Empty" and log.events[0][1]["new"] == "PreparingRebalance"


def test_a_logger_filtering_info_out_is_not_called():
    quiet = structlog.wrap_logger(Recording(), wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    assert not state_with(quiet).info_logged
    loud = structlog.wrap_logger(Recording(), wrapper_class=structlog.make_filtering_bound_logger(logging.INFO))
    assert state_with(loud).info_logged
    silent = Recording()
    state = state_with(silent)
    state.info_logged = False  # what a WARNING logger gives: nothing is built or called
    group = ClassicGroup("g")
    state.on_transition(group, EMPTY, PREPARING_REBALANCE, "why")
    state.log_member(group, "m-1", "joined", "new member")
    assert silent.events == []


def test_the_shards_next_deadline_follows_the_timer_a_load_makes():
    """GroupShard.next_deadline is its timer's method, bound again when a load replaces the timer."""
    from groupcoord.coordinator.config import BrokerConfig
    from groupcoord.coordinator.groups.runtime.effects import Effects
    from groupcoord.coordinator.groups.shard import GroupShard

    shard = GroupShard(0, BrokerConfig())
    assert shard.next_deadline() is None
    shard.state.timer.schedule(("k",), 1_000, lambda state, now: Effects())
    assert shard.next_deadline() == 1_000
    shard.begin_load()
    assert shard.next_deadline() is None  # the new timer's, empty
    shard.state.timer.schedule(("k",), 2_000, lambda state, now: Effects())
    assert shard.next_deadline() == 2_000
