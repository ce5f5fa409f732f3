"""Without PySpark or Java the pipeline's tests cannot run: this one says so, with the fix, in the summary."""

import pytest

from tests.pipeline.conftest import MISSING


def test_the_pipeline_can_run_here():
    if MISSING:
        pytest.skip(f"the pipeline's tests (cluster, live mode and the rest): {MISSING}")
