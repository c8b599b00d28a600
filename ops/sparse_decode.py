"""Operators: TF's ops whose results are sparse tensors (onegraph domain): CTC decoders,
edit distance, string splitting."""

from __future__ import annotations

OPS = ()
