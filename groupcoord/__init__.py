"""groupcoord: an embeddable single-node broker that speaks the Kafka wire protocol.

Everything installs under this one name so that nothing generic lands at the top of the user's
site-packages: the repository's top-level folders are mapped in by pyproject.toml
(``groupcoord.protocol`` ← ``protocol/``, ``groupcoord.storage`` ← ``storage/``,
``groupcoord.coordinator`` ← ``coordinator/``, ``groupcoord.pipeline`` ← ``pipeline/``).

The embedded API is ``groupcoord.coordinator.broker`` (``Broker``, ``run_in_thread``); it is not
imported here so that ``import groupcoord`` stays cheap for the CLI and the pytest plugin.
"""



def __getattr__(name: str) -> str:
    """``groupcoord.__version__``, read from the installed metadata on first use: importlib.metadata
    costs a daemon's start-up some 20 ms (it imports the email package) and serving never needs it."""
    if name != "__version__":
        raise AttributeError(f"module 'groupcoord' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("groupcoord")
    except PackageNotFoundError:  # a source tree that was never installed
        value = "0+unknown"
    globals()["__version__"] = value
    return value
