"""Building and running the Docker image with podman, on a base image made locally with debootstrap.

No image registry is reachable where the suite runs, so ``python:3.11-slim`` cannot be pulled: the base is
a Debian bookworm rootfs with python3 and pip, made with debootstrap from Debian's packages, cached as a
tarball (``~/.cache/groupcoord/images``) and imported into podman once. The Dockerfile takes it through its
``BASE_IMAGE`` build argument; users keep the default.

Every step is bounded in time. Anything this machine cannot do (no podman, no debootstrap, a kernel that
refuses the container) raises ``ContainerUnavailable`` whose message is the printed skip reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.reference.kafka_distribution import cache_root

ROOT = Path(__file__).resolve().parents[2]
BASE_IMAGE = "localhost/groupcoord-base:bookworm"
IMAGE = "localhost/groupcoord:test"
EXAMPLE_IMAGE = "localhost/groupcoord-example:latest"  # the name compose.yaml gives it
DEBIAN_MIRROR = os.environ.get("GROUPCOORD_DEBIAN_MIRROR", "http://deb.debian.org/debian")
DEBOOTSTRAP_TIMEOUT_S = 600
BUILD_TIMEOUT_S = 600
RUN_TIMEOUT_S = 60
# The host's CA bundle, mounted over the image's during RUN steps: where PyPI is reached through a proxy
# with its own CA (pip's `cert` setting on this host), the debootstrapped bundle would not trust it.
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


class ContainerUnavailable(RuntimeError):
    """podman cannot build or run the image here; the message is the skip reason."""


def _run(args: list[str], timeout: float, check: bool = True) -> subprocess.CompletedProcess:
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"{' '.join(args[:4])} … did not finish within {timeout} s") from exc
    if check and done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, args, done.stdout, done.stderr)
    return done


@dataclass(frozen=True)
class Podman:
    """podman with the options this machine needs: runc where crun cannot set up cgroups (hybrid mode),
    limits no higher than the host's (the container is not allowed to raise them: no CAP_SYS_RESOURCE), and
    chroot isolation for builds (no nested namespaces needed)."""

    runtime: str | None

    @property
    def base(self) -> list[str]:
        return ["podman"] + (["--runtime", self.runtime] if self.runtime else [])

    def limits(self) -> list[str]:
        import resource

        nofile = min(resource.getrlimit(resource.RLIMIT_NOFILE)[0], 16384)
        nproc = min(resource.getrlimit(resource.RLIMIT_NPROC)[0], 4096)
        return ["--ulimit", f"nofile={nofile}:{nofile}", "--ulimit", f"nproc={nproc}:{nproc}"]

    def image_exists(self, name: str) -> bool:
        return _run(self.base + ["image", "exists", name], 60, check=False).returncode == 0

    def build(self, dockerfile: Path, tag: str, context: Path, base_image: str) -> float:
        args = self.base + ["build", "--isolation=chroot", "--network=host", "--format", "docker",
                            "-f", str(dockerfile), "--build-arg", f"BASE_IMAGE={base_image}", "-t", tag]
        if HOST_CA_BUNDLE.exists():
            args += ["-v", f"{HOST_CA_BUNDLE}:{HOST_CA_BUNDLE}:ro"]
        t0 = time.monotonic()
        done = _run(args + [str(context)], BUILD_TIMEOUT_S, check=False)
        assert done.returncode == 0, f"podman build of {dockerfile} failed:\n{(done.stdout + done.stderr)[-4000:]}"
        return time.monotonic() - t0

    def run_detached(self, image: str, name: str, *options: str, command: list[str] | None = None) -> None:
        _run(self.base + ["run", "-d", "--name", name, *self.limits(), *options, image, *(command or [])],
             RUN_TIMEOUT_S)

    def logs(self, name: str) -> str:
        done = _run(self.base + ["logs", name], RUN_TIMEOUT_S, check=False)
        return done.stdout + done.stderr

    def remove_volume(self, name: str) -> None:
        _run(self.base + ["volume", "rm", "-f", name], RUN_TIMEOUT_S, check=False)

    def remove(self, *names: str) -> None:
        for name in names:
            _run(self.base + ["rm", "-f", "-t", "5", name], RUN_TIMEOUT_S, check=False)


def podman() -> Podman:
    """A podman that can run a container here, or ContainerUnavailable with the reason."""
    if shutil.which("podman") is None:
        raise ContainerUnavailable("podman is not installed (apt-get install podman runc debootstrap)")
    runtime = shutil.which("runc") or shutil.which("runc", path="/usr/sbin:/sbin")
    engine = Podman(runtime)
    ensure_base_image(engine)
    probe = _run(engine.base + ["run", "--rm", *engine.limits(), BASE_IMAGE, "true"], RUN_TIMEOUT_S, check=False)
    if probe.returncode != 0:
        raise ContainerUnavailable(f"podman cannot run a container on this machine: {probe.stderr.strip()[-500:]}")
    return engine


def base_rootfs_tarball() -> Path:
    """The debootstrapped rootfs (Debian bookworm, python3, pip, CA certificates) as a tarball, made once."""
    cache = cache_root() / "images"
    tarball = cache / "debian-bookworm-python3.tar"
    if tarball.exists():
        return tarball
    if shutil.which("debootstrap") is None and not Path("/usr/sbin/debootstrap").exists():
        raise ContainerUnavailable("debootstrap is not installed: no base image can be made without a registry")
    if os.geteuid() != 0:
        raise ContainerUnavailable("debootstrap needs root to make the base image")
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as work:
        rootfs = Path(work) / "rootfs"
        done = _run(["debootstrap", "--variant=minbase", "--include=python3,python3-pip,ca-certificates",
                     "bookworm", str(rootfs), DEBIAN_MIRROR], DEBOOTSTRAP_TIMEOUT_S, check=False)
        if done.returncode != 0:
            raise ContainerUnavailable(f"debootstrap failed: {(done.stdout + done.stderr)[-1000:]}")
        partial = tarball.with_suffix(".partial")
        _run(["tar", "-C", str(rootfs), "-cf", str(partial), "."], DEBOOTSTRAP_TIMEOUT_S)
        partial.replace(tarball)
    return tarball


def ensure_base_image(engine: Podman) -> None:
    if engine.image_exists(BASE_IMAGE):
        return
    tarball = base_rootfs_tarball()
    done = _run(engine.base + ["import", str(tarball), BASE_IMAGE], DEBOOTSTRAP_TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise ContainerUnavailable(f"podman import of the base rootfs failed: {done.stderr.strip()[-500:]}")


def containers_conf(directory: Path) -> Path:
    """A containers.conf with the runtime and limits ``Podman`` passes per call, for tools that start
    containers themselves (podman-compose): set CONTAINERS_CONF to it."""
    import resource

    nofile = min(resource.getrlimit(resource.RLIMIT_NOFILE)[0], 16384)
    nproc = min(resource.getrlimit(resource.RLIMIT_NPROC)[0], 4096)
    runtime = shutil.which("runc") or shutil.which("runc", path="/usr/sbin:/sbin")
    conf = directory / "containers.conf"
    conf.write_text(f'[containers]\ndefault_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]\n'
                    + (f'[engine]\nruntime = "{runtime}"\n' if runtime else ""))
    return conf
