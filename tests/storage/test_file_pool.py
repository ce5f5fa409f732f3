"""FilePool: segment descriptors are a bounded LRU; a borrowed descriptor is never closed under its user."""

import os
import threading

import pytest

from groupcoord.protocol.record_batch import encode_batch
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.file_pool import MIN_OPEN_FILES, FileKey, FilePool, resolve_max_open_files
from groupcoord.storage.log_manager import LogManager
from tests.storage.conftest import all_records


def files(tmp_path, count: int) -> list[FileKey]:
    keys = []
    for n in range(count):
        path = tmp_path / f"f{n}"
        path.write_bytes(b"%d" % n)
        keys.append(FileKey(path))
    return keys


def test_least_recently_used_files_are_closed_past_the_cap(tmp_path):
    pool = FilePool(MIN_OPEN_FILES)
    keys = files(tmp_path, 40)
    for key in keys:
        with pool.borrow(key) as fd:
            assert os.pread(fd, 8, 0) == key.path.rsplit("f", 1)[1].encode()
    stats = pool.stats()
    assert stats.open_files == MIN_OPEN_FILES and stats.opens == 40 and stats.evictions == 40 - MIN_OPEN_FILES
    with pool.borrow(keys[-1]):
        pass
    assert pool.stats().opens == 40, "a recently used file is still open"
    with pool.borrow(keys[0]):
        pass
    assert pool.stats().opens == 41, "an evicted file is reopened on demand"


def test_a_borrowed_descriptor_survives_eviction_pressure_and_a_forget(tmp_path):
    pool = FilePool(MIN_OPEN_FILES)
    keys = files(tmp_path, 40)
    with pool.borrow(keys[0]) as held:
        for key in keys[1:]:
            with pool.borrow(key):
                pass
        pool.forget(keys[0])
        assert os.pread(held, 1, 0) == b"0"
    with pytest.raises(OSError):
        os.fstat(held)  # closed once returned
    assert pool.stats().open_files <= MIN_OPEN_FILES


def test_concurrent_borrowers_share_one_descriptor_per_file(tmp_path):
    pool = FilePool(MIN_OPEN_FILES)
    keys = files(tmp_path, 64)
    errors = []

    def worker(offset: int) -> None:
        try:
            for n in range(2000):
                key = keys[(n * 7 + offset) % len(keys)]
                with pool.borrow(key) as fd:
                    assert os.pread(fd, 8, 0) == key.path.rsplit("f", 1)[1].encode()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert pool.stats().open_files <= MIN_OPEN_FILES


def test_the_automatic_cap_is_a_quarter_of_the_descriptor_limit():
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert resolve_max_open_files(0) == max(MIN_OPEN_FILES, min(4096, soft // 4))
    assert resolve_max_open_files(100) == 100


async def test_a_log_manager_keeps_at_most_its_cap_of_segment_files_open(tmp_path):
    config = LogConfig.from_topic_configs({"segment.bytes": "1024"})
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, config, max_open_files=20)
    for partition in range(30):
        log = await manager.get_or_create("wide", partition)
        for i in range(10):  # several segments each
            await log.append(encode_batch([(b"k%d" % i, b"v" * 200, ())]))
    assert manager.files.stats().open_files <= 20
    await manager.close()
    reopened = LogManager(tmp_path, FsyncPolicy.NEVER, config, max_open_files=20)
    logs = await reopened.open_existing()
    for log in logs.values():
        assert len(await all_records(log)) == 10
    assert reopened.files.stats().open_files <= 20
    await reopened.close()
    assert reopened.files.stats().open_files == 0
