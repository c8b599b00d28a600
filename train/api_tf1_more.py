"""More TF names: og.print (TF 2's tf.print as an op) and TF1's og.Print, og.hessians,
og.switch_case, og.foldr, and the og.debugging namespace.

Printing happens when the graph runs (the onegraph-domain PrintV2 op, ops/printing.py),
never while it is built. An ONNX export leaves the print out, as it leaves Assert out:
the op has no outputs, and og.Print's result is an Identity that merely waits for it.
"""

from __future__ import annotations

import sys
import types
from typing import Callable

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import (api, api_compat, api_math, api_tf1_odds, control_flow, debugging_more,
               namespaces)
from . import debugging as _debugging
from . import graph as _g
from .api import _graph_of
from .graph import Operation, Tensor

__all__ = ["Print", "debugging", "foldr", "hessians", "print", "switch_case"]

_STREAMS = {"stdout": "stdout", "stderr": "stderr", "sys.stdout": "stdout",
            "sys.stderr": "stderr"}


# the streams when onegraph was imported: a caller's sys.stdout may have been swapped
# since (pytest's capture), and the stream is looked up again when the op runs
_IMPORT_STREAMS = (sys.stdout, sys.stderr)


def _stream_name(output_stream) -> str:
    """The PrintV2 attr for an output_stream: sys.stdout / sys.stderr (the objects,
    now or when onegraph was imported, or their names; None: stderr) or
    "file://<path>".

    Raises:
        ValueError: anything else (as TF's tf.print refuses it).
    """
    if any(output_stream is s for s in (sys.stdout, sys.__stdout__, _IMPORT_STREAMS[0])):
        return "stdout"
    if output_stream is None or any(output_stream is s for s in (
            sys.stderr, sys.__stderr__, _IMPORT_STREAMS[1])):
        return "stderr"
    if isinstance(output_stream, str):
        if output_stream in _STREAMS:
            return _STREAMS[output_stream]
        if output_stream.startswith("file://") and len(output_stream) > len("file://"):
            return output_stream
    raise ValueError(f"print: unsupported output_stream {output_stream!r:.80}: give "
                     "sys.stdout, sys.stderr (or those names as strings) or "
                     "'file://<path>'")


def _is_tensor(value) -> bool:
    return isinstance(value, (Tensor, np.ndarray)) or hasattr(value, "_as_graph_tensor")


class _Template:
    """Text pieces around tensor inputs: pieces[k] comes before inputs[k]."""

    def __init__(self):
        self.pieces, self.inputs = [""], []

    def text(self, s: str) -> None:
        self.pieces[-1] += s

    def value(self, v, top: bool) -> None:
        """A Python value as tf.print writes it: tensors as their values, lists,
        tuples and dicts in Python's notation around them, other values by str (repr
        for a string inside a structure)."""
        if _is_tensor(v):
            self.inputs.append(v)
            self.pieces.append("")
        elif isinstance(v, (list, tuple)):
            self.text("[" if isinstance(v, list) else "(")
            for k, item in enumerate(v):
                self.text(", " if k else "")
                self.value(item, False)
            self.text("]" if isinstance(v, list) else ("," if len(v) == 1 else "") + ")")
        elif isinstance(v, dict):
            self.text("{")
            for k, (key, item) in enumerate(v.items()):
                self.text((", " if k else "") + repr(key) + ": ")
                self.value(item, False)
            self.text("}")
        else:
            self.text(str(v) if top or not isinstance(v, str) else repr(v))


def _print_op(g, template: _Template, attrs: dict, name: str) -> Operation:
    inputs = [g.convert(x) for x in template.inputs]
    return g.op("PrintV2", inputs, dict(attrs, template=template.pieces), name=name)


def print(*inputs, output_stream=None, summarize: int | None = 3,  # noqa: A001
          sep: str = " ", end: str = "\n", name: str | None = None) -> Operation:
    """An op that writes `inputs` (tensors, strings, Python values and lists/dicts of
    them) separated by `sep` and followed by `end` each time it runs (TF 2's tf.print,
    as a graph op): fetch it or put it in `og.control_dependencies`. A tensor shows
    `summarize` elements at each end of every axis (None: 3, -1: all), as TF writes it.
    output_stream: sys.stderr (None, the default) or sys.stdout - whatever object
    sys.stderr / sys.stdout is when the op runs - or 'file://<path>' (appended to).

    Raises:
        ValueError: output_stream is not sys.stdout, sys.stderr, their names, or
            'file://<path>'.
        TypeError: summarize is not an int or None, sep or end is not a str, or name
            is not a str.
    """
    _g.check_name(name, "print")
    stream = _stream_name(output_stream)
    if summarize is not None and (isinstance(summarize, bool) or not isinstance(
            summarize, (int, np.integer))):
        raise TypeError(f"print: summarize must be an int or None, got "
                        f"{type(summarize).__name__}")
    if not isinstance(sep, str) or not isinstance(end, str):
        raise TypeError("print: sep and end must be str")
    template = _Template()
    for k, value in enumerate(inputs):
        template.text(sep if k else "")
        template.value(value, True)
    template.text(end)
    attrs = {"summarize": 3 if summarize is None else int(summarize), "style": "v2",
             "output_stream": stream, "first_n": -1}
    return _print_op(_graph_of(*inputs), template, attrs, name or "PrintV2")


