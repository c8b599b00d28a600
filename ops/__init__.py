"""The operator catalogue: ONNX-semantics ops plus the `onegraph` domain.

`REGISTRY` is built once from an explicit, sorted list of op family modules; each
module lists its `OpDef`s in `OPS`. Look an op up with `get_op(op_type, domain)`.
"""

from . import (activation, control_flow, conv, elementwise, indexing, linalg, normalization,
               pool, reduction, rnn, shape)
from .registry import REQUIRED, AttrSpec, KernelContext, OpDef, Registry, TensorInfo, define

_FAMILIES = (activation, control_flow, conv, elementwise, indexing, linalg, normalization,
             pool, reduction, rnn, shape)

REGISTRY = Registry()
for _module in _FAMILIES:
    for _op in _module.OPS:
        REGISTRY.add(_op)


def get_op(op_type: str, domain: str = "", where: str = "") -> OpDef:
    """Return the OpDef of an op; raises UnsupportedOpError naming `where` if unknown."""
    return REGISTRY.get(op_type, domain, where)


__all__ = ["REGISTRY", "REQUIRED", "AttrSpec", "KernelContext", "OpDef", "Registry",
           "TensorInfo", "define", "get_op"]
