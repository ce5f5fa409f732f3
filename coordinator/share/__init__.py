"""Share groups (KIP-932), the partition and state side: the share coordinator (``__share_group_state``),
its persister, the share partitions with their acquisition locks, and the share sessions."""
