"""onegraph: one portable dataflow graph file from the datacenter to the phone.

Build or import a model, save it as one `.og` FlatBuffers file, train it, convert it
to and from ONNX, quantize it, and run it anywhere numpy runs::

    import onegraph as og
    model = og.load("model.og")          # memory-mapped, verified, zero-copy weights
    og.save(model, "copy.og")            # atomic write
    sess = og.Session(model)             # TF1's Session.run(fetches, feed_dict)

The TF1-style graph-building API is here too (og.Graph, og.placeholder, og.Tensor,
og.nn, og.train, og.gradients, ...), loaded on first use; the file's IR classes are in
`onegraph.format` (as IRGraph and IRTensor here, since og.Graph and og.Tensor are the
training graph's).
"""

from __future__ import annotations

import os

from .errors import (CancelledError, ConversionError, DataLossError, ExecutionError, FormatError,
                     GradientNotDefinedError, NotFoundError, OneGraphError, OpAttributeError,
                     OutOfRangeError, PlacementError, QuantizationError,
                     ResourceExhaustedError, ShapeError, UnsupportedOpError)
from .format import (DType, Graph as IRGraph, Model, Node, Signature, Tensor as IRTensor,
                     TensorKind)

__version__ = "0.1.0"


def save(model, path: str | os.PathLike, **kwargs) -> int:
    """Write a model to a `.og` file atomically (temp file, fsync, rename).

    Args:
        model: a `onegraph.format.Model`, or a training graph (`og.Graph`), which is
            converted first with the keyword arguments: `signatures={"serving":
            og.signature(...), "train": ...}` and `session=sess` to store the
            variables' current values in that Session (without it, a graph is saved
            with its variables' initial values, as TF1 graph export does). A Model
            takes `session=` too: an `og.Session(model)` that trained it (say with
            `run_signature("train", ...)`) gives the values to store.
        path: destination file (str, bytes or os.PathLike); an existing file is
            replaced only once the new one is complete on disk.

    Returns:
        The number of bytes written.

    Raises:
        FormatError: the model is inconsistent; nothing is written.
        TypeError: model is neither a Model nor an og.Graph, keyword arguments other
            than session= are given with a Model, or path is not a str, bytes or
            os.PathLike.
        OneGraphError: `session` runs another graph than the model's.
        RuntimeError: `session` is closed (its values are gone).
        ValueError: path contains a NUL byte.
        OSError: the file cannot be written; the subclass the system gave
            (FileNotFoundError for a missing folder, PermissionError,
            IsADirectoryError, ...), as Python's open() raises, worded
            "cannot write 'PATH': the folder does not exist". Every file error of
            onegraph follows this rule except `from_onnx`/`to_onnx`, which raise
            ConversionError with the same sentence.
    """
    from .format import save_model

    if not isinstance(model, Model):
        to_model = getattr(model, "to_model", None)
        if to_model is None:
            raise TypeError(f"cannot save a {type(model).__name__}; expected a Model")
        model = to_model(**kwargs)
    elif set(kwargs) - {"session"}:
        raise TypeError(f"unexpected arguments for saving a Model: "
                        f"{sorted(set(kwargs) - {'session'})} (a Model takes only session=)")
    elif kwargs.get("session") is not None:
        from .train.session import model_with_values

        model = model_with_values(model, kwargs["session"])
    return save_model(model, path)


def load(path: str | os.PathLike, check_data: bool = False,
         memory_map: bool = True) -> Model:
    """Memory-map and verify a `.og` file.

    Constant and variable tensors are numpy arrays viewing the file (no copy, nothing
    read until touched), so load time does not grow with the size of the weights
    (string tensors excepted: they are decoded at load). A pipe or FIFO (`cat m.og |
    ...`, `/dev/stdin`) is read to its end into memory; opening a FIFO waits for a
    writer, as `cat` does.
    As with TFLite's memory-mapped models, the file must then only be replaced by a
    rename while the model is in use (`og.save` and `onegraph convert` do that): a file
    rewritten in place (`cp new.og model.og`) changes the weights under a running
    Session, and one truncated in place makes reading them crash the process (SIGBUS).

    Args:
        path: the `.og` file (str, bytes or os.PathLike).
        check_data: also verify the CRC-32 of every data segment (reads all weights).
        memory_map: False reads the whole file into memory instead of mapping it, as
            onnxruntime does: the model no longer depends on the file, at the cost of
            reading every weight at load time and holding them in memory.

    Raises:
        FormatError: the file is malformed (the message names the field).
        DataLossError: the file is truncated, or a checksum fails with check_data.
        OSError: the file cannot be opened; the subclass the system gave
            (FileNotFoundError, PermissionError, IsADirectoryError, ...), as Python's
            open() raises, worded "cannot read 'PATH': No such file or directory"
            (the same words as the CLI; `from_onnx` raises ConversionError with them).
        TypeError: path is not a str, bytes or os.PathLike.
        ValueError: path contains a NUL byte.
    """
    from .format import load_model

    return load_model(path, check_data=check_data, memory_map=memory_map)


def __dir__() -> list[str]:
    """The module's names, those loaded on first use included (help(), completion)."""
    from .train import public

    # `os` and `annotations` are this module's own imports, not onegraph's API
    return sorted((set(globals()) - {"os", "annotations"}) | set(public.__all__)
                  | {"Session", "RunMetadata", "train", "datasets", "compat"})


def __getattr__(name: str):
    # Heavier pieces load on first use so `import onegraph` stays cheap on devices.
    if name == "Session":
        from .train.session import Session

        return Session
    if name == "RunMetadata":
        from .train.profiling import RunMetadata

        return RunMetadata
    if name in ("train", "datasets", "compat"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    if not name.startswith("__"):
        # the graph-building API (og.placeholder, og.gradients, og.nn, ...)
        from .train import public

        if name in public.__all__:
            return getattr(public, name)
    raise AttributeError(f"module 'onegraph' has no attribute {name!r}")
