"""Conversion between onegraph models and ONNX (onnx is imported only when a conversion
runs, so importing this package does not need it), and from TF1 frozen graphs.

    from onegraph.convert import from_graph_def, from_onnx, to_onnx
    model = from_onnx("model.onnx")        # -> onegraph.format.Model
    proto = to_onnx(model, "copy.onnx")    # -> onnx.ModelProto (also written to disk)
    model = from_graph_def("frozen.pb")    # a TF1 GraphDef, its placeholders -> sinks
    model = from_saved_model("export_dir")  # a TF1 SavedModel (saved_model.pb), frozen
"""

from .onnx_export import to_onnx
from .onnx_import import from_onnx, unsupported_ops
from .tf_graph_def import from_graph_def
from .tf_saved_model import from_saved_model

__all__ = ["from_graph_def", "from_onnx", "from_saved_model", "to_onnx", "unsupported_ops"]
