"""Kafka's API keys by name, e.g. ``ApiKey.JOIN_GROUP == 11``.

Generated from kio's ``api_key_map`` (itself generated from Kafka's message specs), so the names are
Kafka's own and a key kio learns is named here without an edit.
"""

from __future__ import annotations

from enum import IntEnum

from kio.schema.index import api_key_map

ApiKey = IntEnum("ApiKey", {name.upper(): key for key, name in sorted(api_key_map.items())})  # type: ignore[misc]
ApiKey.__doc__ = "Every Kafka API key kio knows, under Kafka's name for it (upper snake case)."
