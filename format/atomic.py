"""Atomic file writes: a temp file in the target's folder, fsync, rename.

A reader never sees a half-written file, and a failed write leaves the old file (or
nothing) in place: the temp file is removed on any error, KeyboardInterrupt included.
A process killed mid-write (SIGKILL, power loss) cannot remove it, so the temp name
carries the writer's pid and host, `<prefix><pid>-<host>-<random>.tmp`, and
`remove_stale_temp_files` deletes those whose writer is gone.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import socket
import tempfile
import zlib

# This host in temp names: a folder on a shared file system may hold the temp files of
# live writers on other hosts, whose pids mean nothing here.
_HOST = f"{zlib.crc32(socket.gethostname().encode('utf-8', 'replace')):08x}"


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "wb", prefix: str = ".tmp-"):
    """Open a temp file next to `path` for writing ("wb" or "w"); when the block ends
    without an error it is flushed, fsynced and renamed onto `path`, and the folder is
    fsynced. On an error the temp file is removed and the error propagates.

    Raises:
        ValueError: mode is not a write mode ("wb" or "w").
        IsADirectoryError: path is empty, ends in a separator or names a folder.
        FileNotFoundError: the folder does not exist.
        OSError: the file system refused.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_open: mode must be 'wb' or 'w', got {mode!r}")
    path = os.fspath(path)
    # Errors name `path`, not the temp file: check what mkstemp and the rename would
    # trip over first
    if not path or path.endswith(("/", os.sep)):
        raise IsADirectoryError(errno.EISDIR, "not a file name", path)
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "is a directory", path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, "its folder does not exist", path)
    fd, tmp = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}-{_HOST}-", suffix=".tmp",
                               dir=folder)
    try:
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            # mkstemp makes the file 0600; give it the mode a plain open() would
            # (or keep the replaced file's), so other users can still read it
            if hasattr(os, "fchmod"):  # POSIX
                os.fchmod(f.fileno(), _mode_for(path))
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(folder)


def remove_stale_temp_files(folder: str | os.PathLike, prefixes=(".tmp-",)) -> list[str]:
    """Delete the temp files that `atomic_open` calls (with one of `prefixes`) left in
    `folder` because their process died mid-write: those made on this host by a pid
    that is no longer running. Temp files of live processes or other hosts, and every
    other file, are kept. Does nothing where processes cannot be probed (not POSIX).

    Returns:
        The paths removed. Never raises: a file that cannot be removed is skipped.
    """
    if os.name != "posix":  # os.kill(pid, 0) would terminate the process on Windows
        return []
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    pattern = re.compile("(?:%s)([0-9]+)-%s-[^/]*[.]tmp" % (
        "|".join(re.escape(p) for p in prefixes), _HOST))
    removed = []
    for name in names:
        m = pattern.fullmatch(name)
        if m is None or _alive(int(m.group(1))):
            continue
        path = os.path.join(os.fspath(folder), name)
        try:
            os.unlink(path)
        except OSError:
            continue
        removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    """Whether a process `pid` exists (a reused pid counts: its file is kept)."""
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, as another user
        return True
    return True


def _mode_for(path: str) -> int:
    """The permission bits `path` should get: those of the file it replaces, else
    0666 less the process's umask (what open() would create)."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    # /proc tells without changing anything; os.umask must set it to read it
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def fsync_dir(folder: str) -> None:
    """Flush a folder's entries (a rename into it) to disk where the platform allows."""
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. platforms without directory fds
        return
    try:
        os.fsync(dfd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(dfd)
