"""Tables and JSON documents as an operator reads them."""

from __future__ import annotations

import json

from groupcoord.coordinator.admin.model import GroupDescription, GroupListing, LagRow, MemberDescription
from groupcoord.coordinator.admin.render import (
    groups_table,
    lag_json,
    lag_table,
    members_table,
    reset_json,
    reset_table,
    state_json,
    state_table,
    table,
    to_json,
)
from groupcoord.coordinator.admin.reset_plan import PlannedReset

ROWS = [
    LagRow("payments", "orders", 0, 4, 10, 6, "consumer-1-abc", "/10.0.0.1", "consumer-1"),
    LagRow("payments", "orders", 1, None, 20, None, None, None, None),
]
GROUP = GroupDescription(
    "payments", "Stable", "consumer", "range",
    (MemberDescription("consumer-1-abc", None, "consumer-1", "/10.0.0.1", (("orders", 0), ("orders", 1))),),
    (1, "broker", 9092),
)


def test_columns_are_as_wide_as_their_widest_cell_and_unknowns_are_dashes():
    assert table(("A", "LONG-HEADER"), [("abcd", None)]).splitlines() == ["A    LONG-HEADER", "abcd -"]


def test_describe_table_has_kafka_consumer_groups_columns():
    lines = lag_table(ROWS).splitlines()
    assert lines[0].split() == [
        "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"
    ]
    assert lines[1].split() == ["payments", "orders", "0", "4", "10", "6", "consumer-1-abc", "/10.0.0.1", "consumer-1"]
    assert lines[2].split() == ["payments", "orders", "1", "-", "20", "-", "-", "-", "-"]


def test_describe_json_is_a_list_of_rows_with_nulls_for_unknowns():
    document = json.loads(to_json(lag_json(ROWS)))
    assert document[1] == {
        "group": "payments", "topic": "orders", "partition": 1, "current_offset": None, "log_end_offset": 20,
        "lag": None, "consumer_id": None, "host": None, "client_id": None,
    }


def test_members_and_state_views():
    assert members_table(GROUP).splitlines()[1].split() == ["payments", "consumer-1-abc", "/10.0.0.1", "consumer-1", "2"]
    assert state_table(GROUP).splitlines()[1].split() == ["payments", "broker:9092", "(1)", "range", "Stable", "1"]
    assert state_json(GROUP)["coordinator"] == {"id": 1, "host": "broker", "port": 9092}


def test_group_list_and_reset_plan_views():
    assert groups_table([GroupListing("a", "consumer", None)]).splitlines()[1].split() == ["a", "consumer", "-"]
    plan = [PlannedReset("orders", 0, 40, 10)]
    assert reset_table("payments", plan).splitlines() == [
        "GROUP    TOPIC  PARTITION NEW-OFFSET",
        "payments orders 0         10",
    ]
    assert reset_json("payments", plan, executed=False)["offsets"] == [
        {"topic": "orders", "partition": 0, "current_offset": 40, "new_offset": 10}
    ]
