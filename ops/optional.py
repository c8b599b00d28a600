"""Operators: ONNX optional values (Optional, OptionalHasElement, OptionalGetElement).

An optional value is represented as None (empty) or as the value itself: a numpy array
for an optional tensor, a list of arrays for an optional sequence. So a plain tensor or
sequence is also a (non-empty) optional, which is how opset 18+ lets OptionalHasElement
and OptionalGetElement take them directly. The `type` attribute of `Optional` (the
element type of an empty optional) is kept as text; the kernel only checks that an
Optional without an input has one.
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, OpAttributeError
from .registry import TensorInfo, define


def _check_optional_node(has_input: bool, attrs) -> None:
    """An Optional node has an input or the `type` attribute (ONNX: without either,
    an empty optional has no type; onnxruntime and onnx's checker refuse it).

    Raises:
        OpAttributeError: neither is there.
    """
    if not has_input and not attrs["type"]:
        raise OpAttributeError("Optional: needs an input or the type attribute (the "
                               "element type of the empty optional it makes)")


def _optional_kernel(inputs, attrs, ctx):
    """Wrap the input (or nothing: an empty optional) as an optional value.

    Raises:
        OpAttributeError: no input and no `type` attribute.
    """
    value = inputs[0] if inputs else None
    # an omitted input reaches the kernel as None, like an empty optional
    _check_optional_node(value is not None, attrs)
    return (value,)


def _has_element_kernel(inputs, attrs, ctx):
    """True (bool scalar) unless the input is an empty optional or omitted."""
    return (np.array(bool(inputs) and inputs[0] is not None),)


def _get_element_kernel(inputs, attrs, ctx):
    """The value held by an optional; a tensor or sequence passes through.

    Raises:
        ExecutionError: the optional is empty.
    """
    value = inputs[0]
    if value is None:
        raise ExecutionError("OptionalGetElement: the optional is empty")
    return (value,)


def _infer_optional(attrs, inputs):
    _check_optional_node(bool(inputs) and inputs[0] is not None, attrs)
    return [TensorInfo(None, None)]


def _infer_has_element(attrs, inputs):
    return [TensorInfo(np.dtype(bool), ())]


def _infer_get_element(attrs, inputs):
    info = inputs[0]
    if info is None or (info.dtype is not None and np.dtype(info.dtype) == object
                        and info.shape == ()):
        return [TensorInfo(None, None)]
    return [TensorInfo(info.dtype, info.shape)]


OPS = (
    define("Optional", ["input?"], ["output"], _optional_kernel,
           attrs=[("type", "string", "")], infer=_infer_optional, since_version=15),
    define("OptionalGetElement", ["input"], ["output"], _get_element_kernel,
           infer=_infer_get_element, since_version=18),
    define("OptionalHasElement", ["input?"], ["output"], _has_element_kernel,
           infer=_infer_has_element, since_version=18),
)

KNOWN_FAILURES: dict[str, str] = {}