def Print(input_, data, message: str | None = None, first_n: int | None = None,  # noqa: N802
          summarize: int | None = None, name: str | None = None) -> Tensor:
    """`input_`, passed through an op that, when it runs, writes `message` and each of
    `data` ("[first summarize elements...]") to stderr (TF1's tf.Print): only in the
    first `first_n` runs of a session when first_n is given, summarize default 3.

    Raises:
        TypeError: data is not a list or tuple, message is not a str, first_n or
            summarize is not an int, or name is not a str.
    """
    _g.check_name(name, "Print")
    if not isinstance(data, (list, tuple)):
        raise TypeError(f"Print: data must be a list of tensors, got {type(data).__name__}")
    if message is not None and not isinstance(message, str):
        raise TypeError(f"Print: message must be a str, got {type(message).__name__}")
    for what, v in (("first_n", first_n), ("summarize", summarize)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))):
            raise TypeError(f"Print: {what} must be an int, got {type(v).__name__}")
    x = api._t(input_)
    template = _Template()
    template.text(message or "")
    for value in data:
        template.text("[")
        template.value(value, True)
        template.text("]")
    template.text("\n")
    attrs = {"summarize": 3 if summarize is None else int(summarize), "style": "v1",
             "output_stream": "stderr", "first_n": -1 if first_n is None else int(first_n)}
    op = _print_op(x.graph, template, attrs, (name or "Print") + "_print")
    # the print is a dependency of the pass-through, so it runs whenever input_ is used
    # through the result, and an export (which leaves ops without outputs out) drops it
    with x.graph.control_dependencies([op]):
        return api.identity(x, name=name or "Print")


def hessians(ys, xs, gate_gradients: bool = False, aggregation_method=None,
             colocate_gradients_with_ops: bool = False, name: str = "hessians") -> list:
    """For each x of xs, the Hessian of sum(ys) with respect to x, shaped x.shape +
    x.shape (TF1's tf.hessians): og.gradients of each element of the flattened
    gradient, stacked. gate_gradients, aggregation_method and
    colocate_gradients_with_ops are TF's scheduling knobs and have no effect here.

    Raises:
        ShapeError: an x whose number of elements is not known when the graph is built
            (one gradient is built per element).
        ValueError: sum(ys) does not depend on an x (TF fails on its None gradient).
    """
    from .gradients import gradients

    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    out = []
    for k, x in enumerate(xs):
        x = api._t(x)
        if x.shape is None or any(d is None for d in x.shape):
            raise ShapeError(f"hessians: xs[{k}] {x.name!r} must have a fully known shape "
                             f"(one gradient is built per element), got {x.shape}")
        (grad,) = gradients(ys, [x], name=name)
        if grad is None:
            raise ValueError(f"hessians: ys does not depend on xs[{k}] {x.name!r} (its "
                             "gradient is None)")
        out.append(_hessian_rows(api.reshape(grad, [-1]), x, name))
    return out


def _hessian_rows(flat, x, name: str):
    """The gradient of each element of `flat` with respect to x, stacked and shaped
    x.shape + x.shape."""
    from .gradients import gradients

    size = int(np.prod(x.shape, dtype=np.int64))
    if size == 0:
        return api.zeros(list(x.shape) * 2, x.dtype.numpy)
    rows = []
    for i in range(size):
        (row,) = gradients(api.gather(flat, np.int64(i)), [x], name=name)
        # an element of the gradient not depending on x: that row is zero
        rows.append(api.zeros_like(x) if row is None else row)
    return api.reshape(api.stack(rows), list(x.shape) * 2)


