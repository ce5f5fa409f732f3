"""The pipeline tests' Spark settings for their small logs (thousands of records, not millions).

Each query's cost there is the JVM's and Spark's fixed work, not the data: the C2 compiler's warm-up, a whole-stage
code generation and Janino compile per query, adaptive execution's re-planning, eight shuffle tasks for a few
rows. So the suite's session turns them off (not the product's defaults, which are for real logs): tests/pipeline
took 250 / 241 s instead of 470 / 378 s, alternated on a loaded machine.
"""

from __future__ import annotations

SMALL_DATA_CONF = {
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.shuffle.partitions": "1",
}

SMALL_DATA_FLAGS = [flag for key, value in SMALL_DATA_CONF.items() for flag in ("--conf", f"{key}={value}")]
"""The same settings as a command's flags. A command the tests run in-process reuses the suite's session, and the
session builder's ``getOrCreate`` sets the command's SQL settings on it (its defaults: adaptive execution, eight
shuffle partitions), so each such command passes these, else every test after it runs with the product's."""
