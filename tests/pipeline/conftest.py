"""One SparkSession for every pipeline test (start-up is the slow part) and the story's log, read once."""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("pyspark")
if shutil.which("java") is None:
    pytest.skip("Spark needs a Java runtime", allow_module_level=True)

from pipeline.session import SessionSettings, read_offsets, start_session  # noqa: E402
from tests.pipeline.scenario import build_story  # noqa: E402


@pytest.fixture(scope="session")
def spark():
    session = start_session(SessionSettings(master="local[2]", driver_memory="1g", shuffle_partitions=2))
    yield session
    session.stop()


@pytest.fixture(scope="session")
def story_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("story") / "data"


@pytest.fixture(scope="session")
def story(story_dir):
    """The OffsetsHistory oracle of tests/pipeline/scenario.py, written under `story_dir`."""
    return build_story(story_dir)


@pytest.fixture(scope="session")
def story_df(spark, story, story_dir):
    df = read_offsets(spark, str(story_dir)).cache()
    yield df
    df.unpersist()
