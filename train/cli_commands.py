"""`onegraph train`: train a saved model from the file alone (no Python model code).

    onegraph train model.og --data train.npz --steps 500 --batch-size 64 \\
        --checkpoint-dir ckpt/ --output trained.og [--seed 0] [--plot loss.png]

The model's `train` signature names the inputs (the `.npz` keys), the `loss` output
and the train op (its target). A loss with a value per example (minimize() trains on
their sum, as TF1) is shown, and returned in the summary, as its mean.

Steps are counted one way only: the steps of this training job, from the model file's
state (0 there, whatever global step the model already holds, e.g. a model that an
earlier `onegraph train` wrote). Checkpoints are named by that count (`ckpt-<step>.og`)
and a resumed run takes its step from that name; a checkpoint whose name holds no step
(`ckpt.og`, from `Saver.save` without global_step) is at the global steps it holds
beyond the model's, or at step 0 for a model without a global step. Each step feeds a
minibatch of rows drawn from the data by a generator seeded with (seed, step), so a run
resumed from a checkpoint sees the same batches as an uninterrupted one.

`--steps` is the total of that count: with a checkpoint in `--checkpoint-dir` the run
resumes from its step and trains the steps left; a checkpoint already at `--steps` or
past it leaves nothing to train (it says so), and the output then holds the
checkpoint's values, as TF's StopAtStepHook stops at once. The output is the model
with its variables holding the trained values.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from ..cli import check_readable, check_writable_flag, refuse_overwriting
from ..errors import FormatError, OneGraphError, ShapeError


def _progress(total, initial):
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    # disable=None: a bar only on a terminal; in a log every redraw would be a line
    return tqdm(total=total, initial=initial, unit="step", dynamic_ncols=True, disable=None)


# A batch is gathered into fresh arrays every step; far past this it would not fit in
# memory (and a typo like --batch-size 100000000000 should not try).
_MAX_BATCH_BYTES = 4 << 30


def train_model(model_path: str, data_path: str, steps: int, batch_size: int,
                checkpoint_dir: str | None = None, output: str | None = None, seed: int = 0,
                checkpoint_every: int = 100, plot: str | None = None, quiet: bool = False,
                plot_flag: str = "--plot") -> dict:
    """Train `model_path` on `data_path` (see the module doc); returns a summary dict.
    `plot_flag` is how messages name the loss curve's file.

    Returns:
        {"start_step" (the step of this job resumed from, 0 without a checkpoint),
        "steps" (trained in this call, 0 when the checkpoint was already at `steps`),
        "final_loss", "steps_per_second", "losses" [(step, loss), ...]}; steps count
        from the model file's state, losses of a per-example loss are its mean.

    Raises:
        OneGraphError: a bad count, the model has no usable `train` signature (its loss
            is not a number or has no value), the data does not match it (rows of
            another shape than the inputs take), a destination cannot be written or
            is a file the command reads, --output is not a .og name, the loss curve's
            extension is not one matplotlib writes, or the checkpoint resumed from
            holds fewer global steps than the model.
        DataLossError: the model's data fails its checksums.
        FormatError: the data file cannot be read or is not a plain .npz archive.
        OSError: the model file cannot be opened.
    """
    from .. import load, save
    from .saver import Saver, latest_checkpoint
    from .session import NodeTarget, Session, model_with_values

    for flag, value, least in (("--steps", steps, 1), ("--batch-size", batch_size, 1),
                               ("--checkpoint-every", checkpoint_every, 1),
                               ("--seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                or value < least:
            kind = "a positive" if least else "a non-negative"
            raise OneGraphError(f"{flag} must be {kind} integer, got {value!r}")
    model = load(model_path, check_data=True)  # no training on weights failing their CRC
    sig = model.signatures.get("train")
    if sig is None:
        raise OneGraphError(f"{model_path} has no 'train' signature "
                            f"(has {sorted(model.signatures)})")
    if sig.graph != 0:
        # training writes the trained values back into the main graph's variables
        raise OneGraphError(f"{model_path}: the 'train' signature runs graph {sig.graph} "
                            f"({model.graphs[sig.graph].name!r}); onegraph train trains a "
                            "signature of the main graph (graph 0) only")
    if "loss" not in sig.outputs:
        raise OneGraphError("the 'train' signature must have a 'loss' output")
    _check_loss(model.graph.tensors[sig.outputs["loss"]])
    data = _load_npz(data_path)
    missing = set(sig.inputs) - set(data)
    if missing:
        raise OneGraphError(f"{data_path} lacks arrays for train inputs {sorted(missing)} "
                            f"(has {sorted(data)})")
    scalars = sorted(k for k in sig.inputs if data[k].ndim == 0)
    if scalars:
        raise OneGraphError(f"{data_path}: arrays {scalars} are scalars; train inputs need "
                            f"one row per example")
    n = {len(data[k]) for k in sig.inputs}
    if len(n) != 1:
        raise OneGraphError(f"{data_path}: train inputs have different lengths: "
                            f"{ {k: len(data[k]) for k in sorted(sig.inputs)} }")
    n = n.pop()
    if n == 0:
        raise OneGraphError(f"{data_path}: the train inputs have no rows")
    batch_bytes = batch_size * sum(data[k][0].nbytes for k in sig.inputs)
    if batch_bytes > _MAX_BATCH_BYTES:
        raise OneGraphError(f"--batch-size {batch_size}: one batch would take "
                            f"{batch_bytes / 2**30:.1f} GiB (at most "
                            f"{_MAX_BATCH_BYTES >> 30} GiB)")
    _check_rows(sig, model.graph, data, data_path)
    # before training, not after it
    if output and os.path.splitext(output)[1].lower() != ".og":
        raise OneGraphError(f"--output {output}: the trained model is a .og file (name it "
                            "*.og; `onegraph convert` then writes .onnx)")
    plot_formats = _plot_formats() if plot else None
    if plot and plot_formats is not None and \
            os.path.splitext(plot)[1].lower().lstrip(".") not in plot_formats:
        raise OneGraphError(f"{plot_flag} {plot}: the loss curve's file name must end in "
                            f"one of {', '.join('.' + f for f in sorted(plot_formats))}")
    for flag, path, folder in (("--checkpoint-dir", checkpoint_dir, True),
                               ("--output", output, False), (plot_flag, plot, False)):
        if path:
            check_writable_flag(flag, path, folder)
    refuse_overwriting("--output", output, {"the --data file": data_path})
    refuse_overwriting(plot_flag, plot, {"the model being trained": model_path,
                                         "the --data file": data_path,
                                         "the --output file": output})
    if checkpoint_dir:
        try:
            os.makedirs(checkpoint_dir, exist_ok=True)
        except OSError as e:
            raise OneGraphError(f"--checkpoint-dir {checkpoint_dir}: cannot create the "
                                f"directory: {e.strerror or e}") from e
    sess = Session(model, seed=seed)
    g = model.graph
    step_name = model.metadata.get("collection:global_step")
    step_index = g.find_tensor(step_name) if step_name else None
    saver = Saver(max_to_keep=3)
    start = 0
    if checkpoint_dir and latest_checkpoint(checkpoint_dir):
        restored = saver.restore(sess, checkpoint_dir, fallback=True)
        start = _resumed_step(sess, model, step_index, restored)
        if start >= steps:  # said even with --quiet: the run did not do what it says
            print(f"checkpoint {restored} is already at step {start} >= --steps {steps}: "
                  "nothing to train", file=sys.stderr)
        elif not quiet:
            print(f"resumed from {restored} at step {start}", file=sys.stderr)
    fetch = [sig.outputs["loss"]] + [NodeTarget(t) for t in sig.targets]
    losses = []
    bar = None if quiet or start >= steps else _progress(steps, start)
    t0 = time.perf_counter()
    for step in range(start, steps):
        rng = np.random.default_rng([seed, step])
        rows = rng.integers(0, n, batch_size)
        feed = {sig.inputs[k]: data[k][rows] for k in sig.inputs}
        loss = _shown_loss(sess.run(fetch, feed)[0])
        losses.append((step + 1, loss))
        if bar is not None:
            bar.set_postfix(loss=f"{loss:.4f}")
            bar.update(1)
        if checkpoint_dir and ((step + 1) % checkpoint_every == 0 or step + 1 == steps):
            try:
                saver.save(sess, checkpoint_dir, global_step=step + 1)
            except OSError as e:  # checked before training; the file system changed
                raise OneGraphError(f"--checkpoint-dir {checkpoint_dir}: cannot write "
                                    f"{e.filename or checkpoint_dir}: {e.strerror or e}") \
                    from e
    if bar is not None:
        bar.close()
    elapsed = time.perf_counter() - t0
    if output:
        try:
            save(model_with_values(model, sess), output)
        except OSError as e:
            raise OneGraphError(f"--output {output}: cannot write there: "
                                f"{e.strerror or e}") from e
    if plot and losses:
        try:
            _plot(losses, plot)
        except OSError as e:
            raise OneGraphError(f"{plot_flag} {plot}: cannot write there: "
                                f"{e.strerror or e}") from e
    done = len(losses)
    summary = {"start_step": start, "steps": done, "final_loss": losses[-1][1] if losses else
               None, "steps_per_second": done / elapsed if done and elapsed > 0 else None,
               "losses": losses}
    # a bar tqdm disabled (stderr is no terminal) gets this one line instead
    if not quiet and (bar is None or bar.disable) and losses:
        print(f"trained {done} steps, final loss {losses[-1][1]:.4f}, "
              f"{summary['steps_per_second']:.1f} steps/s", file=sys.stderr)
    return summary


def _load_npz(path):
    """The arrays of an .npz archive, refusing pickled objects and non-archives.

    Raises:
        FormatError: see `onegraph.format.npy.load_npz`; a file that cannot be opened
            is worded as every subcommand words it ("cannot read 'PATH': reason").
    """
    from ..format.npy import load_npz

    check_readable(path, FormatError)
    return load_npz(path)


def _check_loss(tensor):
    """Refuse, before any update, a `loss` output that cannot be shown as a number.

    Raises:
        OneGraphError: it holds strings or booleans, or its static shape has no element.
    """
    from ..format import DType

    if tensor.dtype in (DType.STRING, DType.BOOL):
        raise OneGraphError(f"the 'train' signature's loss {tensor.name!r} is "
                            f"{tensor.dtype.name.lower()}, not a number")
    if tensor.shape is not None and any(d == 0 for d in tensor.shape):
        raise OneGraphError(f"the 'train' signature's loss {tensor.name!r} has shape "
                            f"{list(tensor.shape)}: no value to show")


def _shown_loss(value) -> float:
    """The loss of one step as a float: a per-example loss as its mean (minimize()
    trains on its sum; the mean does not grow with the batch size).

    Raises:
        OneGraphError: the loss has no value (a dynamic dimension was 0).
    """
    value = np.asarray(value)
    if value.ndim == 0:
        return float(value)
    if value.size == 0:
        raise OneGraphError(f"the 'train' signature's loss has shape "
                            f"{list(value.shape)}: no value to show")
    return float(value.mean(dtype=np.float64))


def _resumed_step(sess, model, step_index, restored) -> int:
    """The step of this training job that checkpoint `restored` (already restored into
    `sess`) is at: the step its name records (`ckpt-<step>.og`, as this command names
    them); for a name without one, the global steps it holds beyond the model file's,
    or 0 for a model without a global step.

    Raises:
        OneGraphError: the checkpoint holds fewer global steps than the model file (it
            was not trained from this model), or the step cannot be read.
    """
    from .saver import _step

    step = _step(os.path.basename(restored))
    if step is not None and step >= 0:
        return step
    if step_index is None:
        return 0
    first = model.graph.tensors[step_index].data
    held = int(sess.run(_read_of(sess, step_index)))
    first = 0 if first is None else int(np.asarray(first))
    if held < first:
        raise OneGraphError(f"checkpoint {restored} holds global step {held}, below the "
                            f"model's {first}: it was not trained from this model")
    return held - first


def _read_of(sess, var_index):
    """A fetchable tensor holding the variable's value: its ReadVariable output."""
    g = sess.ir_graph
    for node in g.nodes:
        if node.op_type == "ReadVariable" and node.inputs and node.inputs[0] == var_index:
            return node.outputs[0]
    raise OneGraphError("the global step variable has no ReadVariable")


