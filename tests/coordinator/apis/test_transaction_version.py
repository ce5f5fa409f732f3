"""Which transaction version is served, as a client learns it from ApiVersions: Transactions V1.

A Kafka 4.x client turns on Transactions V2 (KIP-890 part 2) only when the broker finalizes the
``transaction.version`` feature at level 2 or more, and marks V2 EndTxn as v5. groupcoord finalizes no
feature and serves EndTxn up to v4, so every client runs V1, which is what the coordinator implements.
"""

from groupcoord.coordinator.apis.api_versions import api_versions_response
from groupcoord.coordinator.apis.registry import APIS
from groupcoord.protocol.api_keys import ApiKey
from tests.coordinator.apis.test_registry import served_dispatcher


def test_no_transaction_version_feature_is_finalized_and_end_txn_stops_at_v4():
    dispatcher, _ = served_dispatcher()
    answer = api_versions_response(dispatcher.registry)
    assert "finalized_features" not in answer and "supported_features" not in answer
    ranges = {r["api_key"]: (r["min_version"], r["max_version"]) for r in answer["api_keys"]}
    assert ranges[ApiKey.END_TXN] == (0, 4)
    assert ranges[ApiKey.ADD_PARTITIONS_TO_TXN] == (0, 5)  # v5 is the brokers' form, not a client's V2 marker


def test_every_transaction_api_is_served():
    served = {m.API.key for m in APIS}
    assert {ApiKey.INIT_PRODUCER_ID, ApiKey.ADD_PARTITIONS_TO_TXN, ApiKey.ADD_OFFSETS_TO_TXN, ApiKey.END_TXN,
            ApiKey.WRITE_TXN_MARKERS, ApiKey.TXN_OFFSET_COMMIT, ApiKey.DESCRIBE_TRANSACTIONS,
            ApiKey.LIST_TRANSACTIONS} <= served
