"""og.gfile and og.io.gfile: TF1's tf.gfile (and TF2's tf.io.gfile) over local files.

Behaves as TF's do on a local filesystem: GFile opens lazily (a "w" file is created on its
first write), text mode reads and writes UTF-8 str, binary mode bytes; listings come in the
directory's own (readdir) order as TF's; Stat's mtime_nsec is whole seconds as TF's posix
filesystem gives it. Errors carry TF's messages. onegraph has no cloud filesystems: a path
with a scheme other than file:// raises UnsupportedOpError (TF's UnimplementedError).

errors.py has no AlreadyExistsError, FailedPreconditionError, PermissionDeniedError or
UnimplementedError; the closest existing classes stand in (the AlreadyExistsError... names).
"""

from __future__ import annotations

import errno
import fnmatch
import os
import shutil
import tempfile

from ..errors import (AlreadyExistsError, FailedPreconditionError, InvalidArgumentError,
                      NotFoundError, OneGraphError, PermissionDeniedError, UnimplementedError)
from .module_namespace import namespace

__all__ = ["GFile", "Open", "FastGFile", "FileStatistics", "Exists", "Glob", "IsDirectory",
           "ListDirectory", "MakeDirs", "MkDir", "Remove", "DeleteRecursively", "Rename",
           "Copy", "Stat", "Walk", "join", "walk_v2", "gfile_namespace",
           "io_gfile_namespace"]

# stand-ins for TF error classes errors.py does not have (one place to change them)

_MODES = ("r", "rb", "w", "wb", "a", "ab", "r+", "rb+", "r+b", "w+", "wb+", "w+b", "a+",
          "ab+", "a+b")
_GLOB_CHARS = ("*", "?", "[", "\\")


def _path(name) -> str:
    """A str path from str, bytes or os.PathLike; raises TypeError (TF's words) otherwise,
    UnsupportedOpError for a non-local filesystem scheme."""
    if isinstance(name, os.PathLike):
        name = os.fspath(name)
    if isinstance(name, bytes):
        name = name.decode("utf-8")
    if not isinstance(name, str):
        raise TypeError("Expected binary or unicode string, got %r" % (name,))
    scheme, sep, _ = name.partition("://")
    if sep and scheme != "file" and "/" not in scheme:
        raise UnimplementedError("File system scheme '%s' not implemented (file: '%s')"
                             % (scheme, name))
    return name


def _local(path: str) -> str:
    """The OS path of a checked path (file:// stripped)."""
    return path[len("file://"):] if path.startswith("file://") else path


def _os_error(error: OSError, path: str) -> Exception:
    """TF's error for a failed OS call on path: "<path>; <strerror>"."""
    message = "%s; %s" % (path, error.strerror or str(error))
    if error.errno == errno.ENOENT:
        return NotFoundError(message)
    if error.errno in (errno.EISDIR, errno.ENOTDIR, errno.ENOTEMPTY):
        return FailedPreconditionError(message)
    if error.errno in (errno.EACCES, errno.EPERM):
        return PermissionDeniedError(message)
    if error.errno == errno.EEXIST:
        return AlreadyExistsError(message)
    if error.errno == errno.EINVAL:
        return InvalidArgumentError(message)
    return OneGraphError(message)


class FileStatistics:
    """What Stat returns: length (bytes), mtime_nsec (whole seconds in ns, as TF's posix
    filesystem), is_directory."""

    def __init__(self, length: int, mtime_nsec: int, is_directory: bool):
        self.length = length
        self.mtime_nsec = mtime_nsec
        self.is_directory = is_directory

    def __repr__(self):
        return "FileStatistics(length=%d, mtime_nsec=%d, is_directory=%r)" % (
            self.length, self.mtime_nsec, self.is_directory)


