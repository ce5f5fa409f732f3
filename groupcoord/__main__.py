"""`python -m groupcoord ...`: the same as the `groupcoord` console script."""

import sys

from groupcoord.coordinator.ops.cli import main

sys.exit(main())