def _branches(branch_fns) -> list:
    """switch_case's branches as a list, from a list or a dict int -> callable.

    Raises:
        TypeError: not a non-empty list/tuple/dict of callables, or a key not an int.
        ValueError: dict keys that are not 0..n-1 (TF's contiguous range).
    """
    if isinstance(branch_fns, dict):
        keys = list(branch_fns)
        if any(isinstance(k, bool) or not isinstance(k, (int, np.integer)) for k in keys):
            raise TypeError(f"switch_case: branch_fns keys must be ints, got {keys}")
        if sorted(keys) != list(range(len(keys))):
            raise ValueError(f"switch_case: branch indices (keys) must form the range "
                             f"0..{len(keys) - 1}, got {sorted(keys)}")
        branch_fns = [branch_fns[k] for k in range(len(keys))]
    if not isinstance(branch_fns, (list, tuple)) or not branch_fns:
        raise TypeError(f"switch_case: branch_fns must be a non-empty list or dict of "
                        f"callables, got {type(branch_fns).__name__}")
    for k, fn in enumerate(branch_fns):
        if not callable(fn):
            raise TypeError(f"switch_case: branch {k} is not callable "
                            f"({type(fn).__name__})")
    return list(branch_fns)


def switch_case(branch_index, branch_fns, default: Callable | None = None,
                name: str = "switch_case"):
    """The result of branch_fns[branch_index]() (TF's tf.switch_case), built as
    og.case: only the chosen branch runs. An index out of range runs `default`, or
    the last branch when default is None.

    Raises:
        TypeError: branch_fns is not a non-empty list or int-keyed dict of callables,
            default is not callable, or branch_index is not an integer scalar.
        ValueError: dict keys not forming 0..n-1.
        ShapeError: branch_index is not a scalar.
    """
    fns = _branches(branch_fns)
    if default is not None and not callable(default):
        raise TypeError(f"switch_case: default must be callable, got "
                        f"{type(default).__name__}")
    index = api._t(branch_index)
    if index.dtype is not DType.UNDEFINED and not np.issubdtype(index.dtype.numpy,
                                                                np.integer):
        raise TypeError(f"switch_case: branch_index must be an integer tensor, got "
                        f"{index.dtype.short_name}")
    if index.shape is not None and len(index.shape) != 0:
        raise ShapeError(f"switch_case: branch_index must be a scalar, got shape "
                         f"{index.shape}")
    if default is None:
        fns, default = fns[:-1], fns[-1]
    if not fns:
        return default()
    pairs = [(api.equal(index, api.cast(k, index.dtype.numpy)), fn)
             for k, fn in enumerate(fns)]
    return control_flow.case(pairs, default=default, exclusive=False, name=name)


def foldr(fn: Callable, elems, initializer=None, name: str = "foldr", back_prop: bool = True,
          parallel_iterations: int = 10, swap_memory: bool = False):
    """acc = fn(acc, elems[i]) for i = n-1 down to 0, starting from initializer; returns
    acc (TF1's tf.foldr: og.foldl from the end).

    Args:
        fn: function (acc, element) -> new acc, in the structure of initializer.
        elems: tensor whose leading dimension is iterated over.
        initializer: the first acc; None means elems[n-1], the fold then running over
            elems[:n-1] backwards.
        name, back_prop, parallel_iterations, swap_memory: as for `og.while_loop`.

    Raises:
        ShapeError: elems is a scalar, or fn changes acc's dtype or shape.
    """
    elems = control_flow._elements(elems, "foldr")
    last = control_flow._length(elems) - np.int64(1)
    if initializer is None:
        initializer, last = api.gather(elems, last), last - np.int64(1)

    def body(i, acc):
        return [i - np.int64(1), fn(acc, api.gather(elems, i))]

    _, res = control_flow.while_loop(
        lambda i, acc: api.greater_equal(i, np.int64(0)), body, [last, initializer],
        name=name, back_prop=back_prop, parallel_iterations=parallel_iterations,
        swap_memory=swap_memory)
    return res


_DEBUGGING_NAMES = (
    "Assert", "assert_equal", "assert_greater", "assert_greater_equal", "assert_integer",
    "assert_less", "assert_less_equal", "assert_near", "assert_negative",
    "assert_non_negative", "assert_non_positive", "assert_none_equal", "assert_positive",
    "assert_rank", "assert_rank_at_least", "assert_scalar", "assert_type",
    "check_numerics", "is_finite", "is_inf", "is_nan", "is_non_decreasing",
    "is_strictly_increasing", "is_numeric_tensor", "assert_all_finite",
    "assert_proper_iterable", "assert_rank_in", "assert_same_float_dtype")


def _debugging_namespace() -> types.ModuleType:
    """og.debugging: TF's tf.debugging names that onegraph has."""
    ns = types.ModuleType("onegraph.debugging", "TF's tf.debugging names (Assert, "
                          "assert_*, check_numerics, is_nan, ...)")
    for n in _DEBUGGING_NAMES:
        for module in (_debugging, debugging_more, api_compat, api_math, namespaces,
                       api_tf1_odds, api):
            if hasattr(module, n):
                setattr(ns, n, getattr(module, n))
                break
    ns.__all__ = sorted(n for n in _DEBUGGING_NAMES if hasattr(ns, n))
    return ns


debugging = _debugging_namespace()
