"""Conversion between onegraph models and ONNX (onnx is imported only when a conversion
runs, so importing this package does not need it).

    from onegraph.convert import from_onnx, to_onnx
    model = from_onnx("model.onnx")        # -> onegraph.format.Model
    proto = to_onnx(model, "copy.onnx")    # -> onnx.ModelProto (also written to disk)
"""

from .onnx_export import to_onnx
from .onnx_import import from_onnx, unsupported_ops

__all__ = ["from_onnx", "to_onnx", "unsupported_ops"]
