"""Atomic file writes: a temp file in the target's folder, fsync, rename.

A reader never sees a half-written file, and a failed write leaves the old file (or
nothing) in place: the temp file is removed on any error, KeyboardInterrupt included.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "wb", prefix: str = ".tmp-"):
    """Open a temp file next to `path` for writing ("wb" or "w"); when the block ends
    without an error it is flushed, fsynced and renamed onto `path`, and the folder is
    fsynced. On an error the temp file is removed and the error propagates.

    Raises:
        ValueError: mode is not a write mode ("wb" or "w").
        OSError: the folder does not exist or the file system refused.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_open: mode must be 'wb' or 'w', got {mode!r}")
    path = os.fspath(path)
    if os.path.isdir(path):  # else the rename's error would name the temp file
        raise IsADirectoryError(errno.EISDIR, "is a directory", path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
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
