"""`python -m pipeline <job> ...`: the same jobs as `groupcoord pipeline <job> ...`."""

import sys

from groupcoord.pipeline.cli import main

sys.exit(main())
