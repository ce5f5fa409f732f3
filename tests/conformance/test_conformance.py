"""groupcoord must answer every group-protocol scenario exactly as Apache Kafka does.

Kafka's answer comes from the live reference broker where Java and Maven exist, otherwise from the golden
files recorded from it. A deliberate divergence is allowed only through KNOWN_DIFFERENCES, with its reason.
"""

from __future__ import annotations

import pytest

from tests.conformance.golden import GOLDEN_DIR
from tests.conformance.differential import DifferentialSuite, differential_tests
from tests.conformance.scenarios import SCENARIOS
from tests.support.share_configs import SHORT_SHARE_BOUNDS

pytestmark = pytest.mark.timeout(120)

# scenario name -> why groupcoord deliberately answers differently from Kafka.
KNOWN_DIFFERENCES: dict[str, str] = {
    "consumer_group_heartbeat_on_a_classic_group": (
        "Kafka 4.x converts a classic group with members into a consumer group when a consumer-protocol member "
        "joins (online upgrade, group.consumer.migration.policy=bidirectional); groupcoord does not migrate groups "
        "and answers GROUP_ID_NOT_FOUND as Kafka does when the migration policy forbids the upgrade."),
    "consumer_group_commit_with_the_previous_epoch": (
        "Kafka 4.3 keeps the epoch each partition was assigned at and accepts a commit from an older member epoch "
        "for partitions the member already held then (KIP-1251); groupcoord answers STALE_MEMBER_EPOCH to any "
        "epoch but the member's current one, as Kafka 4.0-4.2 do."),
    "classic_join_into_a_consumer_group_with_members": (
        "Kafka 4.x lets a classic-protocol member join a consumer group that has members (KIP-848 online "
        "migration: the member is driven through JoinGroup/SyncGroup inside the consumer group); groupcoord does "
        "not serve mixed groups and answers INCONSISTENT_GROUP_PROTOCOL."),
    "consumer_group_regex_subscription": (
        "Kafka resolves a new SubscribedTopicRegex asynchronously (RE2J, ConsumerGroupRegularExpression records), "
        "so the joining member first gets the current epoch and an empty assignment and the group epoch is bumped "
        "once the regex is resolved; groupcoord resolves it with Python's re in the heartbeat itself (the member "
        "gets its partitions at once) and writes no regex records. The message of an invalid regex ends with "
        "Python's description of the error instead of RE2J's."),
}

SUITE = DifferentialSuite(SCENARIOS, GOLDEN_DIR, KNOWN_DIFFERENCES)

# groupcoord's one deliberate difference in KIP-848 answers that is not a missing feature, the short heartbeat
# interval told to a member waiting for unreleased partitions, is off here (0: Kafka's interval in every
# answer), so every scenario is compared field for field; test_unreleased_heartbeat_interval.py runs the same
# scenarios with it on and checks that the interval of those answers is all that differs from Kafka's.
BROKER_SETTINGS = dict(group_initial_rebalance_delay_ms=0, group_share_session_timeout_ms=6000,
                       group_consumer_unreleased_heartbeat_interval_ms=0, **SHORT_SHARE_BOUNDS)

globals().update(differential_tests(SUITE, pytest.mark.groupcoord(**BROKER_SETTINGS)))
