"""Producer id allocation for InitProducerId.

Ids must never be reused across restarts (a reused id would inherit another producer's sequences), so ids
are handed out from blocks whose upper end is persisted before any id of the block is used, like Kafka's
ProducerIdManager. A crash wastes at most the rest of one block.
"""
from __future__ import annotations

import os
from pathlib import Path

BLOCK_SIZE = 1000
FILE_NAME = "producer-id-block"


class ProducerIdAllocator:
    def __init__(self, data_dir: Path) -> None:
        self._path = Path(data_dir) / FILE_NAME
        self._next = 0
        self._block_end = 0
        if self._path.exists():
            text = self._path.read_text().strip()
            self._next = self._block_end = int(text) if text else 0

    def next_id(self) -> int:
        if self._next >= self._block_end:
            self._reserve(self._next + BLOCK_SIZE)
        producer_id = self._next
        self._next += 1
        return producer_id

    def _reserve(self, block_end: int) -> None:
        tmp = self._path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            f.write(f"{block_end}\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self._path)
        self._block_end = block_end
