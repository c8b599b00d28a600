"""The per-thread scratch arena (ops/scratch.py): regions per purpose within a kernel
call, reuse across calls, growth that keeps earlier regions intact, thread isolation."""

import threading

import numpy as np

from onegraph.ops import scratch as S

BIG = (256, 256)  # 256 KiB of float32: inside the arena's size range


def test_one_region_per_purpose_within_a_call():
    S.begin_kernel()
    a = S.scratch("test.a", BIG, np.float32)
    again = S.scratch("test.a", (128, 256), np.float32)  # smaller: same region
    b = S.scratch("test.b", BIG, np.float64)
    assert np.shares_memory(a, again)
    assert not np.shares_memory(a, b)
    assert a.shape == BIG and a.dtype == np.float32 and b.dtype == np.float64
    for arr in (a, b):
        assert arr.ctypes.data % 64 == 0 and arr.flags.c_contiguous and arr.flags.writeable


def test_a_new_call_hands_the_same_bytes_out_again():
    S.begin_kernel()
    first = S.scratch("test.first", BIG, np.float32)
    S.begin_kernel()
    second = S.scratch("test.second", BIG, np.float32)  # another purpose, next call
    assert np.shares_memory(first, second)


def test_growth_keeps_earlier_regions_of_the_call(monkeypatch):
    monkeypatch.setattr(S._SCRATCH, "arena", S._Arena())  # a fresh, empty arena
    a = S.scratch("test.a", BIG, np.float32)
    a[...] = 7.0
    block = S._arena().block
    huge = S.scratch("test.huge", (4096, 2048), np.float32)  # 32 MiB: a new block
    huge[...] = -1.0
    assert S._arena().block is not block and np.shares_memory(a, block)
    assert (a == 7.0).all()
    assert not np.shares_memory(a, huge)
    # the purpose asked again after the growth is backed by the new block
    b = S.scratch("test.b", BIG, np.float32)
    assert not np.shares_memory(b, huge) and not np.shares_memory(b, a)


def test_a_larger_request_for_a_purpose_gets_a_new_region():
    S.begin_kernel()
    a = S.scratch("test.a", BIG, np.float32)
    b = S.scratch("test.b", BIG, np.float32)
    bigger = S.scratch("test.a", (512, 256), np.float32)
    assert not np.shares_memory(bigger, b)
    assert bigger.shape == (512, 256) and not np.shares_memory(a, b)


def test_sizes_outside_the_arena_range_are_plain_arrays():
    S.begin_kernel()
    small = S.scratch("test.small", (8,), np.float32)
    past = S.scratch("test.past", (S._SCRATCH_MAX // 4 + 1,), np.float32)
    inside = S.scratch("test.inside", BIG, np.float32)
    arena = S._arena().block
    assert not np.shares_memory(small, arena) and not np.shares_memory(past, arena)
    assert np.shares_memory(inside, arena)


def test_without_begin_kernel_a_purpose_keeps_its_region():
    S.begin_kernel()
    a = S.scratch("test.keep", BIG, np.float32)
    b = S.scratch("test.keep", BIG, np.float32)
    other = S.scratch("test.other", BIG, np.float32)
    assert np.shares_memory(a, b) and not np.shares_memory(a, other)


def test_threads_have_their_own_arenas():
    got = {}

    def take(name):
        S.begin_kernel()
        got[name] = S.scratch("test.thread", BIG, np.float32)
        got[name][...] = len(name)

    threads = [threading.Thread(target=take, args=(n,)) for n in ("t", "tt")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    S.begin_kernel()
    mine = S.scratch("test.thread", BIG, np.float32)
    assert not np.shares_memory(got["t"], got["tt"])
    assert not np.shares_memory(mine, got["t"]) and not np.shares_memory(mine, got["tt"])
    assert (got["t"] == 1).all() and (got["tt"] == 2).all()
