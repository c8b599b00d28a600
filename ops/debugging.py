"""Operators: run-time checks of the `onegraph` domain (TF1's Assert and CheckNumerics).

Assert raises when its condition holds a false element, naming the node and showing
its data; CheckNumerics passes its input through and raises when it holds a NaN or an
infinity. Both raise `InvalidArgumentError` (TF1's class; an `ExecutionError`), so a
run stops with a message instead of carrying bad values on. Assert has no outputs: as
in TF1, it runs when something depends on it (`og.control_dependencies`, `og.group`, a
fetch of the op).
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, InvalidArgumentError
from .registry import TensorInfo, define

DOMAIN = "onegraph"


def _summary(value, summarize: int) -> str:
    """A short text of one Assert data input: strings as they are, arrays by their
    first `summarize` elements."""
    array = np.asarray(value)
    if array.dtype.kind in "OSU" and array.size == 1:
        item = array.reshape(-1)[0]
        return item.decode("utf-8", "replace") if isinstance(item, bytes) else str(item)
    if array.ndim == 0:
        return str(array.item())
    flat = array.reshape(-1)
    shown = ", ".join(str(v) for v in flat[:max(summarize, 0)])
    more = ", ..." if flat.size > summarize else ""
    return f"[{shown}{more}] (shape {list(array.shape)})"


def _assert(inputs, attrs, ctx):
    """Raise unless every element of the condition is true."""
    condition = np.asarray(inputs[0])
    if condition.dtype != np.bool_:
        raise ExecutionError(f"Assert: the condition must be bool, got {condition.dtype}")
    if not condition.all():
        data = " ".join(_summary(v, int(attrs["summarize"])) for v in inputs[1:])
        raise InvalidArgumentError(f"assertion failed: {data}" if data
                                   else "assertion failed")
    return ()


def _check_numerics(inputs, attrs, ctx):
    """The input, unchanged, when it holds no NaN or infinity."""
    x = inputs[0]
    array = np.asarray(x)
    if array.dtype.kind == "V" and array.size:
        # bfloat16 and the float8 types are numpy extension types: checked as float32
        array = array.astype(np.float32)
    if array.dtype.kind in "fc" and array.size:
        # one reduction finds both: the sum of anything with a NaN or an inf is not
        # finite, and only then is the slower elementwise look needed
        with np.errstate(all="ignore"):
            total = array.sum(dtype=np.float64 if array.dtype.kind == "f" else None)
        if not np.isfinite(total):
            found = [what for what, test in (("NaN", np.isnan), ("Inf", np.isinf))
                     if test(array).any()]
            if found:
                raise InvalidArgumentError(f"{attrs['message']}: Tensor had "
                                           f"{' and '.join(found)} values")
    return (x,)


def _infer_same(attrs, inputs):
    return [TensorInfo(inputs[0].dtype, inputs[0].shape)]


def _check_numerics_gradient(b, op, grads):
    # TF1's rule: the gradient is checked too, so a NaN is caught where it arises
    message = f"{op.attrs.get('message', '')} (gradient)"
    return [b.op("CheckNumerics", [grads[0]], {"message": message})]


OPS = (
    define("Assert", ["condition", "data*"], [], _assert, [("summarize", "int", 3)],
           infer=lambda attrs, inputs: [], domain=DOMAIN, stateful=True,
           doc="raise unless every element of the condition is true"),
    define("CheckNumerics", ["tensor"], ["output"], _check_numerics,
           [("message", "string", "CheckNumerics")], infer=_infer_same, domain=DOMAIN,
           gradient=_check_numerics_gradient,
           doc="pass the tensor through; raise if it holds a NaN or an infinity"),
)
