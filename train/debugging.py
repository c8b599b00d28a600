"""TF1's run-time checks: `og.Assert`, `og.check_numerics` and the `og.assert_*` family.

They build the onegraph-domain Assert and CheckNumerics ops (`ops/debugging.py`), which
raise ExecutionError when a run meets a failed condition or a NaN/Inf. As in TF1, an
assertion is an Operation that runs when something depends on it: wrap the code that
needs it in `og.control_dependencies([assertion])` or fetch it.
"""

from __future__ import annotations

from ..errors import ShapeError
from ..format import DType
from . import api, api_extra
from . import graph as _g
from .api import _graph_of, _t
from .graph import Operation, Tensor


def Assert(condition, data, summarize: int | None = None,  # noqa: N802 - TF1's name
           name: str | None = None) -> Operation:
    """An op that raises ExecutionError when a run finds `condition` false, with the
    first `summarize` (default 3) elements of each of `data` (tensors or strings) in
    the message.

    Raises:
        ShapeError: condition is not a bool tensor.
        TypeError: data is not a list or tuple, summarize is not an int, or name is
            not a str.
    """
    _g.check_name(name, "Assert")
    if not isinstance(data, (list, tuple)):
        raise TypeError(f"Assert: data must be a list of tensors or strings, got "
                        f"{type(data).__name__}")
    if summarize is not None and (isinstance(summarize, bool) or
                                  not isinstance(summarize, int)):
        raise TypeError(f"Assert: summarize must be an int, got {type(summarize).__name__}")
    g = _graph_of(condition, *data)
    condition = _t(condition, graph=g)
    if condition.dtype not in (DType.BOOL, DType.UNDEFINED):
        raise ShapeError(f"Assert: the condition must be a bool tensor, got "
                         f"{condition.dtype.short_name}")
    inputs = [condition] + [g.convert(x) for x in data]
    return g.op("Assert", inputs, {"summarize": 3 if summarize is None else summarize},
                name=name or "Assert")


def check_numerics(tensor, message: str, name: str | None = None) -> Tensor:
    """`tensor`, passed through an op that raises ExecutionError ("<message>: Tensor
    had NaN values") when a run finds a NaN or an infinity in it. Its gradient is
    checked too. An ONNX export writes it as an Identity (ONNX has no such check).

    Raises:
        TypeError: message or name is not a str, or tensor is not of a float dtype
            (TF1's error for that too).
    """
    _g.check_name(name, "check_numerics")
    if not isinstance(message, str):
        raise TypeError(f"check_numerics: message must be a str, got "
                        f"{type(message).__name__}")
    x = _t(tensor)
    if x.dtype is not DType.UNDEFINED and not (x.dtype.name.startswith(("FLOAT", "BFLOAT"))):
        raise TypeError(f"check_numerics: {x.name!r} must be a float tensor (only floats "
                         f"hold NaN or Inf), got {x.dtype.short_name}")
    return x.graph.op("CheckNumerics", [x], {"message": message},
                      name=name or "CheckNumerics")


def _comparison(op, what: str, words: str):
    def check(x, y, data=None, summarize=None, message=None, name=None) -> Operation:
        _g.check_name(name, what)
        if message is not None and not isinstance(message, str):
            raise TypeError(f"{what}: message must be a str, got {type(message).__name__}")
        x, y = api._pair(x, y, what)
        holds = api_extra.reduce_all(op(x, y))
        if data is None:
            data = [f"Condition x {words} y did not hold element-wise:",
                    f"x (name: {x.name}) =", x, f"y (name: {y.name}) =", y]
        if message is not None:
            data = [message] + list(data)
        return Assert(holds, data, summarize, name=name or what)

    check.__name__ = what
    check.__doc__ = (f"An op that raises ExecutionError when a run finds some element of "
                     f"x not {words} the matching element of y (broadcast); `data` "
                     "(tensors or strings) replaces the default message and `message` "
                     "goes first (TF1's `tf." + what + "`).\n\n    Raises:\n        "
                     "ShapeError: x and y do not broadcast or differ in dtype.\n        "
                     "TypeError: message or name is not a str.\n    ")
    return check


assert_equal = _comparison(api.equal, "assert_equal", "==")
assert_less = _comparison(api.less, "assert_less", "<")
assert_greater = _comparison(api.greater, "assert_greater", ">")

__all__ = ["Assert", "assert_equal", "assert_greater", "assert_less", "check_numerics"]