class GFile:
    """TF's file object: GFile(name, mode="r") with mode r, rb, w, wb, a, ab (and "+"
    variants). Opens lazily; text modes give str (UTF-8), binary modes bytes. Raises
    ValueError for a bad mode, TypeError for a bad name, NotFoundError for a missing file
    (on first use), OneGraphError (TF's PermissionDenied) reading a write-only file or the
    reverse."""

    def __init__(self, name, mode: str = "r"):
        self._path = _path(name)
        if mode not in _MODES:
            raise InvalidArgumentError("mode is not 'r' or 'w' or 'a' or 'r+' or 'w+' or 'a+'")
        self.__name = name
        self.__mode = mode
        self._binary = "b" in mode
        self._readable = "r" in mode or "+" in mode
        self._writable = "w" in mode or "a" in mode or "+" in mode
        self._handle = None

    @property
    def name(self):
        """The name the file was opened with."""
        return self.__name

    @property
    def mode(self) -> str:
        """The mode the file was opened with."""
        return self.__mode

    def _open(self, for_write: bool):
        # opened on first use as TF's GFile, so "w" truncates only when written
        if for_write and not self._writable:
            raise PermissionDeniedError("File isn't open for writing")
        if not for_write and not self._readable:
            raise PermissionDeniedError("File isn't open for reading")
        if self._handle is None:
            raw_mode = {"r": "rb", "w": "wb", "a": "ab"}[self.__mode[0]]
            if "+" in self.__mode:
                raw_mode += "+"
            local = _local(self._path)
            if os.path.isdir(local):
                raise FailedPreconditionError("%s; Is a directory" % self._path)
            try:
                self._handle = open(local, raw_mode)
            except OSError as error:
                raise _os_error(error, self._path) from None
        return self._handle

    def _out(self, data: bytes):
        return data if self._binary else data.decode("utf-8")

    def size(self) -> int:
        """The file's size on disk in bytes (unflushed writes not counted, as TF's); raises
        NotFoundError when it is missing."""
        try:
            return os.stat(_local(self._path)).st_size
        except OSError as error:
            raise _os_error(error, self._path) from None

    def write(self, file_content) -> None:
        """Writes str (as UTF-8) or bytes; raises TypeError for anything else, OneGraphError
        (TF's PermissionDenied) on a read-only file."""
        if isinstance(file_content, str):
            file_content = file_content.encode("utf-8")
        elif not isinstance(file_content, (bytes, bytearray, memoryview)):
            raise TypeError("GFile.write takes str or bytes, got %s"
                            % type(file_content).__name__)
        self._open(True).write(file_content)

    def read(self, n: int = -1):
        """Reads n bytes (all when n is -1) from the current position; str in text mode."""
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError("GFile.read takes an int count, got %r" % (n,))
        handle = self._open(False)
        return self._out(handle.read() if n < 0 else handle.read(n))

    def readline(self):
        """The next line with its newline ('' or b'' at the end)."""
        return self._out(self._open(False).readline())

    def readlines(self) -> list:
        """The remaining lines, each with its newline."""
        return list(self)

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    next = __next__

    def seek(self, offset=None, whence: int = 0, position=None) -> None:
        """Moves the read position (whence 0 from the start, 1 from here, 2 from the end);
        raises ValueError for another whence, OneGraphError on a write-only file."""
        if position is not None:
            offset = position
        if offset is None:
            raise TypeError("GFile.seek needs an offset")
        handle = self._open(False)
        if whence not in (0, 1, 2):
            raise InvalidArgumentError("Invalid whence argument: %s. Valid values are 0, 1, or 2."
                             % (whence,))
        handle.seek(offset, whence)

    def tell(self) -> int:
        """The current position in bytes (bytes written so far on a writer)."""
        if self._handle is None:
            return self._open(not self._readable).tell()
        return self._handle.tell()

    def flush(self) -> None:
        """Writes buffered data to the file."""
        if self._handle is not None:
            self._handle.flush()

    def close(self) -> None:
        """Flushes and closes; the next read or write opens the file again (as TF's)."""
        if self._handle is not None:
            handle, self._handle = self._handle, None
            handle.close()

    def seekable(self) -> bool:
        """True: local files can seek."""
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass


Open = GFile


class FastGFile(GFile):
    """TF1's FastGFile: the same as GFile (TF deprecated it to GFile)."""


