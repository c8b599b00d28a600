"""The operator catalogue: ONNX-semantics ops plus the `onegraph` domain.

`REGISTRY` is built once from an explicit, sorted list of op family modules; each
module lists its `OpDef`s in `OPS`. Gradient rules live next to their ops: either in
the OpDef itself or in a `<family>_grad.py` module whose `GRADIENTS` dict maps op type
to rule; both are attached here, and a rule for an unknown op is refused. Look an op
up with `get_op(op_type, domain)`.
"""

import dataclasses

from . import bits  # noqa: I001 - TF's Bitcast (onegraph domain)
from . import printing  # noqa: I001 - TF's PrintV2 (onegraph domain)
from . import summary  # noqa: I001 - TF's summary ops (onegraph domain)
from . import sparse, sparse_decode, sparse_grad  # noqa: I001 - TF's sparse ops (onegraph)
from . import pyfunc  # noqa: I001 - TF's PyFunc (onegraph domain)
from . import dataset  # noqa: I001 - TF's iterator ops (onegraph domain)
from . import parsing  # noqa: I001 - TF's Example parsing (onegraph domain)
from . import io_ops  # noqa: I001 - TF's file and CSV/raw decoding ops (onegraph domain)
from . import lookup  # noqa: I001 - TF's lookup tables (onegraph domain)
from . import sets  # noqa: I001 - TF's set operations (onegraph domain)
from . import readers  # noqa: I001 - TF's file readers (onegraph domain)
from . import sparse_serialize, json_example  # noqa: I001 - TF's sparse/JSON serialization
from . import (activation, activation_grad, attention, candidate_sampling, candidate_sampling_more,
               checkpoint, control_flow, conv, conv_grad, ctc, dataflow, debugging, deform_conv,
               elementwise, elementwise_grad, image, image_more, indexing, indexing_grad, linalg,
               linalg_grad, linalg_more, linalg_more_grad, linalg_solve, linalg_solve_grad, loss,
               ml, ml_linear, ml_trees, ms_fused, ms_gather_packed, ms_gating, ms_generation,
               ms_llm, ms_matmul_nbits, ms_maxpool_mask, ms_moe, ms_nchwc, ms_nn, ms_quantization,
               ms_quantization_more, ms_sequence, ms_tensor, ms_text, ms_transformer, normalization,
               normalization_extra, normalization_grad, optional, pool, pool_grad, preview_training,
               quantization, queue, random, random_more, reduction, reduction_grad, rnn, rnn_grad,
               rnn_grad_kernels, shape, shape_grad, signal, special, special_grad, state,
               state_scatter, strings, strings_tf, tensor_extra, text, training, training_grad)
from . import sparse_cross  # noqa: I001 - TF's sparse feature crosses (onegraph)
from . import image_codecs  # noqa: I001 - TF's GIF/BMP decoding, JPEG encoding (onegraph)
from .registry import (NUM_OUTPUTS, REQUIRED, AttrSpec, KernelContext, OpDef, Registry, TensorInfo,
                       VariableRef, define)

_FAMILIES = (activation, attention, bits, candidate_sampling, candidate_sampling_more, checkpoint,
             control_flow, conv, ctc, dataflow, dataset, debugging, deform_conv, elementwise, image,
             image_more, indexing, linalg, linalg_more, linalg_solve, loss, ml, ml_linear, ml_trees,
             ms_fused, ms_gather_packed, ms_gating, ms_generation, ms_llm, ms_matmul_nbits,
             ms_maxpool_mask, ms_moe, ms_nchwc, ms_nn, ms_quantization, ms_quantization_more,
             ms_sequence, ms_tensor, ms_text, ms_transformer, normalization, normalization_extra,
             optional, pool, preview_training, printing, pyfunc, quantization, queue, random,
             random_more,
             reduction, rnn, rnn_grad_kernels, shape, signal, special, state, state_scatter,
             sparse, sparse_decode, strings, strings_tf, summary, tensor_extra, text, training,
             parsing, io_ops, lookup, sets, readers, sparse_serialize, json_example, sparse_cross,
             image_codecs)

# Modules holding `GRADIENTS = {op_type: rule}` (default domain) or
# `GRADIENTS = {(domain, op_type): rule}`.
_GRADIENT_MODULES = (activation_grad, conv_grad, elementwise_grad, indexing_grad, linalg_grad,
                     linalg_more_grad, linalg_solve_grad, normalization_grad, pool_grad,
                     reduction_grad, rnn_grad, shape_grad, sparse_grad, special_grad,
                     training_grad)

REGISTRY = Registry()
for _module in _FAMILIES:
    for _op in _module.OPS:
        REGISTRY.add(_op)
for _module in _GRADIENT_MODULES:
    for _key, _rule in _module.GRADIENTS.items():
        _domain, _name = _key if isinstance(_key, tuple) else ("", _key)
        _op = REGISTRY.get(_name, _domain)
        if _op.gradient is not None:
            raise ValueError(f"gradient of {_name} defined twice")
        REGISTRY.replace(dataclasses.replace(_op, gradient=_rule))


def get_op(op_type: str, domain: str = "", where: str = "") -> OpDef:
    """Return the OpDef of an op; raises UnsupportedOpError naming `where` if unknown."""
    return REGISTRY.get(op_type, domain, where)


__all__ = ["NUM_OUTPUTS", "REGISTRY", "REQUIRED", "AttrSpec", "KernelContext", "OpDef", "Registry",
           "TensorInfo", "VariableRef", "define", "get_op"]
