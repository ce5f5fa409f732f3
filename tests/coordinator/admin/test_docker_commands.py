"""The commands docker/Dockerfile runs must stay valid `groupcoord` command lines as the CLI evolves
(there is no Docker engine in CI to catch a renamed flag at build time)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from groupcoord.coordinator.ops.cli import build_parser

DOCKERFILE = Path(__file__).resolve().parents[3] / "docker" / "Dockerfile"


PATTERNS = {
    "CMD": r"^CMD (\[.*?\])\s*$",
    "HEALTHCHECK": r"^HEALTHCHECK .*?CMD (\[.*?\])\s*$",
}


def exec_form(instruction: str) -> list[str]:
    """The JSON array of a CMD or HEALTHCHECK ... CMD instruction (line continuations joined)."""
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    match = re.search(PATTERNS[instruction], text, re.MULTILINE)
    assert match, f"no exec-form {instruction} in {DOCKERFILE}"
    return json.loads(match.group(1))


def test_the_container_command_is_a_valid_serve_invocation():
    program, *argv = exec_form("CMD")
    assert program == "groupcoord"
    ns = build_parser().parse_args(argv)
    assert ns.command == "serve"
    assert "0.0.0.0:9092" in argv and "/data" in argv


def test_the_healthcheck_is_an_api_versions_round_trip_on_the_container_port():
    program, *argv = exec_form("HEALTHCHECK")
    assert program == "groupcoord"
    ns = build_parser().parse_args(argv)
    assert (ns.command, ns.bootstrap_server) == ("health", "127.0.0.1:9092")
