"""Conversion between onegraph models and ONNX (onnx is imported only inside this package)."""
