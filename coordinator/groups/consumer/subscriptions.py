"""What a consumer group's members subscribe to, resolved against the topic catalog, and which assignor it uses."""

from __future__ import annotations

import re
from typing import Any

from groupcoord.coordinator.groups.consumer import assignors
from groupcoord.coordinator.groups.consumer.member import ConsumerMember
from groupcoord.coordinator.groups.consumer.topics import resolve, subscription_metadata
from groupcoord.coordinator.groups.shard_state import ShardState


def supported_assignors(config: Any) -> tuple[str, ...]:
    names = tuple(a.strip() for a in str(config.group_consumer_assignors).split(",") if a.strip())
    return tuple(a for a in names if a in assignors.SUPPORTED) or assignors.SUPPORTED


def subscribed_names(state: ShardState, member: ConsumerMember) -> set[str]:
    """Topic names plus, for a regex, the existing non-internal topics it fully matches (Python ``re``, not RE2J)
    and, with ACLs on, that the member's principal may DESCRIBE."""
    names = set(member.subscribed_topic_names)
    if member.subscribed_topic_regex and state.topics is not None and hasattr(state.topics, "names"):
        try:
            pattern = re.compile(member.subscribed_topic_regex)
        except re.error:
            return names
        matched = {t for t in state.topics.names() if not t.startswith("__") and pattern.fullmatch(t)}
        if state.regex_topic_filter is not None and matched:
            matched = state.regex_topic_filter(member.member_id, matched)
        names |= matched
    return names


def subscribed_topic_ids(state: ShardState, member: ConsumerMember) -> frozenset:
    ids = set()
    for name in subscribed_names(state, member):
        found = resolve(state.topics, name)
        if found is not None:
            ids.add(found[0])
    return frozenset(ids)


def group_subscription_metadata(state: ShardState, members: dict[str, ConsumerMember]) -> dict[str, int]:
    names: set[str] = set()
    for m in members.values():
        names |= subscribed_names(state, m)
    return subscription_metadata(state.topics, names)


def group_subscription_metadata_cached(state: ShardState, group: Any, *, exact: bool = False) -> dict[str, int]:
    """`group_subscription_metadata` of the group's own members, from the union of their subscribed names
    and regexes kept per `subscriptions_version`: what a heartbeat that changes no subscription costs is
    the topics looked up, not a walk over every member (1,000 members heartbeating made that O(N²)).
    ``exact``: a group with regexes is resolved member by member (each member's ACL filter applies), as
    `group_subscription_metadata` does; plain topic names need no such walk."""
    cache = group.subscription_cache
    if cache is None or cache[0] != group.subscriptions_version:
        names = frozenset(t for m in group.members.values() for t in m.subscribed_topic_names)
        regexes = frozenset(m.subscribed_topic_regex for m in group.members.values() if m.subscribed_topic_regex)
        cache = group.subscription_cache = (group.subscriptions_version, names, regexes)
    _, names, regexes = cache
    if regexes and exact:
        return group_subscription_metadata(state, group.members)
    if regexes:
        resolved = set(names)
        for regex in regexes:
            probe = ConsumerMember(member_id="", subscribed_topic_names=(), subscribed_topic_regex=regex)
            resolved |= subscribed_names(state, probe)
        return subscription_metadata(state.topics, resolved)
    return subscription_metadata(state.topics, set(names))


def preferred_assignor(state: ShardState, members: dict[str, ConsumerMember]) -> str:
    """Kafka's computePreferredServerAssignor: the one most members ask for, else the first configured."""
    counts: dict[str, int] = {}
    for m in members.values():
        if m.server_assignor is not None:
            counts[m.server_assignor] = counts.get(m.server_assignor, 0) + 1
    if counts:
        return max(sorted(counts), key=lambda a: counts[a])
    return supported_assignors(state.config)[0]
