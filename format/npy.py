"""Reading user-supplied .npy and .npz files without pickle, with one-line errors.

numpy's loader raises many exception types on a malformed header (ValueError,
OverflowError, SyntaxError, tokenize errors, MemoryError for claimed sizes) and its
messages span lines and advise turning pickle on; the CLI commands need a single
FormatError naming the file instead (pickle stays off).
"""

from __future__ import annotations

import io
import os
import zipfile

import numpy as np

from ..errors import FormatError
from .atomic import cannot_read

_NPY_MAGIC = b"\x93NUMPY"


def _reason(e: BaseException) -> str:
    """The first line of numpy's message, without its advice to allow pickle."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if "allow_pickle" in text:
        return "it holds Python objects, which load only through pickle (refused)"
    return text


def load_npy(path: str | os.PathLike) -> np.ndarray:
    """The array stored in a .npy file, refusing pickled objects.

    Raises:
        FormatError: the file cannot be read, is not a .npy file, or is malformed
            (one line naming the file).
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            magic = f.read(len(_NPY_MAGIC))
            if magic != _NPY_MAGIC:
                raise FormatError(f"{path} is not a .npy file (starts with {magic!r}, "
                                  f"expected {_NPY_MAGIC!r})")
            if f.seekable():
                f.seek(0)
                return np.load(f, allow_pickle=False)
            # a pipe (/dev/stdin, a shell's <(...)): numpy's reader seeks, so the rest
            # is read into memory first
            return np.load(io.BytesIO(magic + f.read()), allow_pickle=False)
    except FormatError:
        raise
    except OSError as e:
        raise FormatError(cannot_read(e, path)) from None
    except Exception as e:  # noqa: BLE001 - numpy's header parser raises many types
        raise FormatError(f"{path} is not a plain .npy array: {_reason(e)}") from None


def load_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Every array of an .npz archive (numpy.savez), refusing pickled objects and
    members that are not .npy arrays.

    Raises:
        FormatError: the file cannot be read, is not an .npz archive, or a member is
            malformed (one line naming the file and the member).
    """
    path = os.fspath(path)
    member = None
    try:
        with open(path, "rb") as f:
            if f.seekable():
                magic, source = f.read(4), path
            else:  # a pipe (`--data /dev/stdin`): a zip archive is read by seeking
                source = io.BytesIO(f.read())
                magic = source.getvalue()[:4]
        if magic[:2] != b"PK":
            raise FormatError(f"{path} is not an .npz archive (starts with {magic!r}); "
                              "save arrays with numpy.savez")
        out = {}
        with np.load(source, allow_pickle=False) as archive:
            for member in archive.files:
                value = archive[member]
                if not isinstance(value, np.ndarray):
                    raise FormatError(f"{path}: member {member!r} is not a .npy array")
                out[member] = value
        return out
    except FormatError:
        raise
    except OSError as e:
        raise FormatError(f"cannot read {path!r}: {e.strerror or e}") from None
    except Exception as e:  # noqa: BLE001 - zipfile and numpy raise many types
        where = f" (member {member!r})" if member is not None else ""
        kind = "archive" if isinstance(e, zipfile.BadZipFile) else "array"
        raise FormatError(f"{path}{where} is not a plain .npz {kind}: {_reason(e)}") \
            from None
