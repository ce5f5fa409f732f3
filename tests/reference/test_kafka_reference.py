"""The reference broker itself: it must be a real, reachable Kafka before its answers can judge anything."""

import pytest

from tests.conformance.requests import Api
from tests.conformance.wire import supported_versions

pytestmark = pytest.mark.reference


async def test_reference_broker_serves_the_classic_group_apis(kafka_reference):
    served = await supported_versions(kafka_reference)
    for api in (Api.FIND_COORDINATOR, Api.JOIN_GROUP, Api.SYNC_GROUP, Api.HEARTBEAT, Api.LEAVE_GROUP,
                Api.OFFSET_COMMIT, Api.OFFSET_FETCH, Api.DESCRIBE_GROUPS, Api.LIST_GROUPS, Api.DELETE_GROUPS,
                Api.OFFSET_DELETE):
        assert int(api) in served, f"{api.name} missing from the reference broker's ApiVersions"
    assert served[int(Api.JOIN_GROUP)][1] >= 9
