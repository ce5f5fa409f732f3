"""bench.startup_instructions' wrapper ends the daemon at its `listening on` line, so that callgrind's dump at exit
counts exactly exec to that line (run here without valgrind: a couple of seconds)."""

from __future__ import annotations

from bench.startup_instructions import _run, daemon_command, installed_env


def test_the_wrapped_daemon_ends_itself_at_listening_on(tmp_path):
    data, pycache = tmp_path / "data", tmp_path / "pycache"
    data.mkdir()
    printed = _run(daemon_command(str(data)), installed_env(str(pycache)), str(data)).splitlines()
    assert printed[-1].startswith("listening on 127.0.0.1:"), printed  # and nothing after it (no `listener` lines)
    assert not any(line.startswith(("listener ", "ready")) for line in printed)
    assert any(pycache.rglob("*.pyc"))  # the bytecode an installed daemon reads
