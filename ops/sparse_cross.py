"""TF's sparse feature crosses (SparseCrossV2, SparseCrossHashed): placeholder, filled in
by the sparse-cross work."""

from __future__ import annotations

OPS = ()
