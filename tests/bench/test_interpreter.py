"""bench.interpreter: the daemon's interpreter is checked to run this tree's groupcoord, and its speed is measured."""

import os
import stat
import sys
from pathlib import Path

import pytest

from bench.interpreter import TREE, daemon_interpreter


def test_this_interpreter_is_accepted_with_its_version_and_a_measured_reference_loop():
    found = daemon_interpreter(sys.executable)
    assert found.python == sys.executable
    assert found.version == ".".join(map(str, sys.version_info[:3]))
    assert Path(found.code_from).resolve() == TREE
    assert found.base_executable == getattr(sys, "_base_executable", sys.executable)
    assert found.reference_loop_ms > 0
    assert found.python in found.label() and "reference loop" in found.label()


def test_an_interpreter_that_imports_another_trees_groupcoord_is_refused(tmp_path):
    other = tmp_path / "other-tree"
    (other / "groupcoord" / "coordinator").mkdir(parents=True)
    (other / "groupcoord" / "__init__.py").write_text("")
    (other / "groupcoord" / "coordinator" / "__init__.py").write_text("")
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={other} exec {sys.executable} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(SystemExit) as refused:
        daemon_interpreter(str(wrapper))
    assert f"runs the groupcoord of {other}" in str(refused.value) and f"this tree ({TREE})" in str(refused.value)
    # The harness's own interpreter is described, not held to this tree: it runs whatever is installed beside it.
    described = daemon_interpreter(str(wrapper), this_tree=False)
    assert Path(described.code_from).resolve() == (other / "groupcoord").resolve()


def test_a_relative_path_is_taken_from_the_harness_directory(monkeypatch):
    monkeypatch.chdir(os.path.dirname(sys.executable))
    found = daemon_interpreter(os.path.join(".", os.path.basename(sys.executable)))
    assert found.python == os.path.join(os.path.dirname(sys.executable), os.path.basename(sys.executable))


def test_an_interpreter_that_cannot_run_is_refused_with_its_path(tmp_path):
    missing = os.path.join(tmp_path, "no-such-python")
    with pytest.raises(SystemExit, match="no-such-python"):
        daemon_interpreter(missing)