def Exists(filename) -> bool:
    """True when the file or directory exists; TypeError for a non-path."""
    return os.path.exists(_local(_path(filename)))


def IsDirectory(dirname) -> bool:
    """True when dirname is a directory."""
    return os.path.isdir(_local(_path(dirname)))


def ListDirectory(dirname) -> list:
    """The entry names of a directory in its own (readdir) order, as TF's; raises
    NotFoundError when it is not a directory."""
    path = _path(dirname)
    if not os.path.isdir(_local(path)):
        raise NotFoundError("Could not find directory %s" % path)
    try:
        return os.listdir(_local(path))
    except OSError as error:
        raise _os_error(error, path) from None


def _has_glob(part: str) -> bool:
    return any(c in part for c in _GLOB_CHARS)


def _child(base: str, name: str) -> str:
    return base.rstrip("/") + "/" + name if base else name


def _glob_one(pattern: str) -> list:
    """Matches of one pattern: fixed prefix, then each wildcard component expanded
    breadth-first in readdir order (TF's order)."""
    parts = pattern.split("/")
    first = next((i for i, p in enumerate(parts) if _has_glob(p)), None)
    if first is None:
        return [pattern] if os.path.exists(_local(pattern)) else []
    found = ["/".join(parts[:first]) or ("/" if pattern.startswith("/") else "")]
    for part in parts[first:]:
        step = []
        for base in found:
            local = _local(base) or "."
            if not part:
                # a trailing "/" keeps directories only
                if os.path.isdir(local):
                    step.append(base + "/")
                continue
            if not os.path.isdir(local):
                continue
            if not _has_glob(part):
                if os.path.exists(os.path.join(local, part)):
                    step.append(_child(base, part))
                continue
            for name in os.listdir(local):
                if fnmatch.fnmatchcase(name, part):
                    step.append(_child(base, name))
        found = step
    return found


def Glob(filename) -> list:
    """The paths matching a pattern (* ? [..] within one component), or the union over a
    list of patterns; [] when nothing matches."""
    patterns = filename if isinstance(filename, (list, tuple)) else [filename]
    out = []
    for pattern in patterns:
        out.extend(_glob_one(_path(pattern)))
    return out


def Walk(top, in_order: bool = True):
    """Yields (dirname, subdirs, files) for top and every directory below, parents first
    (in_order) or last; nothing when top is not a directory (as TF's)."""
    top = _path(top)
    try:
        names = ListDirectory(top)
    except OneGraphError:
        return
    subdirs = [n for n in names if os.path.isdir(os.path.join(_local(top), n))]
    files = [n for n in names if n not in set(subdirs)]
    here = (top, subdirs, files)
    if in_order:
        yield here
    for sub in subdirs:
        yield from Walk(os.path.join(top, sub), in_order)
    if not in_order:
        yield here


def Stat(filename) -> FileStatistics:
    """length, mtime_nsec and is_directory of a path; NotFoundError when it is missing."""
    path = _path(filename)
    try:
        st = os.stat(_local(path))
    except OSError as error:
        raise _os_error(error, path) from None
    return FileStatistics(st.st_size, int(st.st_mtime) * 10 ** 9, os.path.isdir(_local(path)))


def Remove(filename) -> None:
    """Deletes a file; NotFoundError when missing, OneGraphError (TF's FailedPrecondition)
    for a directory."""
    path = _path(filename)
    if os.path.isdir(_local(path)):
        raise FailedPreconditionError("%s; Is a directory" % path)
    try:
        os.remove(_local(path))
    except OSError as error:
        raise _os_error(error, path) from None


def DeleteRecursively(dirname) -> None:
    """Deletes a directory tree (or a single file); NotFoundError when missing."""
    path = _path(dirname)
    local = _local(path)
    if not os.path.lexists(local):
        raise NotFoundError("%s not found" % path)
    try:
        if os.path.isdir(local) and not os.path.islink(local):
            shutil.rmtree(local)
        else:
            os.remove(local)
    except OSError as error:
        raise _os_error(error, path) from None


