"""CRC-32C (Castagnoli), the checksum of record batch v2.

``zlib.crc32`` is the IEEE polynomial and gives different answers, so every batch
checksum in the project goes through here.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from typing import Any, Callable


def _native_crc32c() -> Callable[..., int]:
    """The crc32c package's extension, loaded without the package's ``__init__``: that one reads its own
    version through importlib.metadata (the email package) and imports its command line (argparse),
    some 15 ms of every daemon's start-up for one function. Anything unexpected: the ordinary import."""
    try:
        package = importlib.util.find_spec("crc32c")  # locates the package, runs none of it
        locations = package.submodule_search_locations if package is not None else None
        spec = importlib.machinery.PathFinder.find_spec("crc32c._crc32c", list(locations or ()))
        if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            raise ImportError("crc32c's extension not found")
        module: Any = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        function = module.crc32c
        if function(b"123456789") != 0xE3069283:  # the check value of CRC-32C
            raise ImportError("crc32c's extension gives a wrong check value")
        return function
    except Exception:
        from crc32c import crc32c as function
        return function


# the extension's function itself, ``crc32c(data, value=0)``: a Python wrapper around it cost a frame per
# batch on every path that checks batches (the pipeline's walk checks ~5 records' worth of bytes per call)
crc32c: Callable[..., int] = _native_crc32c()
