"""og.summary: TF1's tf.summary, what TensorBoard shows of a training run.

Each function adds an op whose value, when the graph runs, is a serialized
`tensorflow.Summary` protocol buffer (bytes, as TF's), and puts it in a collection
(SUMMARIES unless told otherwise) for `merge_all`. A FileWriter writes those values into
an event file of `logdir`, which TensorBoard reads:

    loss_summary = og.summary.scalar("loss", loss)
    merged = og.summary.merge_all()
    writer = og.summary.FileWriter("logs", sess.graph)
    summary, _ = sess.run([merged, train_op])
    writer.add_summary(summary, step)

Names follow TF1: a summary's tag is its name scope ("train/loss"), made unique as op
names are ("loss_1"), with characters TensorBoard does not take replaced by "_"; a
`family` prefixes the tag again, so it shows under that tab. The ops (ops/summary.py)
and the event files (train/event_file.py) produce TF's bytes.
"""

from __future__ import annotations

import contextlib
import re

from . import graph as _g
from .api_compat import GraphKeys
from .event_file import FileWriter, FileWriterCache, SessionLog
from .summary_proto import Event, HistogramProto, Summary

SUMMARIES = GraphKeys.SUMMARIES

_NUMBERS = ("float16", "float32", "float64", "bfloat16", "int8", "int16", "int32",
            "int64", "uint8", "uint16", "uint32", "uint64")
_IMAGES = ("uint8", "float16", "float32", "float64")


def scalar(name: str, tensor, collections=None, family=None):
    """A summary of a real number (TF1's tf.summary.scalar): a string tensor holding a
    Summary with one simple_value, tagged with the summary's scope.

    Raises:
        TypeError: name or family is not a str, the tensor is not a real number type,
            or collections is not a list of collection names.
    """
    return _summary("ScalarSummary", "tags", name, family, collections,
                    [_checked(tensor, _NUMBERS, "scalar")])


def histogram(name: str, values, collections=None, family=None):
    """A histogram summary of a tensor's values (TF1's tf.summary.histogram), in TF's
    exponential buckets. Running it raises InvalidArgumentError for NaN or infinite
    values (TF's "Nan in summary histogram for: ...").

    Raises:
        TypeError: as scalar.
    """
    return _summary("HistogramSummary", "tag", name, family, collections,
                    [_checked(values, _NUMBERS + ("bool",), "histogram")])


def image(name: str, tensor, max_outputs: int = 3, collections=None, family=None):
    """A summary of up to `max_outputs` images (TF1's tf.summary.image) from a
    (batch, height, width, channels) tensor with 1, 3 or 4 channels, uint8 or float
    (floats are scaled into 0..255 per image, as TF scales them), encoded as PNG.

    Raises:
        TypeError: as scalar; max_outputs is not an int.
        ValueError: max_outputs is below 1, or the tensor's known rank is not 4 or its
            channels not 1, 3 or 4.
    """
    tensor = _checked(tensor, _IMAGES, "image")
    _check_rank(tensor, 4, "image", last=(1, 3, 4))
    return _summary("ImageSummary", "tag", name, family, collections, [tensor],
                    {"max_images": _max_outputs(max_outputs, "image")})


def audio(name: str, tensor, sample_rate, max_outputs: int = 3, collections=None,
          family=None):
    """A summary of up to `max_outputs` clips (TF1's tf.summary.audio) from a float32
    (batch, frames, channels) or (batch, frames) tensor of values in [-1, 1], encoded
    as 16-bit WAV at `sample_rate` (a number or float tensor) frames per second.

    Raises:
        TypeError: as scalar (the tensor must be float32); max_outputs is not an int.
        ValueError: max_outputs is below 1, or the tensor's known rank is not 2 or 3.
    """
    tensor = _checked(tensor, ("float32",), "audio")
    if tensor.shape is not None and len(tensor.shape) not in (2, 3):
        raise ValueError(f"audio {name!r}: the tensor must be (batch, frames) or (batch, "
                         f"frames, channels), got shape {tensor.shape}")
    g = _g.get_default_graph()
    rate = _checked(g.convert(sample_rate, dtype="float32"), ("float32",), "audio sample_rate")
    return _summary("AudioSummaryV2", "tag", name, family, collections, [tensor, rate],
                    {"max_outputs": _max_outputs(max_outputs, "audio")})


def text(name: str, tensor, collections=None):
    """A summary of strings (TF1's tf.summary.text), shown by TensorBoard's text
    dashboard (as Markdown).

    Raises:
        TypeError: the tensor is not a string tensor; name is not a str.
    """
    return _summary("TextSummary", "tag", name, None, collections,
                    [_checked(tensor, ("string",), "text")])


