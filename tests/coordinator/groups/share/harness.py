"""The group-shard harness with share groups: ShareGroupHeartbeat, ShareGroupDescribe and the persister's
answer (initialised or failed) driven by hand, as the service does once the heartbeat is durable."""

from __future__ import annotations

from tests.coordinator.groups.harness import FakeTopics, Harness, topic_id
from groupcoord.coordinator.groups.lazy_requests import ShareGroupHeartbeat
from groupcoord.coordinator.groups.share.heartbeat import INITIALIZE

__all__ = ["FakeTopics", "ShareHarness", "topic_id"]


class ShareHarness(Harness):
    def __init__(self, topics: FakeTopics | None = None, *, auto_initialize: bool = True, **config) -> None:
        super().__init__(topics, **config)
        self.auto_initialize = auto_initialize
        self.pending_init: list[tuple[str, dict]] = []

    def sg(self, group: str, member_id: str, epoch: int, *, topics=None, rack: str | None = None) -> dict:
        t = self._ticket()
        req = ShareGroupHeartbeat(group_id=group, member_id=member_id, member_epoch=epoch, rack_id=rack,
                                  subscribed_topic_names=None if topics is None else tuple(topics),
                                  client_id="client", client_host="/127.0.0.1")
        self._apply(self.shard.handle_share_group_heartbeat(req, t.token, self.now))
        response = dict(t.response)
        init = response.pop(INITIALIZE, None)
        if init is not None:
            _, changes = init
            self.pending_init.append((group, {tid: ps for tid, (_, ps) in changes.items()}))
            if self.auto_initialize:
                self.initialize_pending()
        return response

    def initialize_pending(self, ok: bool = True) -> None:
        """What the service does once the share persister answered: initialised, or taken back (failed)."""
        pending, self.pending_init = self.pending_init, []
        for group, parts in pending:
            t = self._ticket()
            if ok:
                self._apply(self.shard.share_partitions_initialized(group, parts, t.token, self.now))
            else:
                self._apply(self.shard.share_partitions_uninitialized(group, parts, t.token, self.now))

    def sg_join(self, group: str, member_id: str, topics=("orders",)) -> dict:
        return self.sg(group, member_id, 0, topics=topics)

    def sg_group(self, group: str):
        return self.shard.share_groups[group]

    def sg_describe(self, group: str) -> dict:
        return self.shard.describe_share_group(group)

    def assigned(self, response: dict) -> dict:
        """{topic id: sorted partitions} of a heartbeat answer's assignment (None: not sent)."""
        if response["assignment"] is None:
            return None
        return {tp["topic_id"]: tp["partitions"] for tp in response["assignment"]["topic_partitions"]}


ORDERS = topic_id("orders")
PAYMENTS = topic_id("payments")
