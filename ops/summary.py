"""Operators: TensorBoard summaries (TF's ScalarSummary, HistogramSummary, ImageSummary,
AudioSummaryV2, MergeSummary; TextSummary is og's name for tf.summary.text's op).

Each op yields one 0-d string tensor: a serialized `tensorflow.Summary`, made by
`summary_encoding` exactly as TF's kernel makes it. Tags arrive as string tensors
(object arrays of str). What TF refuses while running (InvalidArgumentError: NaN in
a histogram, shapes that do not match, a duplicate tag in a merge) is ExecutionError
here, in TF's words. The ops are pure (not stateful): a summary of the same values is
the same bytes.
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError
from . import summary_encoding as enc
from .registry import TensorInfo, define

DOMAIN = "onegraph"
_OBJ = np.dtype(object)


def _bytes_tensor(data: bytes) -> np.ndarray:
    """A 0-d object array holding `data` (a string tensor of one element)."""
    out = np.empty((), dtype=object)
    out[()] = data
    return out


def _scalar_tag(tag, op: str) -> str:
    """The one tag of a scalar string tensor."""
    tag = np.asarray(tag, dtype=object)
    if tag.shape != ():
        raise ExecutionError(f"{op}: tag must be a scalar string, got shape {list(tag.shape)}")
    return tag[()]


def _encoded(op: str, make) -> tuple:
    """Run an encoder; its refusals (TF's InvalidArgumentError) become ExecutionError."""
    try:
        return (_bytes_tensor(make()),)
    except (ValueError, TypeError) as e:
        raise ExecutionError(f"{op}: {e}") from e


def _scalar(inputs, attrs, ctx):
    return _encoded("ScalarSummary", lambda: enc.scalar_summary(inputs[0], inputs[1]))


def _histogram(inputs, attrs, ctx):
    tag = _scalar_tag(inputs[0], "HistogramSummary")
    return _encoded("HistogramSummary", lambda: enc.histogram_summary(tag, inputs[1]))


def _image(inputs, attrs, ctx):
    tag = _scalar_tag(inputs[0], "ImageSummary")
    return _encoded("ImageSummary", lambda: enc.image_summary(
        tag, inputs[1], int(attrs["max_images"]), list(attrs["bad_color"])))


def _audio(inputs, attrs, ctx):
    tag = _scalar_tag(inputs[0], "AudioSummaryV2")
    rate = np.asarray(inputs[2])
    if rate.shape != ():
        raise ExecutionError(f"AudioSummaryV2: sample_rate must be a scalar, got shape "
                             f"{list(rate.shape)}")
    return _encoded("AudioSummaryV2", lambda: enc.audio_summary(
        tag, inputs[1], rate[()], int(attrs["max_outputs"])))


def _text(inputs, attrs, ctx):
    tag = _scalar_tag(inputs[0], "TextSummary")
    return _encoded("TextSummary", lambda: enc.text_summary(tag, inputs[1]))


def _merge(inputs, attrs, ctx):
    # each input is a string tensor of any shape, its elements serialized Summaries
    blobs = [b.encode("utf-8", "surrogateescape") if isinstance(b, str) else b
             for x in inputs for b in np.asarray(x, dtype=object).reshape(-1)]
    return _encoded("MergeSummary", lambda: enc.merge_summaries(blobs))


def _infer(attrs, inputs):
    return [TensorInfo(_OBJ, ())]


OPS = (
    define("ScalarSummary", ["tags", "values"], ["summary"], _scalar, infer=_infer,
           domain=DOMAIN, doc="a Summary of one simple_value per tag"),
    define("HistogramSummary", ["tag", "values"], ["summary"], _histogram, infer=_infer,
           domain=DOMAIN, doc="a Summary holding a histogram of the values"),
    define("ImageSummary", ["tag", "tensor"], ["summary"], _image,
           [("max_images", "int", 3), ("bad_color", "ints", [255, 0, 0, 255])],
           infer=_infer, domain=DOMAIN, doc="a Summary of up to max_images PNG images"),
    define("AudioSummaryV2", ["tag", "tensor", "sample_rate"], ["summary"], _audio,
           [("max_outputs", "int", 3)], infer=_infer, domain=DOMAIN,
           doc="a Summary of up to max_outputs WAV clips"),
    define("TextSummary", ["tag", "tensor"], ["summary"], _text, infer=_infer, domain=DOMAIN,
           doc="a Summary of a string tensor for TensorBoard's text plugin"),
    define("MergeSummary", ["inputs*"], ["summary"], _merge, infer=_infer, domain=DOMAIN,
           doc="one Summary holding the values of all input Summaries"),
)
