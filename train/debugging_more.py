"""The rest of TF1's tf.debugging checks: assert_rank_in, assert_same_float_dtype,
assert_proper_iterable, assert_all_finite / verify_tensor_all_finite and
add_check_numerics_ops, built on og's Assert and check_numerics."""

from __future__ import annotations

import numpy as np

from ..format import DType
from . import api, api_extra
from . import graph as _g
from .api import _int_arg, _t
from .api_compat import _data_arg, _message_arg, _summarize_arg
from .debugging import Assert, check_numerics
from .graph import Operation, Tensor

__all__ = ["add_check_numerics_ops", "assert_all_finite", "assert_proper_iterable",
           "assert_rank_in", "assert_same_float_dtype", "verify_tensor_all_finite"]


def assert_rank_in(x, ranks, data=None, summarize=None, message=None,
                   name=None) -> Operation:
    """Check that x's rank is one of `ranks` (ints or integer scalar tensors), as TF1's
    tf.assert_rank_in: when x's rank and every rank are known while building, a miss
    raises ValueError at once and a hit returns a no-op; otherwise an op that fails the
    run (ExecutionError naming it) when the run-time rank is none of them.

    Raises:
        ValueError: the static rank is none of ranks, or a rank is not a scalar.
        TypeError: ranks is not a list, a rank is not an int or integer tensor, data is
            not a list, summarize not an int, or message or name not a str.
    """
    what = "assert_rank_in"
    _g.check_name(name, what)
    message = _message_arg(message, what)
    summarize = _summarize_arg(summarize, what)
    data = _data_arg(data, what)
    if isinstance(ranks, (str, bytes, Tensor)) or not hasattr(ranks, "__iter__"):
        raise TypeError(f"{what}: ranks must be a list of ranks, got {_g._brief(ranks)}")
    t = _t(x)
    g = t.graph
    tensors, known = [], []
    for k, r in enumerate(ranks):
        if _g._is_symbolic(r):
            rt = _g.integer_tensor(r, f"{what}: ranks[{k}]", g)
            if rt.shape is not None and len(rt.shape) != 0:
                raise ValueError(f"{what}: rank {k} must be a scalar, got shape "
                                 f"{list(rt.shape)}")
            value = g.static_value(rt)
            known.append(None if value is None else int(np.asarray(value)))
            tensors.append(api.cast(rt, DType.INT64))
        else:
            known.append(_int_arg(r, f"{what}: ranks[{k}]"))
            tensors.append(g.constant(np.int64(known[-1])))
    if t.shape is not None and None not in known:
        if len(t.shape) not in known:
            raise ValueError(f"{what}: {message + '.  ' if message else ''}Tensor {t.name} "
                             f"must have rank in {tuple(known)}.  Received rank "
                             f"{len(t.shape)}, shape {list(t.shape)}")
        return g.op("NoOp", [], name=name or what)
    if data is None:
        data = [f"Tensor {t.name} must have rank in"] + tensors + [
            "Received shape: ", api.shape(t)]
    if message:
        data = [message] + list(data)
    actual = g.op("Size", [api.shape(t)])
    hits = api.equal(api.stack(tensors), actual) if tensors else api.constant([False])
    return Assert(api_extra.reduce_any(hits), list(data), summarize, name=name or what)


def assert_same_float_dtype(tensors=None, dtype=None):
    """The one float dtype of `tensors` (Tensors, Variables, ...) and `dtype`, as
    TF1's tf.assert_same_float_dtype: float32 when neither gives one.

    Raises:
        ValueError: they have different dtypes, or the dtype is not a float (TF's
            messages).
    """
    want = None if dtype is None else _g.as_dtype(dtype)
    for item in tensors or ():
        got = getattr(item, "dtype", None)
        if got is None:
            continue
        if want is None:
            want = got
        elif got != want:
            name = getattr(item, "name", item)
            raise ValueError(f"{name}, type={got.short_name} must be of the same type "
                             f"({want.short_name}).")
    if want is None:
        return _g.as_dtype("float32")
    if not want.name.startswith(("FLOAT", "BFLOAT")):
        raise ValueError(f"Expected floating point type, got {want.short_name}.")
    return want


def assert_proper_iterable(values) -> None:
    """Refuse a value that is not a "proper" iterable (a Tensor, an array, a str or
    bytes are single values), as TF1's tf.assert_proper_iterable.

    Raises:
        TypeError: values is one of those, or not iterable at all (TF's messages).
    """
    from .sparse_tensor import SparseTensor

    if isinstance(values, (Tensor, SparseTensor, np.ndarray, str, bytes)):
        raise TypeError(f"Expected argument \"values\" to be a \"proper\" iterable.  "
                        f"Found: {type(values)}")
    if not hasattr(values, "__iter__"):
        raise TypeError(f"Expected argument \"values\" to be iterable.  Found: "
                        f"{type(values)}")


def verify_tensor_all_finite(t=None, msg=None, name=None, x=None, message=None) -> Tensor:
    """`t`, checked for NaN and Inf when it runs (TF1's tf.verify_tensor_all_finite /
    tf.debugging.assert_all_finite: check_numerics with message msg).

    Raises:
        TypeError: no tensor or message is given, or the message is not a str.
        TypeError: t is not a float tensor.
    """
    t = x if t is None else t
    msg = message if msg is None else msg
    if t is None or msg is None:
        raise TypeError("verify_tensor_all_finite: give the tensor (t or x) and the "
                        "message (msg or message)")
    return check_numerics(t, msg, name=name or "VerifyFinite")


assert_all_finite = verify_tensor_all_finite


def add_check_numerics_ops():
    """One op that checks every float tensor of the default graph for NaN and Inf when
    run (TF1's tf.add_check_numerics_ops; each check names its tensor). Ops made later
    are not checked. Graphs with control flow (og.cond, og.while_loop) are refused, as
    TF1 refuses them.

    Raises:
        ValueError: the graph holds a cond or a while loop (TF's words).
    """
    g = _g.get_default_graph()
    ir = g.ir_graph
    checks = []
    for node in list(ir.nodes):
        if node.op_type in ("Switch", "Merge", "Enter", "Exit", "NextIteration"):
            raise ValueError("add_check_numerics_ops() is not compatible with "
                             "TensorFlow control flow operations such as `tf.cond()` or "
                             "`tf.while_loop()`.")
    for node in list(ir.nodes):
        if node.op_type == "CheckNumerics":
            continue
        for i in node.outputs:
            tensor = ir.tensors[i]
            if tensor.dtype is not None and tensor.dtype.name.startswith(
                    ("FLOAT", "BFLOAT")) and tensor.kind.name != "VARIABLE":
                with g.control_dependencies(checks[-1:]):
                    checks.append(check_numerics(Tensor(g, i),
                                                 f"{node.name} : {tensor.name}").op)
    return api.group(*checks)
