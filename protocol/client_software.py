"""KIP-511's rule for the client software name and version an ApiVersions v3+ request carries: each must start
and end with a letter or digit, with only letters, digits, '-' and '.' inside. Kafka answers INVALID_REQUEST
otherwise (ApiVersionsRequest.isValid); both the ApiVersions handler and the SASL authenticator, which serves
ApiVersions before authentication, apply it."""

from __future__ import annotations

import re
from typing import Any

CLIENT_SOFTWARE_VERSION = 3
_SOFTWARE = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?$")


def valid_client_software(request: Any, api_version: int) -> bool:
    if api_version < CLIENT_SOFTWARE_VERSION:
        return True
    return bool(_SOFTWARE.match(request.client_software_name or "")
                and _SOFTWARE.match(request.client_software_version or ""))
