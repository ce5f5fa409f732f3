"""Header versions follow the spec: flexible API versions use request header v2 / response header v1,
except ApiVersions whose response header is always v0. Checked against Kafka's own JSON definitions,
independently of kio."""

import json
from pathlib import Path

import pytest

from groupcoord.protocol.errors import ProtocolError
from groupcoord.protocol.headers import (
    encode_request_header,
    encode_response_header,
    parse_request_header,
    request_header_version,
    response_header_version,
)
from groupcoord.protocol.registry import is_flexible, kio_versions

SPEC = Path(__file__).resolve().parents[3] / "shared" / "kafka-spec" / "messages"


def _load_spec(path: Path) -> dict:
    text = "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("//"))
    return json.loads(text)


def _versions(expr: str, top: int) -> set[int]:
    if expr == "none":
        return set()
    if expr.endswith("+"):
        return set(range(int(expr[:-1]), top + 1))
    if "-" in expr:
        lo, hi = expr.split("-")
        return set(range(int(lo), int(hi) + 1))
    return {int(expr)}


def _spec_requests():
    if not SPEC.exists():
        pytest.skip(f"spec folder {SPEC} not present")
    for path in sorted(SPEC.glob("*Request.json")):
        spec = _load_spec(path)
        if "apiKey" in spec:
            yield spec


def test_every_api_version_in_both_kio_and_the_spec_agrees_on_flexibility():
    checked = 0
    for spec in _spec_requests():
        flexible = _versions(spec["flexibleVersions"], 99)
        for version in _versions(spec["validVersions"], 99):
            if version in kio_versions(spec["apiKey"]):
                assert is_flexible(spec["apiKey"], version) == (version in flexible), (spec["name"], version)
                checked += 1
    assert checked > 150  # every API the spec folder defines, most versions of each


@pytest.mark.parametrize(
    ("api_key", "flexible", "request_v", "response_v"),
    [
        (11, False, 1, 0),  # JoinGroup v5
        (11, True, 2, 1),  # JoinGroup v6+
        (18, False, 1, 0),  # ApiVersions v0-2
        (18, True, 2, 0),  # ApiVersions v3+: response header stays v0
        (7, False, 0, 0),  # ControlledShutdown v0
    ],
)
def test_header_version_rules(api_key, flexible, request_v, response_v):
    assert request_header_version(api_key, flexible) == request_v
    assert response_header_version(api_key, flexible) == response_v


def test_request_header_round_trip_with_and_without_tagged_fields():
    for flexible in (False, True):
        raw = encode_request_header(12, 4 if flexible else 3, 77, "client-é", flexible) + b"BODY"
        header = parse_request_header(raw, flexible)
        assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (
            12,
            4 if flexible else 3,
            77,
            "client-é",
        )
        assert raw[header.body_offset :] == b"BODY"


def test_null_client_id_and_tagged_fields_are_skipped():
    raw = encode_request_header(3, 12, 5, None, True)[:-1] + bytes([1, 7, 2, 0xAA, 0xBB]) + b"X"
    header = parse_request_header(raw, True)
    assert header.client_id is None
    assert raw[header.body_offset :] == b"X"


def test_client_id_longer_than_the_frame_is_a_protocol_error():
    raw = encode_request_header(3, 1, 5, "abc", False)[:-2]
    with pytest.raises(ProtocolError):
        parse_request_header(raw, False)


def test_response_header_v1_carries_an_empty_tag_buffer():
    assert encode_response_header(9, 11, True) == b"\0\0\0\x09\0"
    assert encode_response_header(9, 18, True) == b"\0\0\0\x09"
