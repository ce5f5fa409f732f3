"""Why the broker cannot start, in one line an operator can act on (issue 17: start-up refusals printed
Python tracebacks).

``explain`` maps what a user can cause — a data directory another broker holds, a read-only or full
filesystem, a file without permission, an address in use, a descriptor limit, a configuration file missing
or malformed, a setting with a bad value — to one sentence saying what is wrong and what to do. The command
line prints it to stderr and exits with status 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import errno

from groupcoord.coordinator.ops.data_dir_lock import DataDirInUse

EXIT_REFUSED = 2


def explain_config_error(exc: BaseException) -> str | None:
    """A configuration that cannot be read or has a bad value."""
    import tomllib  # only when something failed: start-up does not pay for it (863d480)

    if isinstance(exc, tomllib.TOMLDecodeError):
        return f"the configuration file is not valid TOML: {exc}"
    if isinstance(exc, FileNotFoundError):
        return f"the configuration file {exc.filename} does not exist"
    if isinstance(exc, PermissionError):
        return f"the configuration file {exc.filename} cannot be read: permission denied"
    if isinstance(exc, IsADirectoryError):
        return f"the configuration file {exc.filename} is a directory"
    if isinstance(exc, OSError):
        return f"the configuration file {exc.filename} cannot be read: {exc.strerror}"
    if isinstance(exc, KeyError):
        return f"bad configuration: {exc.args[0] if exc.args else exc}"
    if isinstance(exc, ValueError):
        return f"bad setting {exc}"
    return None


def explain_start_error(exc: BaseException, data_dir: str, listen: str) -> str | None:
    """A start the environment refuses; None when the failure is not one a user can cause."""
    if isinstance(exc, DataDirInUse):
        return (f"the data directory {data_dir} is in use by another groupcoord process (it holds "
                f"{data_dir}/.lock): stop that broker or give this one another --data-dir")
    if isinstance(exc, (KeyError, ValueError)) and not isinstance(exc, OSError):
        return explain_config_error(exc)
    if not isinstance(exc, OSError):
        return None
    where = f" ({exc.filename})" if exc.filename else ""
    code = exc.errno
    if code == errno.EADDRINUSE:
        return f"cannot listen on {listen}: the address is already in use; stop what holds it or pick another --listen"
    if code == errno.EADDRNOTAVAIL:
        return f"cannot listen on {listen}: no interface of this machine has that address; check --listen"
    if code == errno.EROFS:
        return f"the data directory {data_dir} is on a read-only filesystem{where}: remount it read-write or use another --data-dir"
    if code in (errno.ENOSPC, errno.EDQUOT):
        return f"no space left on the device of the data directory {data_dir}{where}: free some space or use another --data-dir"
    if code in (errno.EACCES, errno.EPERM):
        return f"permission denied{where}: the broker's user must be able to write the data directory {data_dir}"
    if code in (errno.EMFILE, errno.ENFILE):
        return (f"too many open files{where}: raise the limit (ulimit -n) or lower log.max.open.files")
    if code == errno.ENOTDIR:
        return f"the data directory {data_dir} is not a directory{where}"
    if code == errno.EIO:
        return f"I/O error reading or writing the data directory {data_dir}{where}: check the disk"
    return f"cannot start: {exc.strerror or exc}{where}"
