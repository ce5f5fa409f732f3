"""groupcoord must answer every admin scenario (configs, DeleteRecords, DescribeLogDirs, DescribeTopicPartitions,
DescribeProducers, client quotas, per-group configs) as Kafka 4.3.1 does.

Kafka's answer comes from the live reference broker where Java and Maven exist, otherwise from the golden
files recorded from it. A deliberate divergence is allowed only through KNOWN_DIFFERENCES, with its reason.
"""

from __future__ import annotations

import pytest

from tests.conformance.admin.golden import GOLDEN_DIR
from tests.conformance.admin.requests import VERSIONS
from tests.conformance.admin.scenarios import SCENARIOS
from tests.conformance.differential import DifferentialSuite, differential_tests

pytestmark = pytest.mark.timeout(120)

# scenario name -> why groupcoord deliberately answers differently from Kafka.
KNOWN_DIFFERENCES: dict[str, str] = {}

SUITE = DifferentialSuite(SCENARIOS, GOLDEN_DIR, KNOWN_DIFFERENCES)


globals().update(differential_tests(SUITE, pytest.mark.groupcoord(group_initial_rebalance_delay_ms=0), VERSIONS))
