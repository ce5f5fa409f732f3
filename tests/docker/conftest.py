"""The podman engine and the images, built once per session for the container tests."""

from __future__ import annotations

import pytest

from tests.docker.podman import BASE_IMAGE, EXAMPLE_IMAGE, IMAGE, ROOT, ContainerUnavailable, Podman, podman


@pytest.fixture(scope="session")
def engine() -> Podman:
    try:
        return podman()
    except ContainerUnavailable as exc:
        pytest.skip(reason=f"container test skipped: {exc}")


@pytest.fixture(scope="session")
def image(engine: Podman) -> str:
    seconds = engine.build(ROOT / "docker" / "Dockerfile", IMAGE, ROOT, BASE_IMAGE)
    print(f"image built in {seconds:.1f} s on {BASE_IMAGE}")
    return IMAGE


@pytest.fixture(scope="session")
def example_image(engine: Podman) -> str:
    engine.build(ROOT / "docker" / "example" / "Dockerfile", EXAMPLE_IMAGE, ROOT / "docker" / "example", BASE_IMAGE)
    return EXAMPLE_IMAGE
