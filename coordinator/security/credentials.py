"""SCRAM credentials kept in the data directory (Kafka keeps them in its metadata log; we keep one file).

``scram-credentials.json`` holds, per user and mechanism, what a SCRAM server needs and nothing more: the
salt, StoredKey, ServerKey and iteration count — never a password. Every change rewrites the file crash-
safely (write a temporary file, fsync it, rename it over the old one, fsync the directory), so a crash
leaves either the old or the new set, and it is readable by its owner only.

Changes arrive from AlterUserScramCredentials (Kafka's admin clients, ``groupcoord users`` over the wire) or
from ``groupcoord users`` offline while no broker holds the data directory. Validation is Kafka's
ScramControlManager's, with its error codes and texts, so the answer to a bad upsertion is the same.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from groupcoord.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from .credential_changes import Deletion, Result, Upsertion
    from .scram import ScramCredential, ScramMechanism

# scram.py (its mechanisms, message patterns and five dataclasses) is imported where a credential is read, made or
# checked, not with this module: the broker opens its store at every start, and most stores are empty. So is
# credential_changes.py (what AlterUserScramCredentials changes and answers: three frozen dataclasses, ~1 % of the
# daemon's start-up); its names are still importable from here.
_CHANGES = ("Upsertion", "Deletion", "Result")


def __getattr__(name: str) -> object:
    if name in _CHANGES:
        from . import credential_changes

        return getattr(credential_changes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


CREDENTIALS_FILE = "scram-credentials.json"
FORMAT_VERSION = 1


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


class CredentialStore:
    """The SCRAM credentials of one broker; ``lookup`` is what the SCRAM server calls (a dict look-up)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._credentials: dict[tuple[str, ScramMechanism], ScramCredential] = {}

    @classmethod
    def open(cls, data_dir: Path) -> "CredentialStore":
        store = cls(Path(data_dir) / CREDENTIALS_FILE)
        store.load()
        return store

    @classmethod
    def in_memory(cls) -> "CredentialStore":
        return cls(None)

    def load(self) -> None:
        if self.path is None or not self.path.exists():
            return
        from .scram import ScramCredential, ScramMechanism

        try:
            raw = json.loads(self.path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{self.path} is not a credentials file ({exc}); restore it from a backup, or move it "
                             "away to start without SCRAM users") from None
        if not isinstance(raw, dict) or raw.get("version") != FORMAT_VERSION:
            raise ValueError(f"{self.path}: unknown credentials format "
                             f"{raw.get('version') if isinstance(raw, dict) else type(raw).__name__!r}")
        loaded = {}
        for user, mechanisms in raw.get("users", {}).items():
            for name, c in mechanisms.items():
                mechanism = ScramMechanism.by_name(name)
                if mechanism is None:
                    raise ValueError(f"{self.path}: unknown mechanism {name!r} for user {user!r}")
                loaded[(user, mechanism)] = ScramCredential(
                    base64.b64decode(c["salt"]), base64.b64decode(c["stored_key"]), base64.b64decode(c["server_key"]),
                    int(c["iterations"]))
        self._credentials = loaded

    def _save(self) -> None:
        if self.path is None:
            return
        users: dict[str, dict[str, dict[str, object]]] = {}
        for (user, mechanism), c in sorted(self._credentials.items(), key=lambda kv: (kv[0][0], kv[0][1].wire_type)):
            users.setdefault(user, {})[mechanism.mechanism_name] = {
                "salt": _b64(c.salt), "stored_key": _b64(c.stored_key), "server_key": _b64(c.server_key),
                "iterations": c.iterations}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(self.path, json.dumps({"version": FORMAT_VERSION, "users": users}, indent=1) + "\n")

    # -- reading ----------------------------------------------------------------------------------
    def lookup(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        return self._credentials.get((user, mechanism))

    def users(self) -> dict[str, list[tuple[ScramMechanism, int]]]:
        """Every user with its mechanisms and iteration counts (what DescribeUserScramCredentials shows)."""
        out: dict[str, list[tuple[ScramMechanism, int]]] = {}
        for (user, mechanism), c in self._credentials.items():
            out.setdefault(user, []).append((mechanism, c.iterations))
        for infos in out.values():
            infos.sort(key=lambda i: i[0].wire_type)
        return out

    # -- changing (Kafka's ScramControlManager.alterCredentials) ------------------------------------
    def alter(self, upsertions: Iterable[Upsertion], deletions: Iterable[Deletion]) -> list[Result]:
        """Apply what is valid, all at once, and answer one result per user as Kafka does: a user named
        twice in one request gets DUPLICATE_RESOURCE and none of its changes is applied."""
        from .credential_changes import Result, validate_upsertion
        from .scram import ScramMechanism

        to_delete: dict[str, Deletion] = {}
        to_upsert: dict[str, Upsertion] = {}
        errors: dict[str, Result] = {}
        dup = "A user credential cannot be altered twice in the same request"
        for d in deletions:
            if d.name in errors:
                continue
            if to_delete.pop(d.name, None) is not None:
                errors[d.name] = Result(d.name, ErrorCode.duplicate_resource, dup)
                continue
            error = self._validate_deletion(d)
            if error is not None:
                errors[d.name] = error
            else:
                to_delete[d.name] = d
        for u in upsertions:
            if u.name in errors:
                continue
            if to_delete.pop(u.name, None) is not None or to_upsert.pop(u.name, None) is not None:
                errors[u.name] = Result(u.name, ErrorCode.duplicate_resource, dup)
                continue
            error = validate_upsertion(u)
            if error is not None:
                errors[u.name] = error
            else:
                to_upsert[u.name] = u
        results: list[Result] = []
        changed = dict(self._credentials)
        for d in to_delete.values():
            mechanism = ScramMechanism.by_type(d.mechanism)
            assert mechanism is not None
            changed.pop((d.name, mechanism), None)
            results.append(Result(d.name))
        for u in to_upsert.values():
            mechanism = ScramMechanism.by_type(u.mechanism)
            assert mechanism is not None
            changed[(u.name, mechanism)] = mechanism.credential(u.salt, u.salted_password, u.iterations)
            results.append(Result(u.name))
        results.extend(errors.values())
        if to_delete or to_upsert:
            previous = self._credentials
            self._credentials = changed
            try:
                self._save()
            except OSError:
                self._credentials = previous
                raise
        return results

    def set_password(self, user: str, mechanism: ScramMechanism, password: str, iterations: int) -> Result:
        """The CLI's convenience: a fresh salt, then the same validated path as the wire."""
        from .credential_changes import Upsertion
        from .scram import secure_random_string

        salt = secure_random_string().encode()
        salted = mechanism.salted_password(password, salt, iterations)
        return self.alter([Upsertion(user, mechanism.wire_type, iterations, salt, salted)], [])[0]

    def _validate_deletion(self, d: Deletion) -> Result | None:
        from .credential_changes import Result, validate_name_and_mechanism
        from .scram import ScramMechanism

        error = validate_name_and_mechanism(d.name, d.mechanism)
        if error is not None:
            return error
        mechanism = ScramMechanism.by_type(d.mechanism)
        assert mechanism is not None
        if (d.name, mechanism) not in self._credentials:
            return Result(d.name, ErrorCode.resource_not_found, "Attempt to delete a user credential that does not exist")
        return None
