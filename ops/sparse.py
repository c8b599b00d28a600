"""Operators: TF's sparse tensor ops (onegraph domain), a SparseTensor given as its three
tensors (indices int64 (N, rank), values (N,), dense_shape int64 (rank,))."""

from __future__ import annotations

OPS = ()