def merge(inputs, collections=None, name=None):
    """One summary holding the values of all `inputs` (TF1's tf.summary.merge).
    Running it raises InvalidArgumentError when two inputs hold the same tag.

    Raises:
        ValueError: inputs is empty.
        TypeError: inputs is not a list of string tensors.
    """
    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, (list, tuple)):
        raise TypeError(f"merge: inputs must be a list of summary tensors, got "
                        f"{type(inputs).__name__}")
    if not inputs:
        raise ValueError("List argument 'inputs' to 'MergeSummary' Op with length 0 shorter "
                         "than minimum length 1.")
    g = _g.get_default_graph()
    tensors = [_checked(t, ("string",), "merge") for t in inputs]
    with g.name_scope(name or "Merge"):
        merged = g.op("MergeSummary", tensors, name=name or "MergeSummary")
    _collect(g, merged, collections, [])
    return merged


def merge_all(key: str = SUMMARIES, scope=None, name=None):
    """The merge of every summary in collection `key` whose name matches the regular
    expression `scope` from its start (TF1's tf.summary.merge_all); None when there is
    none.

    Raises:
        TypeError: scope is not a str or None.
    """
    found = _g.get_default_graph().get_collection(key, scope=scope)
    return merge(found, name=name) if found else None


# ------------------------------------------------------------------------- helpers

def _clean_tag(name: str) -> str:
    """TF's clean_tag: characters other than letters, digits, "_", "-", "/" and "."
    become "_", and a leading "/" goes."""
    return re.sub(r"[^-/\w.]", "_", name).lstrip("/")


@contextlib.contextmanager
def _summary_scope(g, name: str, family):
    """(tag, scope) of a new summary, as TF's summary_scope: the scope is `name`'s
    (under `family/` when given) made unique; the tag is the scope without its "/", with
    the family in front again."""
    _g.check_name(name, "summary")
    if not name:
        raise ValueError("summary: name must not be empty")
    if family is not None and not isinstance(family, str):
        raise TypeError(f"summary {name!r}: family must be a str or None, got "
                        f"{type(family).__name__}")
    name = _clean_tag(name)
    family = _clean_tag(family) if family else None
    with g.name_scope(name if family is None else f"{family}/{name}") as scope:
        tag = scope.rstrip("/")
        yield (tag if family is None else f"{family}/{tag}"), scope


def _summary(op_type: str, tag_input: str, name, family, collections, inputs, attrs=None):
    g = _g.get_default_graph()
    with _summary_scope(g, name, family) as (tag, scope):
        tags = g.constant(tag, name=tag_input)
        out = g.op(op_type, [tags] + list(inputs), attrs, name=scope)
    _collect(g, out, collections, [SUMMARIES])
    return out


def _collect(g, tensor, collections, default) -> None:
    """Add `tensor` to `collections` (default: `default`).

    Raises:
        TypeError: collections is not a list or tuple of names.
    """
    if collections is None:
        collections = default
    elif isinstance(collections, (str, bytes)) or not isinstance(collections, (list, tuple)):
        raise TypeError(f"summary: collections must be a list of collection names, got "
                        f"{type(collections).__name__}")
    for key in collections:
        g.add_to_collection(key, tensor)


def _checked(value, allowed, what: str):
    """`value` as a tensor of one of the `allowed` dtype names.

    Raises:
        TypeError: its dtype is another (TF's "Value passed to parameter ... has
            DataType ... not in list of allowed values").
    """
    tensor = _g.get_default_graph().convert(value)
    dtype = tensor.dtype.name.lower()
    if dtype not in allowed:
        raise TypeError(f"{what}: the tensor has DataType {dtype}, not one of the allowed "
                        f"values: {', '.join(allowed)}")
    return tensor


def _check_rank(tensor, rank: int, what: str, last=None) -> None:
    shape = tensor.shape
    if shape is None:
        return
    if len(shape) != rank:
        raise ValueError(f"{what}: the tensor must have rank {rank}, got shape {shape}")
    if last is not None and shape[-1] is not None and shape[-1] not in last:
        raise ValueError(f"{what}: the tensor's last dim must be one of {list(last)}, got "
                         f"shape {shape}")


def _max_outputs(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what}: max_outputs must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{what}: max_outputs must be at least 1, got {value}")
    return value


__all__ = ["Event", "FileWriter", "FileWriterCache", "HistogramProto", "SUMMARIES",
           "SessionLog", "Summary", "audio", "histogram", "image", "merge", "merge_all",
           "scalar", "text"]