def MkDir(dirname) -> None:
    """Creates one directory; nothing happens when the path exists (as TF 2's gfile);
    NotFoundError when the parent is missing."""
    path = _path(dirname)
    if os.path.exists(_local(path)):
        return
    try:
        os.mkdir(_local(path))
    except OSError as error:
        raise _os_error(error, path) from None


def MakeDirs(dirname) -> None:
    """Creates a directory and its missing parents; OneGraphError (TF's FailedPrecondition)
    when a component is a file."""
    path = _path(dirname)
    local = _local(path)
    parts = local.split("/")
    for i in range(1, len(parts) + 1):
        prefix = "/".join(parts[:i])
        if not prefix or not parts[i - 1]:
            continue
        if os.path.exists(prefix):
            if not os.path.isdir(prefix):
                raise FailedPreconditionError("%s is not a directory" % prefix)
            continue
        try:
            os.mkdir(prefix)
        except FileExistsError:
            continue  # made by someone else meanwhile
        except OSError as error:
            raise _os_error(error, prefix) from None


def Rename(oldname, newname, overwrite: bool = False) -> None:
    """Renames a file or directory; OneGraphError (TF's AlreadyExists) when newname exists
    and not overwrite, NotFoundError when oldname is missing."""
    old, new = _path(oldname), _path(newname)
    if not overwrite and os.path.exists(_local(new)):
        raise AlreadyExistsError("file already exists")
    try:
        os.rename(_local(old), _local(new))
    except OSError as error:
        raise _os_error(error, old) from None


def Copy(oldpath, newpath, overwrite: bool = False) -> None:
    """Copies a file (written to a temp file beside newpath, then moved into place);
    OneGraphError (TF's AlreadyExists) when newpath exists and not overwrite, NotFoundError
    when oldpath is missing, ValueError when oldpath is a directory."""
    old, new = _path(oldpath), _path(newpath)
    src, dst = _local(old), _local(new)
    if not overwrite and os.path.exists(dst):
        raise AlreadyExistsError("file already exists")
    if not os.path.exists(src):
        raise NotFoundError("%s; No such file or directory" % old)
    if os.path.isdir(src):
        raise InvalidArgumentError("%s; Invalid argument" % new)
    if os.path.isdir(dst):
        raise FailedPreconditionError("%s; Is a directory" % new)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".og-copy-", dir=os.path.dirname(dst) or ".")
    except OSError as error:
        raise _os_error(error, new) from None
    try:
        with os.fdopen(fd, "wb") as out, open(src, "rb") as source:
            shutil.copyfileobj(source, out)
        os.replace(tmp, dst)
    except OSError as error:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise _os_error(error, old) from None


def join(path, *paths) -> str:
    """Joins path components as os.path.join (TF's join for local paths)."""
    return os.path.join(_path(path), *[_path(p) for p in paths])


def walk_v2(top, topdown: bool = True, onerror=None):
    """TF2's tf.io.gfile.walk: Walk with topdown; onerror is called with a listing error
    of top instead of yielding nothing."""
    if onerror is not None:
        try:
            ListDirectory(top)
        except OneGraphError as error:
            onerror(error)
            return
    yield from Walk(top, in_order=topdown)


gfile_namespace = namespace("gfile", "TF1's tf.gfile over local files.", {
    "GFile": GFile, "Open": Open, "FastGFile": FastGFile, "Exists": Exists, "Glob": Glob,
    "IsDirectory": IsDirectory, "ListDirectory": ListDirectory, "MakeDirs": MakeDirs,
    "MkDir": MkDir, "Remove": Remove, "DeleteRecursively": DeleteRecursively,
    "Rename": Rename, "Copy": Copy, "Stat": Stat, "Walk": Walk})

io_gfile_namespace = namespace("io.gfile", "TF2's tf.io.gfile over local files.", {
    "GFile": GFile, "exists": Exists, "glob": Glob, "isdir": IsDirectory,
    "listdir": ListDirectory, "makedirs": MakeDirs, "mkdir": MkDir, "remove": Remove,
    "rename": Rename, "rmtree": DeleteRecursively, "stat": Stat, "walk": walk_v2,
    "copy": Copy, "join": join})
