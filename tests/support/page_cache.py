"""What the page-cache reads (``Segment.read_cached``) need from the platform, for the tests that use them."""
from __future__ import annotations

import pytest

from groupcoord.storage.segment import RWF_NOWAIT

needs_nowait = pytest.mark.skipif(
    RWF_NOWAIT is None, reason="preadv's RWF_NOWAIT is Linux 4.14+ only; elsewhere every fetch reads on a thread "
                               "and these reads are never tried")
