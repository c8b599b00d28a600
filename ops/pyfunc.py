"""Operators: TF's PyFunc and PyFuncStateless (onegraph domain): a node that calls a
Python function on its inputs' numpy values when the graph runs.

The function cannot be stored in a graph file, so the node holds only a `token`
string; the callable lives in this module's process-wide registry (token -> function,
as TF's FuncRegistry), filled by og.py_func / og.numpy_function. A graph loaded
where its token was never registered (a saved model in another process) fails when
the node runs, saying so.

Results follow TF's rules: a list or tuple is one value per declared output, None no
value, anything else one value; each value is made an array (a Python int is int64,
a float float64) and must already have the declared dtype, none is converted (TF:
"0-th value returned by pyfunc_0 is double, but expects float"). String outputs take str or bytes
(onegraph's strings are str; bytes are decoded as UTF-8 with surrogateescape, the
bridge of ops/strings_tf.py). Inputs reach the function as copies, string inputs as
onegraph holds them (str; TF gives bytes: a documented difference).

PyFunc is stateful (never folded or pruned, runs every time it is needed);
PyFuncStateless is TF's stateful=False twin. Neither has a gradient rule here:
train/api_py_func.py registers them as not differentiable (None, not an error), as
TF's script_ops.py does with ops.NotDifferentiable.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import ExecutionError, OneGraphError, OutOfRangeError, ResourceExhaustedError
from .elementwise import onnx_type_to_numpy
from .process_registry import ProcessRegistry
from .registry import TensorInfo, define

DOMAIN = "onegraph"
_OBJECT = np.dtype(object)

# token -> (function, "node 'name' (op): " of the node built for it)
_FUNCS = ProcessRegistry("pyfunc", "a py_func's function is not saved with the graph: its "
                         "graph was deleted, or the model was loaded from a file; build the "
                         "py_func again here")


def register(func: Callable) -> str:
    """Keep `func` in the process-wide registry under a new token ("pyfunc_<n>",
    unique in this process) and return the token.

    Raises:
        TypeError: func is not callable.
    """
    if not callable(func):
        raise TypeError(f"py_func: func must be callable, got {type(func).__name__}")
    return _FUNCS.register((func, ""))


def name_node(token: str, node_name: str, op_type: str) -> None:
    """Record the node calling `token`'s function (its name and op type), which the
    function's errors name. Never raises (an unknown token is ignored)."""
    _FUNCS.replace(token, lambda entry: (entry[0], f"node {node_name!r} ({op_type}): "))


def unregister(token: str) -> None:
    """Drop `token`'s function (its graph is gone). Never raises."""
    _FUNCS.unregister(token)


def registered(token: str) -> bool:
    """Whether a function is registered under `token` in this process. Never raises."""
    return token in _FUNCS


def _function(token: str) -> tuple[Callable, str]:
    return _FUNCS.get(token)


def _argument(value):
    """An input as the function sees it: a copy it may change (inputs may be read-only
    constants or shared values)."""
    return np.array(value, copy=True) if isinstance(value, np.ndarray) else value


def _text(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, str):
        return str(value)
    raise TypeError(type(value).__name__)


def _result(value, k: int, token: str, expected: np.dtype) -> np.ndarray:
    """Result value k as an array of the declared dtype (checked, never converted).

    Raises:
        ExecutionError: it has another dtype or is not an array of numbers or strings.
    """
    try:
        array = np.array(value, copy=True)
    except Exception as e:  # ragged lists and the like
        raise ExecutionError(f"{k}-th value returned by {token} is not an array: "
                             f"{type(e).__name__}: {e}") from e
    if expected == _OBJECT:
        if array.dtype.kind in "US" or (array.dtype == _OBJECT and array.size
                                         and all(isinstance(v, (str, bytes))
                                                 for v in array.reshape(-1))):
            out = np.empty(array.shape, _OBJECT)
            out.reshape(-1)[:] = [_text(v) for v in array.reshape(-1).tolist()]
            return out
        if array.dtype == _OBJECT and array.size == 0:
            return array
        raise ExecutionError(f"{k}-th value returned by {token} is {_dtype_word(array)}, "
                             "but expects string")
    if array.dtype != expected:
        raise ExecutionError(f"{k}-th value returned by {token} is {_dtype_word(array)}, "
                             f"but expects {expected.name}")
    return array


def _dtype_word(array: np.ndarray) -> str:
    if array.dtype.kind in "US":
        return "string"
    if array.dtype == _OBJECT:
        return "an object array (neither numbers nor strings)"
    return array.dtype.name


def _call(func: Callable, args: list, token: str, node: str):
    """func(*args) for the node `node` names ("node 'n' (PyFunc): "), with whatever it
    raises turned into a named onegraph error that keeps the original as its
    __cause__ (StopIteration: OutOfRangeError, as TF's; MemoryError:
    ResourceExhaustedError; anything else: ExecutionError)."""
    try:
        return func(*args)
    except Exception as e:
        text = f"{node}the Python function of {token} raised {type(e).__name__}: {e}"
        if isinstance(e, StopIteration):
            raise OutOfRangeError(text) from e
        if isinstance(e, MemoryError):
            raise ResourceExhaustedError(text) from e
        if isinstance(e, OneGraphError) and not node:
            raise  # the Session names the node and keeps it as the cause
        raise ExecutionError(text) from e


def _py_func(inputs, attrs, ctx):
    """Call the registered function on the inputs; check and return its results."""
    token = attrs["token"]
    func, node = _function(token)
    touts = [onnx_type_to_numpy(t) for t in attrs["Tout"]]
    result = _call(func, [_argument(x) for x in inputs], token, node)
    # as TF's: None is no value, a list or tuple one value per entry
    values = [] if result is None else (
        list(result) if isinstance(result, (list, tuple)) else [result])
    if len(values) != len(touts):
        raise ExecutionError(f"{token} returns {len(values)} values, but expects to see "
                             f"{len(touts)} values.")
    return tuple(_result(v, k, token, dt) for k, (v, dt) in enumerate(zip(values, touts)))


def _infer(attrs, inputs):
    """Declared dtypes, unknown shapes (the function decides them when it runs)."""
    return [TensorInfo(onnx_type_to_numpy(t), None) for t in attrs["Tout"]]


_ATTRS = [("token", "string"), ("Tout", "ints", [])]

OPS = (
    define("PyFunc", ["inputs*"], ["outputs*"], _py_func, _ATTRS, infer=_infer,
           domain=DOMAIN, stateful=True,
           doc="call a registered Python function on the inputs' values (runs every time)"),
    define("PyFuncStateless", ["inputs*"], ["outputs*"], _py_func, _ATTRS, infer=_infer,
           domain=DOMAIN,
           doc="call a registered Python function that TF may treat as pure"),
)
