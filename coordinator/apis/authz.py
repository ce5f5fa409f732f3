"""What the API modules share for their authorisation checks: Kafka's default messages of the four
authorisation errors.

Each module makes its own checks inline (``auth = services.authorizer`` then ``if auth is not None and
not auth.authorize(...)``), so with no authorizer configured a request pays one attribute test.
"""

from __future__ import annotations

from groupcoord.protocol.errors import ErrorCode

GROUP_DENIED = "Group authorization failed."
TOPIC_DENIED = "Topic authorization failed."
CLUSTER_DENIED = "Cluster authorization failed."
TXN_DENIED = "Transactional Id authorization failed."

DEFAULT_MESSAGES = {
    ErrorCode.group_authorization_failed: GROUP_DENIED,
    ErrorCode.topic_authorization_failed: TOPIC_DENIED,
    ErrorCode.cluster_authorization_failed: CLUSTER_DENIED,
    ErrorCode.transactional_id_authorization_failed: TXN_DENIED,
}
