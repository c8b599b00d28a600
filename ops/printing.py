"""Operators: printing when a graph runs (TF's PrintV2, behind og.print and TF1's og.Print).

PrintV2 has no outputs and is stateful: like Assert it runs when something depends on
it (a fetch of the op, `og.control_dependencies`), never when the graph is built, and
it is neither constant-folded nor pruned. Its `template` holds the text around the
inputs (one more piece than there are inputs); each input is written as TF writes it:
style "v2" (tf.print) shows `summarize` elements at each end of every axis, style "v1"
(tf.Print) the first `summarize` elements in order. Numbers are spelled as TF's
kernels spell them (float32 in 6 significant digits, or 9 when 6 do not read back).
"""

from __future__ import annotations

import sys

import numpy as np

from ..errors import ExecutionError
from .registry import NODE_KEY, define

DOMAIN = "onegraph"


def _float_text(value, digits: tuple[int, int], kind) -> str:
    """A float in the fewer of TF's two precisions that reads back as the same value."""
    short = f"{value:.{digits[0]}g}"
    return short if kind(short) == value else f"{value:.{digits[1]}g}"


def element_text(value, quote: bool) -> str:
    """One element as TF's tensor summaries write it: bools as 1/0, strings quoted in
    tf.print's style."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (bytes, str)):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        return f'"{text}"' if quote else text
    if isinstance(value, np.complexfloating):
        return f"({element_text(value.real, quote)},{element_text(value.imag, quote)})"
    if isinstance(value, np.float64):
        return _float_text(value, (15, 17), np.float64)
    if isinstance(value, (np.floating, float)) or type(value).__module__ == "ml_dtypes":
        return _float_text(np.float32(value), (6, 9), np.float32)
    return str(value)


def summary_v2(array: np.ndarray, summarize: int, depth: int = 0) -> str:
    """tf.print's text of an array: nested brackets, `summarize` (< 0: all) elements at
    each end of every axis with "..." between, rows on lines of their own."""
    if array.ndim == 0:
        return element_text(array[()], True)
    count = array.shape[0]
    shown = list(range(count)) if summarize < 0 or count <= 2 * summarize else (
        list(range(summarize)) + [None] + list(range(count - summarize, count)))
    if array.ndim == 1:
        return "[" + " ".join("..." if i is None else element_text(array[i], True)
                              for i in shown) + "]"
    sep = "\n" * (array.ndim - 1) + " " * (depth + 1)
    return "[" + sep.join("..." if i is None else summary_v2(array[i], summarize, depth + 1)
                          for i in shown) + "]"


def summary_v1(array: np.ndarray, limit: int) -> str:
    """tf.Print's text of an array: its first `limit` elements in row-major order in
    nested brackets, "..." where it stops."""
    flat = array.reshape(-1)
    taken = [0]  # elements written so far

    def block(sub_shape) -> str:
        if len(sub_shape) == 1:
            parts = []
            for i in range(sub_shape[0]):
                if taken[0] >= limit:
                    return " ".join(parts) + "..."
                parts.append(element_text(flat[taken[0]], False))
                taken[0] += 1
            return " ".join(parts)
        out = ""
        for _ in range(sub_shape[0]):
            if taken[0] >= limit:
                break
            out += "[" + block(sub_shape[1:]) + "]"
        return out

    if array.ndim == 0:
        return element_text(flat[0], False)
    text = block(array.shape)
    return text + "..." if limit < flat.size and not text.endswith("...") else text


def _stream_write(where: str, text: str) -> None:
    """Write to sys.stdout / sys.stderr (looked up now, so redirections apply) or to
    a file named "file://<path>" (appended)."""
    if where.startswith("file://"):
        with open(where[len("file://"):], "a", encoding="utf-8") as f:
            f.write(text)
        return
    stream = sys.stdout if where == "stdout" else sys.stderr
    stream.write(text)
    stream.flush()


def _allowed_now(attrs, ctx) -> bool:
    """Whether this run prints: always without first_n, else for the node's first
    first_n runs in this session (counted in the session's state)."""
    first_n = int(attrs["first_n"])
    state = getattr(ctx, "state", None) if first_n >= 0 else None
    if state is None or NODE_KEY not in attrs:
        return first_n != 0
    key = ("print_count", attrs[NODE_KEY])
    done = state.get(key, 0)
    state[key] = done + 1
    return done < first_n


def _print(inputs, attrs, ctx):
    """Write the template with each input's summary in its place."""
    template = list(attrs["template"])
    if len(template) != len(inputs) + 1:
        raise ExecutionError(f"PrintV2: template has {len(template)} pieces for "
                             f"{len(inputs)} inputs (needs one more)")
    if not _allowed_now(attrs, ctx):
        return ()
    summarize = int(attrs["summarize"])
    v1 = attrs["style"] == "v1"
    text = template[0]
    for value, after in zip(inputs, template[1:]):
        array = np.asarray(value)
        text += (summary_v1(array, summarize) if v1 else summary_v2(array, summarize)) + after
    _stream_write(attrs["output_stream"], text)
    return ()


OPS = (
    define("PrintV2", ["inputs*"], [], _print,
           [("template", "strings", ["\n"]), ("summarize", "int", 3), ("style", "string", "v2"),
            ("output_stream", "string", "stderr"), ("first_n", "int", -1)],
           infer=lambda attrs, inputs: [], domain=DOMAIN, stateful=True,
           doc="write the inputs' values, in a text template, when the graph runs"),
)
