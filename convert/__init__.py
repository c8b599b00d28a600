"""Conversion between onegraph models and ONNX (onnx is imported only inside this package).

    from onegraph.convert import from_onnx, to_onnx
    model = from_onnx("model.onnx")        # -> onegraph.format.Model
    proto = to_onnx(model, "copy.onnx")    # -> onnx.ModelProto (also written to disk)
"""

from .onnx_import import from_onnx, unsupported_ops


def to_onnx(model, path=None, opset=None, **kwargs):
    """Convert a Model to an ONNX ModelProto (see `onnx_export.to_onnx`).

    Raises:
        ConversionError: the model has ops without an ONNX equivalent, or the result
            fails ONNX's checker.
    """
    from .onnx_export import to_onnx as _to_onnx

    return _to_onnx(model, path, opset, **kwargs)


__all__ = ["from_onnx", "to_onnx", "unsupported_ops"]
