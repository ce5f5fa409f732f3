"""One SparkSession for every pipeline test, live mode's included (start-up is the slow part), and the story's
log, read once."""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from groupcoord.pipeline.session import SessionSettings, read_offsets, start_session
from tests.pipeline.scenario import build_story
from tests.pipeline.small_data import SMALL_DATA_CONF

# The pipeline is an optional extra and Spark needs Java: without them there is nothing to test here but
# test_prerequisites.py, which skips with the reason printed (the modules import PySpark at the top).
MISSING = ("PySpark is not installed (make pipeline)" if importlib.util.find_spec("pyspark") is None
           else "no java on PATH: Spark needs Java 17 (apt-get install openjdk-17-jre-headless)"
           if shutil.which("java") is None else None)
if MISSING:
    _HERE = Path(__file__).parent
    collect_ignore = [str(p.relative_to(_HERE)) for p in sorted(_HERE.rglob("test_*.py"))
                      if p.name != "test_prerequisites.py"]


KAFKA_SOURCE_MISSING: list[str] = []
"""Why the session below has no Kafka source although test_live.py is selected (its tests fail with it)."""


def _live_tests_selected(session: pytest.Session) -> bool:
    here = Path(__file__).parent
    return any(item.path.name == "test_live.py" and item.path.parent == here for item in session.items)


@pytest.fixture(scope="session")
def spark(request):
    """The suite's session. With test_live.py selected it also loads Spark's Kafka source (`spark.jars.packages`
    with the connector `groupcoord pipeline` itself picks, resolved by Ivy as the session starts), so live
    mode's commands run on this session too: one JVM start for every pipeline test, not a second driver."""
    settings = SessionSettings(master="local[2]", driver_memory="1g", extra=SMALL_DATA_CONF)
    session = None
    if _live_tests_selected(request.session):
        from groupcoord.pipeline.kafka_source import kafka_package

        package = kafka_package()
        try:
            session = start_session(replace(settings, extra={**settings.extra, "spark.jars.packages": package}))
        except Exception as exc:  # Ivy could not resolve it (offline, no cache): only the live tests fail
            KAFKA_SOURCE_MISSING.append(f"the session did not start with Spark's Kafka source {package} (Ivy's "
                                        f"reason is in the first pipeline test's captured stderr): {exc}")
    if session is None:
        session = start_session(settings)
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
