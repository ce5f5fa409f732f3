"""franz-go's share consumer (kgo.ShareGroup, franz-go v1.22.3, KIP-932): three members share a topic, every
record delivered and acknowledged exactly once (tests/go/share_consumer). Needs the Go toolchain (and the Go
module proxy the first time); skipped with the reason otherwise.

Against Apache Kafka it proves the Go program itself is right; against groupcoord it proves the broker.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import pytest


GO_MODULE = Path(__file__).resolve().parent.parent / "go" / "share_consumer"
BUILD_TIMEOUT_S = 600
RUN_TIMEOUT_S = 150

pytestmark = [pytest.mark.timeout(BUILD_TIMEOUT_S + RUN_TIMEOUT_S + 60)]


@pytest.fixture(scope="module")
def share_consumer(tmp_path_factory) -> Path:
    go = shutil.which("go")
    if go is None:
        pytest.skip(reason="the Go toolchain is not installed")
    binary = tmp_path_factory.mktemp("go") / "share_consumer"
    built = subprocess.run([go, "build", "-o", str(binary), "."], cwd=GO_MODULE, capture_output=True, text=True,
                           timeout=BUILD_TIMEOUT_S)
    if built.returncode != 0:
        pytest.skip(reason=f"franz-go could not be built (module proxy unreachable?): {built.stderr[-1000:]}")
    return binary


def run(binary: Path, bootstrap: str) -> None:
    done = subprocess.run([str(binary), bootstrap, uuid.uuid4().hex[:8]], capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S)
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    assert done.stdout.startswith("OK 300 records, each once"), done.stdout


@pytest.mark.reference
def test_franz_go_share_consumers_against_kafka(share_consumer, kafka_reference):
    run(share_consumer, kafka_reference)


@pytest.mark.groupcoord(group_initial_rebalance_delay_ms=0)
async def test_franz_go_share_consumers_against_groupcoord(share_consumer, groupcoord_bootstrap):
    run(share_consumer, groupcoord_bootstrap)
