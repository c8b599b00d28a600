"""og.compat: TF's tf.compat for code written against TensorFlow 1.x.

`import onegraph.compat.v1 as tf` gives onegraph's TF1-style API under TF1's names
(onegraph has only the graph-mode API, so v1 is all of it), and the text helpers
`as_bytes`, `as_text` and `as_str` convert as TF's do.
"""

from __future__ import annotations

from . import v1

__all__ = ["as_bytes", "as_str", "as_text", "v1"]


def as_bytes(bytes_or_text, encoding: str = "utf-8") -> bytes:
    """bytes as they are, str encoded (TF's tf.compat.as_bytes).

    Raises:
        TypeError: anything else (TF's message).
    """
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text, encoding: str = "utf-8") -> str:
    """str as it is, bytes decoded (TF's tf.compat.as_text / as_str).

    Raises:
        TypeError: anything else (TF's message).
    """
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text
