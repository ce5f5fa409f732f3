# The two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
DATA   ?= ./data
LISTEN ?= 127.0.0.1:9092
# The suite runs in two processes (CI's two cores; tests/support/parallel.py says which tests share one).
# TEST_PROCESSES=0 runs it in this one.
TEST_PROCESSES ?= 2

.PHONY: run test venv test-venv pipeline clean bench bench-compare readme fuzz chaos

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

venv: $(BIN)/python
	$(BIN)/pip install --quiet -e .

test-venv: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'

# The offsets pipeline's extra (PySpark, pyarrow, pandas, matplotlib). Spark also needs Java 17.
pipeline: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[pipeline]'
	@command -v java >/dev/null 2>&1 || [ -n "$$JAVA_HOME" ] || echo "Spark needs Java 17: apt-get install openjdk-17-jre-headless (or set JAVA_HOME)"

# The default run plus the long scenarios (GROUPCOORD_FULL_TESTS=1): every Kafka CLI story, both MirrorMaker 2
# directions, the Docker image built and run with podman, the compose example under podman-compose, the perf
# tools, 100,000 partitions at ulimit -n 1024, the pipeline on a standalone Spark cluster, the Java client
# scenarios against live Kafka, every differential scenario replayed against live Kafka 4.3.1
# (the default run compares with the transcripts recorded from it). The default run skips them with that reason printed.
test-full:
	GROUPCOORD_FULL_TESTS=1 $(MAKE) test

run: venv
	$(BIN)/groupcoord serve --listen $(LISTEN) --data-dir $(DATA)

test: test-venv
	-@command -v kcat >/dev/null 2>&1 || (command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && (apt-get install -y -qq kcat >/dev/null 2>&1 || (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq kcat >/dev/null 2>&1)) || echo "kcat not installable here: kcat tests will skip")
	-@command -v podman >/dev/null 2>&1 && command -v podman-compose >/dev/null 2>&1 && command -v runc >/dev/null 2>&1 && command -v debootstrap >/dev/null 2>&1 || (command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && (apt-get install -y -qq podman podman-compose runc debootstrap >/dev/null 2>&1 || (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq podman podman-compose runc debootstrap >/dev/null 2>&1)) || echo "podman/runc/debootstrap not installable here: the container tests will skip")
	PYSPARK_PYTHON=$(abspath $(BIN)/python) $(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist loadgroup $(PYTEST_ARGS)

bench: venv
	$(BIN)/python -m bench.wire_bench
	$(BIN)/python -m bench.group_bench

# groupcoord and the cached Kafka 4.3.1 side by side (needs Java 17; confluent-kafka comes with the test
# extra). Long at full size; BENCH_ARGS=--quick for a smoke run, e.g. BENCH_ARGS="--only heartbeat,commit".
# BENCH_PYTHON=/usr/bin/python3.11: the daemon runs on that CPython build instead (a virtualenv of it,
# $(BENCH_VENV), with this tree installed): Kafka runs with production JVM flags, and a production CPython is
# built with PGO and LTO, as distributions build theirs (bench/interpreter.py; pyenv's default build is not).
BENCH_VENV ?= .venv-bench
bench-compare: test-venv
ifneq ($(BENCH_PYTHON),)
	[ -x $(BENCH_VENV)/bin/python ] || $(BENCH_PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install --quiet -e .
	$(BIN)/python -m bench.compare --groupcoord-python $(BENCH_VENV)/bin/python $(BENCH_ARGS)
else
	$(BIN)/python -m bench.compare $(BENCH_ARGS)
endif

clean:
	rm -rf $(VENV) $(BENCH_VENV) build *.egg-info .pytest_cache

readme: venv
	$(BIN)/python -m groupcoord.coordinator.ops.readme

# Fuzzed frames over every served API against a real daemon: frames sent, frames/s, crashes, hangs, the
# probe client's worst latency, daemon RSS at start/end. Bounded by FRAMES and FUZZ_TIME_LIMIT_S.
FRAMES ?= 1000000
FUZZ_SEED ?= 17
FUZZ_TIME_LIMIT_S ?= 3600
fuzz: test-venv
	$(BIN)/python -m bench.fuzz --frames $(FRAMES) --seed $(FUZZ_SEED) --time-limit-s $(FUZZ_TIME_LIMIT_S)

# SIGKILL chaos for long runs: committing and producing clients against a daemon killed at random moments;
# every acknowledged commit and record is checked (make test runs 20 kills). Bounded by KILLS and CHAOS_TIME_LIMIT_S.
KILLS ?= 200
CHAOS_SEED ?= 17
CHAOS_TIME_LIMIT_S ?= 3600
chaos: test-venv
	$(BIN)/python -m tests.support.chaos --kills $(KILLS) --seed $(CHAOS_SEED) --time-limit-s $(CHAOS_TIME_LIMIT_S)
