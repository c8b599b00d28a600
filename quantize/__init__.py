"""Calibration, post-training int8 quantization and error reports.

Planned: nothing here is built yet (the quantized ONNX operators run, in `ops/`).
"""
