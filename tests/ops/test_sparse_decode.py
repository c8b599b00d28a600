"""TF's sparse-producing kernels (ops/sparse_decode.py) against TF's recorded outputs.

tests/ops/data/tf_sparse_decode_reference.npz is written by
tools/record_tf_sparse_decode.py (TF 2.21, graph mode, raw ops): per case the inputs,
int attributes and TF's outputs or TF's refusal. Indices, values and shapes must match
exactly; log probabilities within 1e-5 relative; edit distances exactly (float32).
"""

import os

import numpy as np
import pytest

from onegraph.errors import ExecutionError, OpAttributeError, ShapeError
from onegraph.ops import KernelContext, get_op

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_sparse_decode_reference.npz")
REF = dict(np.load(DATA, allow_pickle=False))
OP_NAMES = {"greedy": "CTCGreedyDecoder", "beam": "CTCBeamSearchDecoder",
            "edit": "EditDistance"}


def _cases(kind, failing=False):
    names = sorted({k.split("/")[1] for k in REF if k.startswith(kind + "/")})
    return [n for n in names if (f"{kind}/{n}/error" in REF) == failing]


def _text(array):
    """A recorded bytes array as og's string tensor (object array of str)."""
    out = np.empty(array.shape, dtype=object)
    out.reshape(-1)[:] = [b.decode("utf-8", "surrogateescape") for b in array.reshape(-1)]
    return out


def _load(key):
    ins = []
    i = 0
    while f"{key}/in{i}" in REF:
        a = REF[f"{key}/in{i}"]
        ins.append(_text(a) if a.dtype.kind == "S" else a)
        i += 1
    prefix = key + "/attr/"
    attrs = {k[len(prefix):]: int(v) for k, v in REF.items() if k.startswith(prefix)}
    outs = []
    i = 0
    while f"{key}/out{i}" in REF:
        outs.append(REF[f"{key}/out{i}"])
        i += 1
    return ins, attrs, outs


def _op(kind, key):
    if kind == "split":
        name = str(REF[key + "/op"])
        return "StringSplitTF" if name == "StringSplit" else name
    return OP_NAMES[kind]


def run(op_type, inputs, attrs):
    op = get_op(op_type, "onegraph")
    out = op.kernel(inputs, op.resolve_attrs(attrs), KernelContext())
    assert isinstance(out, tuple)
    return out


def _same(got, want, what):
    if want.dtype.kind == "S":
        assert got.dtype == object, what
        assert [s.encode("utf-8", "surrogateescape") for s in got.tolist()] == \
            want.tolist(), what
        return
    assert got.dtype == want.dtype, what
    assert got.shape == want.shape, what
    if want.dtype.kind == "f" and "log" in what:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.mark.parametrize("kind,case", [(k, c) for k in ("greedy", "beam", "edit", "split")
                                       for c in _cases(k)])
def test_matches_tf(kind, case):
    key = f"{kind}/{case}"
    ins, attrs, want = _load(key)
    got = run(_op(kind, key), ins, attrs)
    assert len(got) == len(want)
    last = len(want) - 1
    for i, (g, w) in enumerate(zip(got, want)):
        is_log = kind in ("greedy", "beam") and i == last
        _same(g, w, f"{key} output {i}{' log_prob' if is_log else ''}")


@pytest.mark.parametrize("kind,case", [(k, c) for k in ("greedy", "beam", "edit", "split")
                                       for c in _cases(k, failing=True)])
def test_refuses_as_tf(kind, case):
    key = f"{kind}/{case}"
    ins, attrs, _ = _load(key)
    message = str(REF[key + "/error"])
    with pytest.raises((ShapeError, ExecutionError)) as e:
        run(_op(kind, key), ins, attrs)
    assert message in str(e.value)


def test_beam_attrs_must_be_positive():
    op = get_op("CTCBeamSearchDecoder", "onegraph")
    with pytest.raises(OpAttributeError, match="beam_width must be >= 1"):
        op.resolve_attrs({"beam_width": 0, "top_paths": 1})
    with pytest.raises(OpAttributeError, match="missing required attribute"):
        op.resolve_attrs({"top_paths": 1})


def test_beam_output_order_and_infer():
    ins, attrs, want = _load("beam/top3")
    op = get_op("CTCBeamSearchDecoder", "onegraph")
    got = run("CTCBeamSearchDecoder", ins, attrs)
    assert len(got) == 3 * 3 + 1
    assert [g.shape[1] for g in got[:3]] == [2, 2, 2]
    assert all(g.ndim == 1 for g in got[3:6]) and all(g.shape == (2,) for g in got[6:9])
    from onegraph.ops import TensorInfo
    infos = op.infer(op.resolve_attrs(attrs), [TensorInfo(np.dtype(np.float32), (8, 3, 5)),
                                               TensorInfo(np.dtype(np.int32), (3,))])
    assert len(infos) == 10 and infos[-1].shape == (3, 3)


def test_edit_distance_refuses_out_of_range_sequence():
    hi = np.array([[3, 0]], np.int64)
    with pytest.raises(ExecutionError, match="outside the output shape"):
        run("EditDistance", [hi, np.array([1]), np.array([2, 2]), hi, np.array([1]),
                             np.array([2, 2])], {})


def test_split_refuses_non_strings():
    with pytest.raises(ExecutionError, match="must be strings"):
        run("StringSplitV2", [np.array([1, 2], dtype=object), np.array(" ", dtype=object)],
            {})
