"""One SparkSession for every pipeline test (start-up is the slow part) and the story's log, read once."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from groupcoord.pipeline.session import SessionSettings, read_offsets, start_session
from tests.pipeline.scenario import build_story

# The pipeline is an optional extra and Spark needs Java: without them there is nothing to test here but
# test_prerequisites.py, which skips with the reason printed (the modules import PySpark at the top).
MISSING = ("PySpark is not installed (make pipeline)" if importlib.util.find_spec("pyspark") is None
           else "no java on PATH: Spark needs Java 17 (apt-get install openjdk-17-jre-headless)"
           if shutil.which("java") is None else None)
if MISSING:
    _HERE = Path(__file__).parent
    collect_ignore = [str(p.relative_to(_HERE)) for p in sorted(_HERE.rglob("test_*.py"))
                      if p.name != "test_prerequisites.py"]


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
