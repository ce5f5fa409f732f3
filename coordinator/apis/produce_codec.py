"""Produce's hand-written codec (protocol/fast_produce.py), bound to the data plane's ``TopicData`` and
``PartitionData``: its requests are read straight into them.

Apart from the handler's module (produce.py) so that the dispatcher binds it at registration while the handler
and the data plane's produce code are still imported by the first Produce (registry.CODEC_MODULES): the classes
are imported by the codec's first read."""

from __future__ import annotations

from typing import Any, Callable

from groupcoord.protocol.fast_produce import produce_codec


def _data_classes() -> tuple[Callable[..., Any], Callable[..., Any]]:
    from ..dataplane.produce import PartitionData, TopicData

    return TopicData, PartitionData


FAST = produce_codec(_data_classes)
