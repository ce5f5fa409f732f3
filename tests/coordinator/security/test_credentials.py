"""The SCRAM credential store: Kafka's validation and per-user results, and crash-safe persistence."""

from __future__ import annotations

import json
import os

from groupcoord.coordinator.security.credentials import CREDENTIALS_FILE, CredentialStore, Deletion, Upsertion
from groupcoord.coordinator.security.scram import ScramMechanism
from groupcoord.protocol.errors import ErrorCode

SHA512 = ScramMechanism.SCRAM_SHA_512


def upsert(name, iterations=4096, mechanism=2, password="pw"):
    salt = b"salt-" + name.encode()
    scram = ScramMechanism.by_type(mechanism) or SHA512
    return Upsertion(name, mechanism, iterations, salt, scram.salted_password(password, salt, iterations))


def test_credentials_survive_a_reopen_and_hold_no_password(tmp_path):
    store = CredentialStore.open(tmp_path)
    assert [r.error_code for r in store.alter([upsert("alice", password="hunter2")], [])] == [ErrorCode.none]
    text = (tmp_path / CREDENTIALS_FILE).read_text()
    assert "hunter2" not in text
    assert oct(os.stat(tmp_path / CREDENTIALS_FILE).st_mode & 0o777) == "0o600"
    again = CredentialStore.open(tmp_path)
    assert again.lookup("alice", SHA512) == store.lookup("alice", SHA512)
    assert again.users() == {"alice": [(SHA512, 4096)]}
    assert json.loads(text)["version"] == 1


def test_kafkas_validation_codes(tmp_path):
    store = CredentialStore.open(tmp_path)
    results = {r.user: (r.error_code, r.error_message) for r in store.alter(
        [upsert("few", 1000), upsert("many", 20000), upsert("", 4096), upsert("mech", mechanism=0),
         upsert("twice"), upsert("twice")],
        [Deletion("ghost", 2)])}
    assert results == {
        "few": (ErrorCode.unacceptable_credential, "Too few iterations"),
        "many": (ErrorCode.unacceptable_credential, "Too many iterations"),
        "": (ErrorCode.unacceptable_credential, "Username must not be empty"),
        "mech": (ErrorCode.unsupported_sasl_mechanism, "Unknown SCRAM mechanism"),
        "twice": (ErrorCode.duplicate_resource, "A user credential cannot be altered twice in the same request"),
        "ghost": (ErrorCode.resource_not_found, "Attempt to delete a user credential that does not exist"),
    }
    assert store.users() == {}
    assert not (tmp_path / CREDENTIALS_FILE).exists()  # nothing valid: nothing written


def test_delete_removes_one_mechanism(tmp_path):
    store = CredentialStore.open(tmp_path)
    store.alter([upsert("bob", mechanism=1)], [])
    store.alter([upsert("bob", mechanism=2)], [])
    assert store.alter([], [Deletion("bob", 1)])[0].error_code == ErrorCode.none
    assert CredentialStore.open(tmp_path).users() == {"bob": [(SHA512, 4096)]}


def test_a_leftover_temporary_file_does_not_replace_the_credentials(tmp_path):
    store = CredentialStore.open(tmp_path)
    store.alter([upsert("carol")], [])
    (tmp_path / (CREDENTIALS_FILE + ".tmp")).write_text("{torn")  # a crash mid-write
    assert CredentialStore.open(tmp_path).users() == {"carol": [(SHA512, 4096)]}


def test_a_damaged_file_is_refused_with_a_clear_error(tmp_path):
    import pytest

    (tmp_path / CREDENTIALS_FILE).write_text("{not json")
    with pytest.raises(ValueError, match="not a credentials file"):
        CredentialStore.open(tmp_path)
