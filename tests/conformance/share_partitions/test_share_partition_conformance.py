"""groupcoord must answer every share-partition scenario (KIP-932) as Kafka 4.3.1 does.

Kafka's answer comes from the live reference broker where Java and Maven exist, otherwise from the golden
files recorded from it. A deliberate divergence is allowed only through KNOWN_DIFFERENCES, with its reason.
"""

from __future__ import annotations

import pytest

from tests.support.share_configs import SHORT_SHARE_BOUNDS

from tests.conformance.differential import DifferentialSuite, differential_tests
from tests.conformance.share_partitions.golden import GOLDEN_DIR
from tests.conformance.share_partitions.requests import VERSIONS
from tests.conformance.share_partitions.scenarios import SCENARIOS

pytestmark = pytest.mark.timeout(180)

# scenario name -> why groupcoord deliberately answers differently from Kafka.
KNOWN_DIFFERENCES: dict[str, str] = {}

SUITE = DifferentialSuite(SCENARIOS, GOLDEN_DIR, KNOWN_DIFFERENCES)
BROKER = pytest.mark.groupcoord(group_initial_rebalance_delay_ms=0, **SHORT_SHARE_BOUNDS)


globals().update(differential_tests(SUITE, BROKER, VERSIONS))
