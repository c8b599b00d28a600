"""A tiny model with a `train` signature (linear regression, Adam), for CLI tests."""

import numpy as np

import onegraph as og


def save_linear_trainable(path) -> None:
    """Save to `path` a .og whose `train` signature fits y (N, 1) from x (N, 3)."""
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 3], name="x")
        y = og.placeholder(og.float32, [None, 1], name="y")
        w = og.Variable(np.zeros((3, 1), np.float32), name="w")
        loss = og.reduce_mean(og.square(og.matmul(x, w) - y), name="loss")
        train = og.train.Adam(0.1).minimize(loss)
    og.save(g, str(path), signatures={
        "train": og.signature(inputs={"x": x, "y": y}, outputs={"loss": loss},
                              targets=[train])})
