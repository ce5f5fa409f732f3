"""What `pip install groupcoord` puts into a user's environment: one import name, `groupcoord`, and
nothing generic (`protocol`, `storage`, `coordinator`, `pipeline`) that could shadow a package of theirs."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERIC = ("protocol", "storage", "coordinator", "pipeline")


def test_every_package_folder_is_installed_under_the_groupcoord_name():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    declared = set(setuptools["packages"])
    on_disk = {"groupcoord"}
    for top in GENERIC:
        assert setuptools["package-dir"][f"groupcoord.{top}"] == top
        for folder, dirs, files in os.walk(ROOT / top):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            if "__init__.py" in files:
                on_disk.add("groupcoord." + str(Path(folder).relative_to(ROOT)).replace(os.sep, "."))
    assert declared == on_disk, f"pyproject.toml lists {sorted(declared ^ on_disk)} wrongly"


def test_a_fresh_venv_gets_groupcoord_and_no_generic_top_level_names(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )
    (wheel,) = wheels.glob("groupcoord-*.whl")
    env_dir = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    # pip from this interpreter installs into the fresh environment's prefix, without the runtime
    # dependencies: what is checked here is only what our own wheel lays out.
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", str(wheel)],
        check=True, capture_output=True, timeout=300,
    )
    probe = (
        "import importlib.util, json, groupcoord;"
        f"print(json.dumps([n for n in {GENERIC!r} if importlib.util.find_spec(n)]))"
    )
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    top_level = {p.name for p in site.iterdir() if not p.name.endswith(".dist-info") and not p.name.startswith("_")}
    assert top_level == {"groupcoord"}, top_level
    assert (site / "groupcoord" / "coordinator" / "groups" / "__init__.py").exists()
