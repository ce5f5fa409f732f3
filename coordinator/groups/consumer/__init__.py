"""KIP-848 consumer groups (ConsumerGroupHeartbeat / ConsumerGroupDescribe), after Kafka 4.x's GroupMetadataManager.

The state of a consumer group is, by construction, the replay of the records the
coordinator writes: every operation builds Kafka's records and writes them with
``replay.emit``, which applies them as it writes them, exactly as a restarted
broker applies them when it loads the partition.
"""
