"""What handlers are given: the broker's parts, gathered once per broker when it starts.

Handlers keep no state of their own, so two brokers in one process never share any; the encoded
bodies that ApiVersions and Metadata reuse are cached here, per broker.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any, Callable, Hashable, Protocol, Sequence

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.encode import EncodedBody
from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.protocol.registry import ApiRegistry

from ..cluster import ClusterIdentity
from ..security.credentials import CredentialStore

if TYPE_CHECKING:
    from ..dataplane.service import DataPlane
    from ..groups.service import GroupCoordinatorService
    from ..quotas.store import ClientQuotaStore
    from ..security.authorizer import Authorizer
    from ..share.coordinator_service import ShareCoordinator
    from ..share.partition_manager import SharePartitionManager
    from ..transactions.service import TransactionCoordinator

ENCODED_BODIES_PER_API = 256


class TopicSource(Protocol):
    """What Metadata needs from the topic catalog (the data plane's implements it)."""

    def describe(self, names: Sequence[str] | None, auto_create: bool) -> Any:
        """TopicInfo-like entries for ``names`` (None: every topic), or an awaitable of them. A source
        that also has ``by_id(topic_id)`` answers Metadata v10+ topics asked for by id only."""


class EncodedBodies:
    """Response bodies encoded once and reused, keyed by everything the answer depends on.

    Clients ask ApiVersions on every connection and refresh Metadata constantly, mostly with the same
    question; beyond ``max_entries`` per API the oldest entry is dropped.
    """

    def __init__(self, max_entries: int = ENCODED_BODIES_PER_API) -> None:
        self.max_entries = max_entries
        self._by_api: dict[ApiKey, dict[Hashable, EncodedBody]] = {}

    def get(self, api: ApiKey, key: Hashable, encode: Callable[[], EncodedBody]) -> EncodedBody:
        bodies = self._by_api.setdefault(api, {})
        body = bodies.get(key)
        if body is None:
            body = encode()
            if len(bodies) >= self.max_entries:
                bodies.pop(next(iter(bodies)))
            bodies[key] = body
        return body


@frozen_dataclass
class Services:
    """The broker's parts; ``registry`` is the dispatcher's (ApiVersions answers from it), ``topics`` the
    catalog Metadata describes, ``transactions`` the transaction coordinator, ``credentials`` the SCRAM
    credential store (Describe/AlterUserScramCredentials; the listeners' SASL authenticators read the same
    one). ``authorizer`` is None unless ``authorizer.class.name`` turns ACLs on: every handler's checks cost
    one attribute test when it is."""

    identity: ClusterIdentity
    registry: ApiRegistry
    topics: TopicSource
    groups: GroupCoordinatorService
    dataplane: DataPlane
    encoded: EncodedBodies = field(default_factory=EncodedBodies)
    transactions: TransactionCoordinator | None = None  # None: no transaction coordinator (FindCoordinator says so)
    credentials: CredentialStore = field(default_factory=CredentialStore.in_memory)
    identities: dict[str, ClusterIdentity] = field(default_factory=dict)
    authorizer: Authorizer | None = None
    quotas: ClientQuotaStore | None = None  # the client quotas (Describe/AlterClientQuotas); the broker always sets it
    share_coordinator: ShareCoordinator | None = None  # the __share_group_state coordinator (KIP-932)
    share_partitions: SharePartitionManager | None = None  # share partitions and share sessions (ShareFetch)
    share_persister: Any = None  # coordinator/share/persister.py: what the group side calls
    share_offsets: Any = None  # coordinator/share/offsets_admin.py: the share-group offsets admin APIs
    sendfile_listeners: frozenset[str] = frozenset()
    """The listeners whose connections send file regions with sendfile (no TLS: the bytes are not transformed);
    a fetch answered on one of them leaves its records in the segment files (coordinator/server/file_sender.py)."""

    def identity_for(self, listener: str) -> ClusterIdentity:
        """This broker as the clients of one listener must reach it (its advertised address)."""
        return self.identities.get(listener, self.identity)
