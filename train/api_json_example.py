"""TF1's tf.io.decode_json_example over the DecodeJSONExample op (ops/json_example.py):
the JSON text of a tf.train.Example, as protobuf's JSON mapping writes it, becomes the
Example's serialized bytes (parse them with og.train.Example.FromString or
og.io.parse_example)."""

from __future__ import annotations

import numpy as np

from . import graph as _g


def decode_json_example(json_examples, name=None):
    """A string tensor of the same shape: each JSON text as its tf.train.Example's
    bytes (tf.io.decode_json_example). Running it with text that is not an Example's
    JSON raises InvalidArgumentError ("Error while parsing JSON: ...").

    Raises:
        TypeError: json_examples is not a string tensor (or str/bytes values).
    """
    what = "decode_json_example"
    _g.check_name(name, what)
    if isinstance(json_examples, _g.Tensor):
        x = json_examples
    else:
        if not all(isinstance(v, (str, bytes))
                   for v in np.asarray(json_examples, dtype=object).reshape(-1)):
            raise TypeError(f"{what}: json_examples must be strings")
        x = _g.get_default_graph().convert(np.asarray(json_examples, dtype=object))
    if x.dtype.numpy != np.dtype(object):
        raise TypeError(f"{what}: json_examples must be a string tensor, got "
                        f"{x.dtype.short_name}")
    return x.graph.op("DecodeJSONExample", [x], {}, name=name or what, domain="onegraph")


__all__ = ["decode_json_example"]
