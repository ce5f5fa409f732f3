"""The group coordinator, in Kafka's split: a runtime, classic and consumer groups, offsets, and a thin front door.

``service`` and ``shard`` are the front door (nothing here imports them back);
``runtime/`` is what shards run on; ``shard_state``, ``replay`` and
``offsets_records`` are the machinery every group type shares; ``classic/``,
``consumer/`` and ``offsets/`` implement the APIs on a ``ShardState``.
"""
