"""A bounded, seeded slice of `make fuzz` in the default suite: structure-aware frames over every API and
version the daemon serves (generated from kio's schemas; half the connections lie: flipped bytes, huge
counts, cut frames, record batches with corrupt compressed payloads, bombs and lying counts behind a
true CRC), against the real daemon. No crash, no connection left hanging, and a probe client answered
throughout."""

import asyncio

from groupcoord.coordinator.apis.registry import APIS
from tests.support.daemon import Daemon
from tests.support.fuzz_driver import FUZZ_PARTITION_CAP, FuzzRun, served_targets, warm_up_broker, warm_up_generators
from tests.support.wire import WireClient

FRAMES = 20_000
SEED = 17


def test_fuzzed_frames_over_every_served_api_leave_the_daemon_serving(tmp_path):
    daemon = Daemon(tmp_path / "data", auto_create_topics_enable="false", fsync="never",
                    max_broker_partitions=FUZZ_PARTITION_CAP).start()
    try:
        with WireClient(daemon.bootstrap_servers) as client:
            served = client.request(18, 3, {"client_software_name": "f", "client_software_version": "1"}).api_keys
            client.request(19, 5, {"topics": [{"name": "t", "num_partitions": 1, "replication_factor": 1,
                                               "assignments": [], "configs": []}],
                                   "timeout": 30000, "validate_only": False})
        targets = served_targets(served)
        assert {key for key, _ in targets} == {module.API.key for module in APIS}  # every API, CreateTopics too
        warm_up_generators(targets)
        asyncio.run(warm_up_broker("127.0.0.1", daemon.port, targets))
        run = FuzzRun("127.0.0.1", daemon.port, targets, FRAMES, SEED, workers=32, time_limit_s=40,
                      pid=daemon.proc.pid, benign_wait_s=0.5)
        report = asyncio.run(run.run())
        assert not report.crashed, "\n".join(daemon.output[-30:])
        assert report.frames == FRAMES
        assert set(report.mutated_by_api) == {module.API.key for module in APIS}, report.mutated_by_api
        assert report.hangs == 0, report.hang_samples
        assert report.probe_failures == 0 and report.probe_answers > 0
        assert report.probe_max_s < 2.0, report.slow_probes
        assert report.answers > FRAMES // 4  # well-formed frames are mostly answered, not just survived
        with WireClient(daemon.bootstrap_servers) as client:
            assert client.request(18, 3, {"client_software_name": "f", "client_software_version": "1"}).error_code == 0
    finally:
        daemon.kill()
