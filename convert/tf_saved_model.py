"""TF SavedModel directories (TensorFlow's saved_model.pb + variables/; TF1 ones and TF2
object-based ones written by tf.saved_model.save) to onegraph Models: `from_saved_model`,
and what `onegraph convert export_dir model.og` runs.

The meta graph with the given tags is imported frozen (train/tf_saved_model.py: each
variable, in TF2 each variable a signature's function captures, a constant of its
checkpoint value, the graph pruned to the signatures) under
TF's node names; the Model's signatures are the SavedModel's SignatureDefs, keyed as in
TF, their inputs and outputs under TF's keys.
"""

from __future__ import annotations

import os

from ..errors import ConversionError

__all__ = ["from_saved_model"]


def _tags(tags) -> list:
    """tags as a list of str.

    Raises:
        ConversionError: a bare str or not a sequence of str.
    """
    if isinstance(tags, (str, bytes)) or not isinstance(tags, (list, tuple, set, frozenset)) \
            or not all(isinstance(t, str) for t in tags):
        raise ConversionError(f"from_saved_model: tags must be a list of str (e.g. "
                              f"('serve',)), got {tags!r:.60}")
    return list(tags)


def from_saved_model(export_dir, tags=("serve",), signature="serving_default"):
    """The Model of a TF1 or TF2 SavedModel directory: its meta graph whose tags are
    exactly `tags`, frozen, with the SignatureDef `signature` (a key, a list of keys, or
    None for all of them but TF2's "__saved_model_init_op") as the Model's signature(s)
    of the same name.

    Raises:
        ConversionError: export_dir is no directory or holds no saved_model.pb, no
            such signature, a variable missing from the checkpoint, a TF2 function
            that writes a variable, or an op og cannot import.
        RuntimeError: no meta graph has these tags (TF's words).
        DataLossError: saved_model.pb or the checkpoint is corrupt.
    """
    import onegraph as og
    from ..train.tf_saved_model import INIT_OP_SIGNATURE, import_meta_graph, read_meta_graph

    if not isinstance(export_dir, (str, bytes, os.PathLike)):
        raise ConversionError(f"from_saved_model: export_dir must be a path, got "
                              f"{type(export_dir).__name__}")
    path = os.fsdecode(export_dir)
    if not os.path.isdir(path):
        raise ConversionError(f"from_saved_model: {path!r} is not a directory")
    meta = read_meta_graph(path, _tags(tags))
    keys = None if signature is None else [signature] if isinstance(signature, str) \
        else list(signature)
    if keys is not None and not all(isinstance(k, str) for k in keys):
        raise ConversionError(f"from_saved_model: signature must be a str, a list of str "
                              f"or None, got {signature!r:.60}")
    if keys == [] or not (keys or set(meta.signature_def) - {INIT_OP_SIGNATURE}):
        raise ConversionError(f"from_saved_model: {path} has no signature to convert")
    graph = og.Graph()
    with graph.as_default():
        imported = import_meta_graph(meta, path, keys)
    signatures = {key: og.signature(inputs=ins, outputs=outs)
                  for key, (ins, outs, _) in imported.items()}
    return graph.to_model(signatures=signatures)
