"""TF1's tf.py_func and tf.numpy_function: graph nodes that call a Python function on
numpy values when the graph runs (ops/pyfunc.py holds the ops and the registry).

The function is kept in a process-wide registry under a token the node holds, for
as long as the graph that holds the node lives (as TF's FuncRegistry drops it with
its graph); a saved graph carries only the token, so loading it where the token is
not registered and running the node is an ExecutionError. The outputs' shapes are
unknown (the function decides them); their dtypes are the declared ones, which the
function's results must already have (TF converts none). No gradients: gradients
through a py_func are None, as TF's. One difference from TF: string inputs reach the
function as str (onegraph's strings), not bytes; string results may be either.
"""

from __future__ import annotations

import weakref
from typing import Callable

from ..errors import OneGraphError
from . import gradients as _gradients
from ..ops import pyfunc as _pyfunc
from . import graph as _g
from .api import _graph_of, onnx_type
from .graph import Operation, Tensor

__all__ = ["numpy_function", "py_func"]


# as TF's script_ops.py does (ops.NotDifferentiable("PyFunc")); og.gradient_override_map
# can still replace the rule per graph
for _op_type in ("PyFunc", "PyFuncStateless"):
    _gradients.NotDifferentiable(_op_type)


def _tout_list(Tout, what: str) -> tuple[list[int], bool]:
    """The ONNX type numbers of Tout and whether it was a list/tuple (results come
    back as a list then, a single Tensor otherwise).

    Raises:
        TypeError: Tout (or an entry) is no dtype onegraph knows, or Tout is nested.
    """
    listed = isinstance(Tout, (list, tuple))
    types = []
    for dtype in (Tout if listed else [Tout]):
        if isinstance(dtype, (list, tuple)) or dtype is None:
            raise TypeError(f"{what}: Tout must be a dtype or a list of dtypes, got "
                            f"{Tout!r:.80}")
        try:
            types.append(onnx_type(dtype))
        except (OneGraphError, KeyError) as e:
            raise TypeError(f"{what}: Tout entry {dtype!r:.60} is not a dtype a py_func "
                            "can return") from e
    return types, listed


def _build(func: Callable, inp, Tout, stateful: bool, name, what: str):
    """Register func and add its PyFunc / PyFuncStateless node.

    Raises:
        TypeError: func is not callable, inp is not a list or tuple, Tout is no dtype
            or list of dtypes, stateful is not a bool, or name is not a str.
    """
    if not callable(func):
        raise TypeError(f"{what}: func must be callable, got {type(func).__name__}")
    if isinstance(inp, (Tensor, str, bytes)) or not isinstance(inp, (list, tuple)):
        raise TypeError(f"{what}: inp must be a list or tuple of tensors, got "
                        f"{type(inp).__name__}")
    if not isinstance(stateful, bool):
        raise TypeError(f"{what}: stateful must be a bool, got {type(stateful).__name__}")
    _g.check_name(name, what)
    types, listed = _tout_list(Tout, what)
    g = _graph_of(list(inp))
    inputs = [g.convert(x) for x in inp]
    op_type = "PyFunc" if stateful else "PyFuncStateless"
    token = _pyfunc.register(func)
    try:
        out = g.op(op_type, inputs, {"token": token, "Tout": types}, num_outputs=len(types),
                   name=name, domain=_pyfunc.DOMAIN)
    except BaseException:
        _pyfunc.unregister(token)
        raise
    node = out if isinstance(out, Operation) else (out[0] if isinstance(out, list) else out).op
    _pyfunc.name_node(token, node.name, op_type)
    # the function lives as long as the graph (TF's FuncRegistry drops it with its graph)
    weakref.finalize(g, _pyfunc.unregister, token)
    if not types:
        return out  # TF returns the Operation for an empty Tout
    if listed:
        return list(out) if isinstance(out, list) else [out]
    return out


def py_func(func: Callable, inp, Tout, stateful: bool = True, name: str | None = None):
    """A node that calls `func(*values of inp)` (numpy arrays) each time it runs, as
    TF1's tf.py_func. Tout: the dtype of its one result (returns a Tensor) or a list or
    tuple of dtypes (returns a list of Tensors; an empty one returns the Operation).
    func returns one value per dtype (a list or tuple for several), each already of
    its dtype (a Python int is int64, a float float64); shapes are unknown until run.
    stateful=False (PyFuncStateless) lets a runtime treat the call as pure.

    Raises:
        TypeError: func is not callable, inp is not a list or tuple, Tout is no dtype
            or list of dtypes, stateful is not a bool, or name is not a str.
        (when the node runs) ExecutionError: func raised (the original is the
            __cause__), returned the wrong number of values or a value of another
            dtype, or is not registered in this process (a loaded graph);
            OutOfRangeError: func raised StopIteration.
    """
    return _build(func, inp, Tout, stateful, name, "py_func")


def numpy_function(func: Callable, inp, Tout, stateful: bool = True,
                   name: str | None = None):
    """TF's tf.numpy_function: `py_func` (stateful by default), see there.

    Raises:
        What `py_func` raises.
    """
    return _build(func, inp, Tout, stateful, name, "numpy_function")
