"""Per-thread scratch memory for kernel temporaries.

Temporaries that never leave a kernel (im2col columns, padded copies, channels-last
images) come from one arena per thread, kept across calls: a fresh large numpy array
is fresh pages from the OS whenever malloc has returned them, and first-touch page
faults (~3 us per 4 KiB page on a VM) can cost more than the copy itself.

The executors call `begin_kernel` before every step, and each call hands the arena
out again from its start, so consecutive kernels put their temporaries in the same
bytes: those are still in cache from the kernel before (written over, not fetched
from memory again), and the arena holds what one kernel call needs at most rather
than every purpose's largest buffer side by side. Measured in-model against one
buffer per purpose (interleaved runs, with Dropout no longer copying in both):
SqueezeNet -4.4% and -4.1%, ShuffleNet -5.1% and -3.6%, Inception v2, ResNet-50 and
DenseNet-121 -2%, the transformer (no scratch) unchanged.

Within a call each `purpose` owns one region: asking again for the same purpose (a
loop over images or channel blocks) returns the same memory. A caller that never
calls `begin_kernel` (a kernel run on its own) gets the same regions back call after
call, as long as they are large enough.
"""

from __future__ import annotations

import threading

import numpy as np

_SCRATCH = threading.local()
_SCRATCH_MIN = 1 << 16   # smaller blocks come from malloc's free lists anyway
_SCRATCH_MAX = 1 << 25   # larger ones are not worth keeping per thread (32 MiB each)
_ARENA_MAX = 1 << 26     # past this much in one call, temporaries are plain arrays
_ALIGN = 64              # each region starts on a cache line


class _Arena:
    """One thread's scratch block, the bump offset and this call's regions."""

    __slots__ = ("block", "base", "top", "regions")

    def __init__(self):
        self.block = None   # uint8 array; regions are views of it
        self.base = 0       # offset of the block's first 64-byte-aligned byte
        self.top = 0        # first free byte after `base`
        self.regions = {}   # purpose -> (offset, nbytes) in this call


def _arena() -> _Arena:
    arena = getattr(_SCRATCH, "arena", None)
    if arena is None:
        arena = _SCRATCH.arena = _Arena()
    return arena


def begin_kernel() -> None:
    """Start a kernel call on this thread: the scratch regions handed out before may
    be handed out again. Executors call this before each step; a kernel must not keep
    scratch memory past its return (nor hand it out as an output). Never raises."""
    arena = getattr(_SCRATCH, "arena", None)
    if arena is not None and arena.top:
        arena.top = 0
        arena.regions.clear()


def scratch(purpose, shape, dtype):
    """An uninitialised array of `shape` and `dtype` from this thread's scratch arena.

    Each `purpose` owns one region per kernel call: a kernel must not hold two arrays
    of the same purpose at once, nor keep one after it returns. Sizes outside the
    arena's range (tiny, or beyond what one call may keep) are plain new arrays.
    """
    dtype = np.dtype(dtype)
    nbytes = dtype.itemsize
    for d in shape:
        nbytes *= d
    if not _SCRATCH_MIN <= nbytes <= _SCRATCH_MAX:
        return np.empty(shape, dtype)
    arena = _arena()
    region = arena.regions.get(purpose)
    if region is not None and region[1] >= nbytes:
        start = region[0]
    else:
        start = arena.top
        end = start + nbytes
        if end > _ARENA_MAX:
            return np.empty(shape, dtype)
        if arena.block is None or arena.base + end > arena.block.nbytes:
            _grow(arena, end)
        arena.top = end + (-end % _ALIGN)
        arena.regions[purpose] = (start, nbytes)
    start += arena.base
    return arena.block[start:start + nbytes].view(dtype).reshape(shape)


def _grow(arena: _Arena, need: int) -> None:
    """Replace the block by one of at least `need` usable bytes (doubling, so a model
    settles after a few calls). Arrays handed out earlier in this call keep the old
    block alive through their base; it is freed when they are."""
    old = 0 if arena.block is None else arena.block.nbytes - arena.base
    size = min(_ARENA_MAX, max(need, 2 * old))
    arena.block = np.empty(size + _ALIGN, np.uint8)
    arena.base = -arena.block.ctypes.data % _ALIGN
