"""What an AlterUserScramCredentials request changes and answers, and the checks Kafka's ScramControlManager makes
of each change (its error codes and texts).

Apart from credentials.py (the store, opened at every start) because only a change needs it: the daemon does not
build these three frozen dataclasses before it listens (tests/coordinator/ops/test_daemon_imports.py).
"""

from __future__ import annotations

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.frozen import frozen_dataclass


@frozen_dataclass(slots=False)
class Upsertion:
    """One AlterUserScramCredentials upsertion: the user's SCRAM credential for one mechanism."""
    name: str
    mechanism: int  # Kafka's wire type: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512 (0 unknown)
    iterations: int
    salt: bytes
    salted_password: bytes


@frozen_dataclass(slots=False)
class Deletion:
    """One AlterUserScramCredentials deletion: the user's credential for one mechanism."""
    name: str
    mechanism: int


@frozen_dataclass(slots=False)
class Result:
    """The outcome for one user of an AlterUserScramCredentials request."""
    user: str
    error_code: int = ErrorCode.none
    error_message: str | None = None


def validate_name_and_mechanism(name: str, mechanism: int) -> Result | None:
    from .scram import ScramMechanism

    if not name:
        return Result(name, ErrorCode.unacceptable_credential, "Username must not be empty")
    if ScramMechanism.by_type(mechanism) is None:
        return Result(name, ErrorCode.unsupported_sasl_mechanism, "Unknown SCRAM mechanism")
    return None


def validate_upsertion(u: Upsertion) -> Result | None:
    from .scram import MAX_ITERATIONS, ScramMechanism

    error = validate_name_and_mechanism(u.name, u.mechanism)
    if error is not None:
        return error
    mechanism = ScramMechanism.by_type(u.mechanism)
    assert mechanism is not None
    if u.iterations < mechanism.min_iterations:
        return Result(u.name, ErrorCode.unacceptable_credential, "Too few iterations")
    if u.iterations > MAX_ITERATIONS:
        return Result(u.name, ErrorCode.unacceptable_credential, "Too many iterations")
    return None
