"""groupcoord: an embeddable single-node broker that speaks the Kafka wire protocol.

Everything installs under this one name so that nothing generic lands at the top of the user's
site-packages: the repository's top-level folders are mapped in by pyproject.toml
(``groupcoord.protocol`` ← ``protocol/``, ``groupcoord.storage`` ← ``storage/``,
``groupcoord.coordinator`` ← ``coordinator/``, ``groupcoord.pipeline`` ← ``pipeline/``).

The embedded API is ``groupcoord.coordinator.broker`` (``Broker``, ``run_in_thread``); it is not
imported here so that ``import groupcoord`` stays cheap for the CLI and the pytest plugin.
"""

from importlib.metadata import PackageNotFoundError, version as _version

try:
    __version__ = _version("groupcoord")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
