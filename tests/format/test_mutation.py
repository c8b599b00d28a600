"""Mutation testing of the reader: damaged versions of valid files either load or raise
`FormatError` / `DataLossError`, nothing else, within bounded time and memory.

Each hypothesis example draws a valid model, serializes it, and loads many mutants of
its bytes (bit flips; bytes set to 0x00, 0xFF or random; truncation; inserted or
deleted runs; 2/4/8-byte words overwritten with large or negative integers). A mutant
that loads must also survive being saved and loaded again. Memory is measured with
tracemalloc (numpy reports its allocations there); time with a monotonic clock.
"""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import onegraph
from onegraph import FormatError
from onegraph.format import Graph, Model
from onegraph.format.reader import parse

from . import craft, strategies
from .limits import bounded

EXAMPLES = 200
MUTANTS_PER_EXAMPLE = 60  # 12000 mutants in the default run
MAX_SECONDS = 2.0
MAX_PEAK_BYTES = 64 << 20

INTERESTING_WORDS = [0, 1, 2**7, 2**8 - 1, 2**15, 2**16 - 1, 2**31 - 1, 2**31, 2**32 - 1,
                     2**32, 2**62, 2**63 - 1, 2**63, 2**64 - 1, -1, -2, -(2**31),
                     -(2**63), 64, 4096, 0x7FFFFFF0]


def mutate(data: bytes, rng: random.Random, hot: int) -> bytes:
    """One random mutation; positions favour the FlatBuffer part (`hot` bytes)."""
    out = bytearray(data)
    n = len(out)
    if n == 0:
        return bytes(rng.randbytes(rng.randint(1, 16)))

    def position() -> int:
        return rng.randrange(min(hot, n)) if rng.random() < 0.8 else rng.randrange(n)

    kind = rng.randrange(8)
    if kind == 0:  # flip 1..3 bits
        for _ in range(rng.randint(1, 3)):
            out[position()] ^= 1 << rng.randrange(8)
    elif kind == 1:  # set a byte to 0x00 / 0xFF / random
        out[position()] = rng.choice([0x00, 0xFF, rng.randrange(256)])
    elif kind == 2:  # truncate
        del out[rng.randrange(n):]
    elif kind == 3:  # insert a run
        p = position()
        out[p:p] = rng.choice([b"\0", b"\xff", rng.randbytes(1)]) * rng.randint(1, 64)
    elif kind == 4:  # delete a run
        p = position()
        del out[p:p + rng.randint(1, 64)]
    elif kind in (5, 6):  # overwrite an (aligned, usually) word with an extreme integer
        size = rng.choice([2, 4, 4, 8])
        p = position()
        if rng.random() < 0.8:
            p -= p % size
        p = min(p, n - size)
        if p >= 0:
            value = rng.choice(INTERESTING_WORDS) & ((1 << 8 * size) - 1)
            struct.pack_into({2: "<H", 4: "<I", 8: "<Q"}[size], out, p, value)
    else:  # overwrite a run with random bytes
        p = position()
        length = rng.randint(1, 16)
        out[p:p + length] = rng.randbytes(min(length, n - p))
    return bytes(out)


def check_one(data: bytes, check_data: bool, tmp_path=None) -> Model | None:
    """Load `data`; only FormatError may escape; bounded time and memory."""
    path = craft.write(tmp_path / "mutant.og", data) if tmp_path is not None else None

    def load():
        try:
            return onegraph.load(path, check_data) if path else parse(data, check_data)
        except FormatError as e:  # DataLossError included
            assert str(e), "a FormatError must explain itself"
            return None
    return bounded(load, MAX_SECONDS, MAX_PEAK_BYTES)


def check_reloads(model: Model) -> None:
    """A mutant that loaded is a valid model: it can be saved and loads back equal."""
    try:
        image = craft.image_unchecked(model)
        model.lint()
    except FormatError:
        return  # e.g. a subgraph aliasing a graph the writer would refuse to store
    assert parse(image) == model


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,  # same examples each run
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(model=strategies.models(max_subgraphs=2, max_tensors=6, max_nodes=4),
       rng=st.randoms(use_true_random=False))
def test_mutated_files_fail_cleanly(model, rng, tmp_path):
    """Thousands of mutants in total: each loads or raises FormatError, quickly."""
    image = craft.image_unchecked(model)
    hot = parse(image).file_info["flatbuffer_size"]
    for k in range(MUTANTS_PER_EXAMPLE):
        data = image
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            data = mutate(data, rng, hot)
        result = check_one(data, check_data=rng.random() < 0.5,
                           tmp_path=tmp_path if k % 10 == 0 else None)
        if result is not None:
            check_reloads(result)


# -- regressions found by the tests above ---------------------------------------------

def test_empty_tensor_with_huge_dims():
    """Regression: a constant of shape [0, 2**62] made numpy raise ValueError."""
    g = Graph("main")
    g.add_constant("c", np.zeros(0, np.float32))
    g.add_constant("s", np.zeros(0, object))
    g.tensors[0].shape = (0, 2**62)
    g.tensors[1].shape = (2**60, 0, 2)
    data = craft.image_unchecked(Model(graphs=[g]))
    with pytest.raises(FormatError, match=r"tensors\[0\]: shape \[0, 4611686018427387904\] "
                                          r"of FLOAT32 is too large"):
        parse(data)
    g.tensors[0].shape = (0, 2**50)
    data = craft.image_unchecked(Model(graphs=[g]))
    with pytest.raises(FormatError, match=r"tensors\[1\]: shape .* of STRING is too large"):
        parse(data)


def test_many_tensors_sharing_a_string_buffer_is_fast():
    """Regression: thousands of tensors pointing at one big string buffer made loading
    decode it once per tensor (quadratic time). Now decoded once and budgeted."""
    n, m = 50_000, 3_000
    g = Graph("main")
    g.add_constant("big", np.array([str(i % 10) for i in range(n)], dtype=object))
    for k in range(m):
        g.add_constant(f"s{k}", np.array([""], dtype=object))
    data = craft.image_unchecked(Model(graphs=[g]))
    for k in range(1, m + 1):
        t = craft.tensor_table(data, 0, k)
        data = craft.patch(data, craft.field_pos(t, craft.TENSOR_BUFFER), "<i", 0)
        data = craft.patch(data, craft.vector_elem_pos(t, craft.TENSOR_SHAPE, 0, 8), "<q", n)
    for check_data in (False, True):
        assert check_one(data, check_data) is None  # refused, quickly
        with pytest.raises(FormatError, match="more data than it can hold"):
            parse(data, check_data)


def test_many_tensors_sharing_a_segment_checksum_once():
    """Regression: with check_data, a segment shared by many tensors was checksummed
    once per tensor; now once per buffer."""
    g = Graph("main")
    g.add_constant("big", np.zeros(1 << 22, np.uint8))
    for k in range(2000):
        g.add_constant(f"t{k}", np.zeros(1, np.uint8))
    data = craft.image_unchecked(Model(graphs=[g]))
    for k in range(1, 2001):
        t = craft.tensor_table(data, 0, k)
        data = craft.patch(data, craft.field_pos(t, craft.TENSOR_BUFFER), "<i", 0)
        data = craft.patch(data, craft.vector_elem_pos(t, craft.TENSOR_SHAPE, 0, 8), "<q",
                           1 << 22)
    model = check_one(data, check_data=True)
    assert model.graph.tensors[2000].data.shape == (1 << 22,)
