"""Per-thread scratch memory for kernel temporaries.

Temporaries that never leave a kernel (im2col columns, padded copies, channels-last
images) are kept per thread and reused across calls: a fresh large numpy array is fresh
pages from the OS whenever malloc has returned them, and first-touch page faults (~3 us
per 4 KiB page on a VM) can cost more than the copy itself.
"""

from __future__ import annotations

import threading

import numpy as np

_SCRATCH = threading.local()
_SCRATCH_MIN = 1 << 16   # smaller blocks come from malloc's free lists anyway
_SCRATCH_MAX = 1 << 25   # larger ones are not worth pinning per thread (32 MiB each)


def scratch(purpose, shape, dtype):
    """An uninitialised array of `shape` reused across calls of this thread.

    Each `purpose` owns one buffer: a kernel must not hold two arrays of the same
    purpose at once, nor keep one after it returns.
    """
    dtype = np.dtype(dtype)
    nbytes = dtype.itemsize
    for d in shape:
        nbytes *= d
    if not _SCRATCH_MIN <= nbytes <= _SCRATCH_MAX:
        return np.empty(shape, dtype)
    pool = getattr(_SCRATCH, "pool", None)
    if pool is None:
        pool = _SCRATCH.pool = {}
    buf = pool.get(purpose)
    if buf is None or buf.nbytes < nbytes:
        buf = pool[purpose] = np.empty(nbytes + 64, np.uint8)
    # 64-byte aligned start
    start = -buf.ctypes.data % 64
    return buf[start:start + nbytes].view(dtype).reshape(shape)
