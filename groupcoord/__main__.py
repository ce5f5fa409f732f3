"""`python -m groupcoord ...`: the same as the `groupcoord` console script."""

import sys

if "hypothesis" not in sys.modules:
    # kio's phantom types import hypothesis's strategies whenever hypothesis is installed (a test
    # dependency), some 80 ms of a daemon's start-up for something only property tests use. The
    # command line never needs it: an import of it here fails as if it were not installed.
    sys.modules["hypothesis"] = None  # type: ignore[assignment]

from groupcoord.coordinator.ops.cli import main  # noqa: E402

sys.exit(main())