def _plot(losses, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no loss curve written", file=sys.stderr)
        return
    from ..format.atomic import atomic_open

    steps, values = zip(*losses)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(steps, values)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    try:
        # temp file + rename, as every output: a failed write keeps the old curve;
        # the format is the extension's (checked before training), not a new suffix
        with atomic_open(path, "wb") as f:
            fig.savefig(f, format=os.path.splitext(path)[1].lower().lstrip("."))
    finally:
        plt.close(fig)


def _plot_formats():
    """The file extensions matplotlib can write a figure as, or None without it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig = plt.figure()
    try:
        return set(fig.canvas.get_supported_filetypes())
    finally:
        plt.close(fig)


def _check_rows(sig, g, data, data_path) -> None:
    """Refuse, before training, data arrays whose rows cannot be fed to the train
    signature's inputs (a row's shape against the input's static shape without its
    batch axis), naming the file and the key rather than a batch later.

    Raises:
        ShapeError: a row shape contradicts the input's.
    """
    for key, index in sig.inputs.items():
        shape = g.tensors[index].shape
        row = data[key].shape[1:]
        if shape is None or len(shape) == 0:
            continue
        want = shape[1:]
        if len(want) != len(row) or any(d >= 0 and d != r for d, r in zip(want, row)):
            raise ShapeError(
                f"{data_path}: array {key!r} has shape {list(data[key].shape)}; the train "
                f"input takes {list(shape)} (-1 = any), rows of {list(want)}")


def _cmd_train(args) -> int:
    plot, plot_flag = args.plot, "--plot"
    if plot is None and args.output:
        plot = os.path.splitext(args.output)[0] + "_loss.png"
        plot_flag = "the loss curve (the default --plot, next to --output)"
    train_model(args.model, args.data, args.steps, args.batch_size, args.checkpoint_dir,
                args.output, args.seed, args.checkpoint_every, plot, args.quiet, plot_flag)
    return 0


def register(sub) -> None:
    """Add the `train` subcommand to the CLI's subparsers."""
    p = sub.add_parser("train", help="train a .og model with its 'train' signature on an "
                                     ".npz file")
    p.add_argument("model")
    p.add_argument("--data", required=True, help=".npz whose keys name the train inputs")
    p.add_argument("--steps", type=int, required=True,
                   help="total number of steps of this training job, counted from the "
                        "model file's state (not from the global step it may hold) and "
                        "counting those of a checkpoint resumed from --checkpoint-dir "
                        "(from ckpt-600.og, --steps 1000 trains 400 more; --steps 500 "
                        "trains none)")
    p.add_argument("--batch-size", type=int, default=32,
                   help="rows per step, drawn at random (default: %(default)s)")
    p.add_argument("--checkpoint-dir", default=None, metavar="DIR",
                   help="save checkpoints here (the last 3 are kept) and resume from the "
                        "latest one found here (default: no checkpoints)")
    p.add_argument("--checkpoint-every", type=int, default=100, metavar="N",
                   help="save a checkpoint every N steps and after the last one "
                        "(default: %(default)s)")
    p.add_argument("--output", default=None,
                   help="write the trained model here (and, unless --plot says otherwise, "
                        "its loss curve to <output without extension>_loss.png)")
    p.add_argument("--seed", type=int, default=0,
                   help="seeds the batches, with the step number, and the model's random "
                        "ops (default: %(default)s)")
    p.add_argument("--plot", default=None,
                   help="loss-curve PNG (needs matplotlib; default with --output: "
                        "<output without extension>_loss.png)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar or summary on stderr (without it the bar shows "
                        "only when stderr is a terminal, else one summary line at the "
                        "end; a checkpoint already at --steps is reported either way)")
    p.set_defaults(func=_cmd_train)
