"""Calibration, post-training int8 quantization and error reports."""
