"""Committed offsets of every group type, after Kafka's OffsetMetadataManager: OffsetCommit, OffsetFetch,
OffsetDelete, and the offset records as they are built and applied."""
