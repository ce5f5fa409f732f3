"""The data plane: topics, Produce, Fetch, ListOffsets, InitProducerId and DescribeConfigs on the storage engine."""
