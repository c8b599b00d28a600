"""Atomic file writes: a temp file in the target's folder, fsync, rename.

A reader never sees a half-written file, and a failed write leaves the old file (or
nothing) in place: the temp file is removed on any error, KeyboardInterrupt included.
A process killed mid-write (SIGKILL, power loss) cannot remove it, so the temp name
carries the writer's pid and host, `<prefix><pid>-<host>-<random>.tmp`, and
`remove_stale_temp_files` deletes those whose writer is gone. `AtomicFiles` writes
several files that replace their targets together, and `check_writable` tells before
a long run whether its results could be written. Errors name the file the caller
asked for, never a temp file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import socket
import stat
import sys
import tempfile
import zlib

# This host in temp names: a folder on a shared file system may hold the temp files of
# live writers on other hosts, whose pids mean nothing here.
_HOST = f"{zlib.crc32(socket.gethostname().encode('utf-8', 'replace')):08x}"


# -- one wording for a file that cannot be read or written -----------------------------
#
# The rule (the Python API and the CLI say the same words):
#
# - `og.load` / `load_model`, `og.save` / `save_model`, `atomic_open` and everything
#   writing through it raise the OSError subclass the operating system gave
#   (FileNotFoundError, PermissionError, IsADirectoryError, ...), as Python's own
#   `open()` does, with `errno`, `strerror` and `filename` set; only the message is
#   worded here: "cannot read 'PATH': No such file or directory", "cannot write 'PATH':
#   the folder does not exist".
# - `from_onnx` / `to_onnx` raise `ConversionError` for every failure, a missing or
#   unwritable file included, with the same sentence as its message.
# - A path that is not a str, bytes or os.PathLike is a TypeError; a path with a NUL
#   byte (which no file system accepts) is a ValueError, worded the same way. Bytes
#   paths are decoded with `os.fsdecode`, so messages always show a str.
# - The CLI prints `onegraph <command>: <ErrorType>: <the same sentence>`.

def fs_path(path, verb: str = "read") -> str:
    """`path` as a str (bytes decoded with `os.fsdecode`), checked for a NUL byte.

    Args:
        path: a str, bytes or os.PathLike.
        verb: "read" or "write", for the message.

    Raises:
        TypeError: path is not a str, bytes or os.PathLike.
        ValueError: "cannot VERB 'PATH': the path contains a NUL byte".
    """
    given = path
    try:
        path = os.fsdecode(os.fspath(path))
    except TypeError:
        raise TypeError(f"a file path must be a str, bytes or os.PathLike, got "
                        f"{type(path).__name__}") from None
    if "\0" in path:
        # most often a file's contents passed where its name goes: show a bounded part
        shown = repr(path) if len(path) <= 80 else \
            f"{path[:24]!r}... ({len(path)} characters)"
        from .writer import FILE_IDENTIFIER  # (writer imports this module)

        hint = ""
        if isinstance(given, bytes) and given[4:8] == FILE_IDENTIFIER:
            hint = " (these bytes are a .og model: onegraph.format.parse reads one from memory)"
        raise ValueError(f"cannot {verb} {shown}: the path contains a NUL byte{hint}")
    return path


def _reason(e: BaseException) -> str:
    """Why, without the errno or the path: "No such file or directory"."""
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    if isinstance(e, OSError) and e.errno is not None:  # pragma: no cover - no strerror
        return os.strerror(e.errno)
    return str(e)


def _shown(path) -> str | None:
    if path is None:
        return None
    try:
        return os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
    except TypeError:  # pragma: no cover - an odd PathLike
        return str(path)


def cannot(verb: str, e: BaseException, path=None) -> str:
    """The sentence: "cannot VERB 'PATH': REASON" (the path once, no errno).

    Args:
        verb: "read" or "write".
        e: the error; its `filename` is the path unless `path` is given.
        path: the file to name (default: `e.filename`).
    """
    shown = _shown(path if path is not None else getattr(e, "filename", None))
    reason = _reason(e)
    return f"cannot {verb} {shown!r}: {reason}" if shown is not None else \
        f"cannot {verb}: {reason}"


def cannot_read(e: BaseException, path=None) -> str:
    """"cannot read 'PATH': No such file or directory"."""
    return cannot("read", e, path)


def cannot_write(e: BaseException, path=None) -> str:
    """"cannot write 'PATH': the folder does not exist"."""
    return cannot("write", e, path)


def worded(e: OSError, verb: str, path=None) -> OSError:
    """An error of `e`'s own OSError subclass, with its errno, strerror and the
    filename `path` (default: `e.filename`), whose message is `cannot(verb, ...)`.

    An error without an errno (raised by a caller's own code, not the file system)
    and an error already worded are returned as they are.
    """
    if e.errno is None or isinstance(e, _Worded):
        return e
    path = _shown(path if path is not None else e.filename)
    out = _worded_class(type(e))(e.errno, e.strerror or os.strerror(e.errno), path)
    out._message = cannot(verb, out, path)
    return out


def new_error(cls: type[OSError], err: int, reason: str, verb: str, path) -> OSError:
    """A worded error of class `cls` for errno `err`: "cannot VERB 'PATH': REASON"."""
    return worded(cls(err, reason, _shown(path)), verb)


def is_worded(e: BaseException) -> bool:
    """Whether `e` is an OSError worded here (its message is the shared sentence)."""
    return isinstance(e, _Worded)


class _Worded:
    """Mixin of the worded OSError subclasses: the message is the shared sentence."""

    def __str__(self) -> str:
        return self._message

    def __reduce__(self):
        return (_rebuild, (type(self).__mro__[2], self.errno, self.strerror,
                           self.filename, self._message))


_CLASSES: dict[type, type] = {}


def _worded_class(cls: type[OSError]) -> type[OSError]:
    """A subclass of `cls` with the same name (the CLI prints the type's name)."""
    found = _CLASSES.get(cls)
    if found is None:
        found = type(cls.__name__, (_Worded, cls),
                     {"__module__": cls.__module__, "__qualname__": cls.__qualname__})
        _CLASSES[cls] = found
    return found


def _rebuild(cls, err, strerror, filename, message):
    out = _worded_class(cls)(err, strerror, filename)
    out._message = message
    return out


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "wb", prefix: str = ".tmp-"):
    """Open a temp file next to `path` for writing ("wb" or "w"); when the block ends
    without an error it is flushed, fsynced and renamed onto `path`, and the folder is
    fsynced. On an error the temp file is removed and the error propagates. Errors of
    the file system name `path`, never the temp file.

    `path` may be a str, bytes (decoded with os.fsdecode) or os.PathLike. File system
    errors keep their OSError subclass and are worded "cannot write 'PATH': REASON"
    (see `worded`).

    Raises:
        TypeError: path is not a str, bytes or os.PathLike.
        ValueError: mode is not a write mode ("wb" or "w"), or path has a NUL byte.
        IsADirectoryError: path is empty, ends in a separator or names a folder.
        NotADirectoryError: path's folder part names a file.
        FileNotFoundError: the folder does not exist.
        OSError: the file system refused (e.g. PermissionError), naming `path`.
    """
    path = _write_path(path, mode)
    if _is_stream(path):
        with _stream_file(path, mode) as f:
            yield f
        return
    path = _through_links(path)
    written: list[tuple[str, str]] = []
    try:
        with _temp_file(path, mode, prefix, written) as f:
            yield f
        _rename_all(written)
    except BaseException:
        # an interrupt (KeyboardInterrupt, SystemExit from a SIGTERM handler) between
        # the write and the rename: no complete but orphaned temp file stays behind
        for tmp, _ in written:
            _remove(tmp)
        raise
    # temp files of writers that died here (SIGKILL, a crash) before renaming theirs
    remove_stale_temp_files(os.path.dirname(os.path.abspath(path)), (prefix,))


class AtomicFiles:
    """Several files that replace their targets together or not at all.

    `open(path)` is `atomic_open` without the rename: the data goes to a fsynced temp
    file next to `path`. `commit()` (the end of a `with` block without an error) checks
    every target first, so a target that became a folder fails before anything is
    renamed, then renames all of them; `discard()` (any error in the block) removes
    the temp files and leaves every target as it was.

        with AtomicFiles() as files:
            with files.open("out/a.npy") as f:
                np.save(f, a)
            with files.open("out/b.npy") as f:
                np.save(f, b)   # an error here leaves neither a.npy nor b.npy changed
    """

    def __init__(self, prefix: str = ".tmp-"):
        self._prefix = prefix
        self._written: list[tuple[str, str]] = []  # (temp file, target), complete

    def open(self, path: str | os.PathLike, mode: str = "wb"):
        """A context manager writing the future content of `path` ("wb" or "w").

        Raises:
            ValueError: a bad mode, or `path` is already written in this group.
            OSError: as `atomic_open`, naming `path`.
        """
        path = _write_path(path, mode)
        if _is_stream(path):
            return _stream_file(path, mode)
        path = _through_links(path)
        if any(os.path.abspath(target) == os.path.abspath(path)
               for _, target in self._written):
            raise ValueError(f"AtomicFiles: {path!r} is written twice")
        return _temp_file(path, mode, self._prefix, self._written)

    def commit(self) -> None:
        """Rename every written temp file onto its target.

        Raises:
            OSError: a target cannot be replaced (nothing is renamed if that is known
                before the first rename), naming the target.
        """
        try:
            for _, target in self._written:
                _target_folder(target)
        except BaseException:
            self.discard()
            raise
        written, self._written = self._written, []
        _rename_all(written)

    def staged(self, path: str | os.PathLike) -> str:
        """The temp file holding the future content of `path` (written and closed
        in this group, not yet renamed): to check it in place before `commit()`.

        Raises:
            KeyError: `path` was not written in this group.
        """
        path = os.path.abspath(_through_links(_write_path(path, "wb")))
        for tmp, target in self._written:
            if os.path.abspath(target) == path:
                return tmp
        raise KeyError(path)

    def discard(self) -> None:
        """Remove the temp files written so far; the targets stay as they were."""
        written, self._written = self._written, []
        for tmp, _ in written:
            _remove(tmp)

    def __enter__(self) -> "AtomicFiles":
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            try:
                self.commit()
            except BaseException:  # an interrupt in the commit: drop what is left
                self.discard()
                raise
        else:
            self.discard()


def check_writable(path: str | os.PathLike, folder: bool = False) -> None:
    """Raise now the error that writing the file `path` with `atomic_open` would raise
    for its place (a folder, a missing or read-only folder), so a command can fail
    before its long work rather than after it. With `folder=True`, `path` is a folder
    that files will be written into, created with its missing parents if need be.
    Creates and leaves nothing.

    Raises:
        IsADirectoryError: the file `path` is a folder (or an empty name).
        NotADirectoryError: with folder=True, `path` or a parent of it is a file;
            without, the folder part of `path` names a file.
        FileNotFoundError: the folder of the file `path` does not exist.
        OSError: the file system refuses to create files there, naming `path`.
    """
    path = fs_path(path, "write")
    if not folder and _is_stream(path):
        fd = _open_descriptor(path)
        if fd is not None:
            try:
                os.fstat(fd)
            except OSError as e:
                raise _naming(e, path) from e
        elif not os.access(path, os.W_OK):
            raise new_error(PermissionError, errno.EACCES, "Permission denied", "write", path)
        return
    if folder and os.path.islink(path) and not os.path.exists(path):
        raise new_error(FileNotFoundError, errno.ENOENT,
                        "a symbolic link to nothing (dangling)", "write", path)
    if not folder:
        path = _through_links(path)
    if folder:
        where = os.path.abspath(path) if path else ""
        while where and not os.path.exists(where):  # the folder makedirs would start in
            where = os.path.dirname(where)
        if not os.path.isdir(where):
            raise new_error(NotADirectoryError, errno.ENOTDIR, "not a directory", "write", path)
    else:
        where = _target_folder(path)
    try:
        with tempfile.TemporaryFile(dir=where):
            pass
    except OSError as e:
        raise _naming(e, path) from e


_STANDARD_STREAMS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_FD_PATH = re.compile(r"/(?:dev/fd|proc/self/fd)/(\d+)")


def _open_descriptor(path: str) -> int | None:
    """The file descriptor `path` names (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`),
    or None. Such a path is written through the descriptor itself: re-opening it would
    truncate a file the shell opened for appending (`>> log`), and a rename would
    replace that file instead of writing into the stream."""
    if path in _STANDARD_STREAMS:
        return _STANDARD_STREAMS[path]
    found = _FD_PATH.fullmatch(path)
    return int(found.group(1)) if found else None


def _is_stream(path: str) -> bool:
    """Whether `path` names an open descriptor (see `_open_descriptor`) or an existing
    device, pipe or socket (a FIFO): such a target is written straight through, as a
    shell's `>` does; a temp file and a rename would replace the device node (or fail
    next to it) instead."""
    if _open_descriptor(path) is not None:
        return True
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    return not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode)


