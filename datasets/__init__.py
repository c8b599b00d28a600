"""Small bundled datasets and their loaders.

    images, labels = onegraph.datasets.digits()   # (1797, 8, 8) uint8, (1797,) int64

`digits.npz` is the UCI handwritten digits set (CC BY 4.0, see DIGITS_LICENSE.md).
"""

from __future__ import annotations

import os

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))


def digits(split: str | None = None, seed: int = 0, test_fraction: float = 0.2):
    """The UCI digits: 1797 grey 8x8 images (values 0..16) with labels 0..9.

    Args:
        split: None for all examples; "train" or "test" for a fixed shuffled
            split (same `seed` -> same split).
        seed: seed of the split's permutation.
        test_fraction: share of examples in the test split.

    Returns:
        (images uint8 (n, 8, 8), labels int64 (n,)).

    Raises:
        ValueError: unknown split name.
    """
    with np.load(os.path.join(_HERE, "digits.npz"), allow_pickle=False) as f:
        images, labels = f["images"], f["labels"]
    if split is None:
        return images, labels
    if split not in ("train", "test"):
        raise ValueError(f"split must be None, 'train' or 'test', got {split!r}")
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = int(round(len(labels) * test_fraction))
    pick = order[:n_test] if split == "test" else order[n_test:]
    return images[pick], labels[pick]


__all__ = ["digits"]
