"""Classic groups (JoinGroup / SyncGroup / Heartbeat / LeaveGroup), after Kafka's group-coordinator ``classic`` package.

The data (``group``, ``member``, ``state``) sits at the bottom; the rebalance rules
(``rebalance``) and their timers above it; one module per API on top.
"""