def _through_links(path: str) -> str:
    """The file a symbolic link `path` points at (resolved fully), so the rename
    replaces that file and the link stays a link; `path` itself otherwise."""
    return os.path.realpath(path) if os.path.islink(path) else path


@contextlib.contextmanager
def _stream_file(path: str, mode: str):
    """`path` (a descriptor, device or pipe) opened for writing, its errors naming
    `path`; a descriptor is written through a duplicate of it, at its position."""
    fd = _open_descriptor(path)
    if fd in (1, 2):  # what Python has printed but not yet flushed comes first
        for stream in (sys.stdout, sys.stderr):
            if stream is not None and not stream.closed:
                stream.flush()
    try:
        with (os.fdopen(os.dup(fd), mode) if fd is not None else open(path, mode)) as f:
            yield f
    except OSError as e:
        if e.filename in (None, path):
            raise _naming(e, path) from e
        raise


def _write_path(path, mode: str) -> str:
    """`path` as a str (a bytes path decoded), after checking `mode`.

    Raises:
        ValueError: a bad mode, or a NUL byte in the path.
        TypeError: path is not a str, bytes or os.PathLike.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_open: mode must be 'wb' or 'w', got {mode!r}")
    return fs_path(path, "write")


def _target_folder(path: str) -> str:
    """The folder `path` is written into, after refusing what mkstemp and the rename
    would trip over: their errors would name the temp file, these name `path`."""
    if not path or path.endswith(("/", os.sep)):
        raise new_error(IsADirectoryError, errno.EISDIR, "not a file name", "write", path)
    if os.path.isdir(path):
        raise new_error(IsADirectoryError, errno.EISDIR, "is a directory", "write", path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        if os.path.exists(folder):  # "the folder does not exist" would send one looking
            raise new_error(NotADirectoryError, errno.ENOTDIR,
                            f"{_parent_shown(path)} is a file, not a folder", "write", path)
        raise new_error(FileNotFoundError, errno.ENOENT, "the folder does not exist",
                        "write", path)
    return folder


def _parent_shown(path: str) -> str:
    """The folder part of `path` as the user wrote it, quoted."""
    return repr(os.path.dirname(os.fsdecode(path)) or ".")


def _naming(e: OSError, path: str) -> OSError:
    """`e` naming `path` instead of a temp file, worded "cannot write 'PATH': REASON"
    (`worded`); OSError(errno, ...) makes the subclass the errno calls for
    (FileNotFoundError, PermissionError, ...). An error without an errno (raised by
    the caller's own code in the block) is kept as it is."""
    if e.errno is None:
        return e
    return worded(OSError(e.errno, e.strerror or str(e), path), "write")


@contextlib.contextmanager
def _temp_file(path: str, mode: str, prefix: str, written: list):
    """Yield a temp file next to `path`; when the block ends without an error, flush,
    chmod and fsync it and append (temp file, path) to `written`; on an error remove it.
    OSErrors of the file system name `path`."""
    folder = _target_folder(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}-{_HOST}-",
                                   suffix=".tmp", dir=folder)
    except OSError as e:  # e.g. a read-only folder, or one like /proc
        raise _naming(e, path) from e
    try:
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            # mkstemp makes the file 0600; give it the mode a plain open() would
            # (or keep the replaced file's), so other users can still read it
            if hasattr(os, "fchmod"):  # POSIX
                os.fchmod(f.fileno(), _mode_for(path))
            os.fsync(f.fileno())
    except BaseException as e:
        _remove(tmp)
        # an error about another file raised inside the block keeps its own name
        if isinstance(e, OSError) and e.filename in (None, tmp):
            raise _naming(e, path) from e
        raise
    written.append((tmp, path))


def _rename_all(written: list) -> None:
    """Rename each (temp file, target) onto its target, then fsync their folders; on a
    failure remove the temp files not yet renamed.

    Raises:
        OSError: naming the target that could not be replaced.
    """
    for k, (tmp, path) in enumerate(written):
        try:
            os.replace(tmp, path)
        except BaseException as e:  # an interrupt too: remove what was not renamed
            for rest, _ in written[k:]:
                _remove(rest)
            if isinstance(e, OSError):
                raise _naming(e, path) from e
            raise
    for folder in dict.fromkeys(os.path.dirname(os.path.abspath(p)) for _, p in written):
        fsync_dir(folder)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


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
