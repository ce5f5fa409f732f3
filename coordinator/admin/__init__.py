"""Operator tooling: a small Kafka protocol client and the `groupcoord` admin subcommands.

It talks to the broker only over the wire, so the same commands work against groupcoord and any Kafka cluster.
"""
