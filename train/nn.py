"""Neural-network layers and losses (`og.nn`), built from primitive ops only.

Layers create their Variables on first use with Glorot-uniform weights drawn from the
graph's seeded generator (`og.set_random_seed`), so a model built twice with the same
seed starts from the same parameters. Images are NCHW, as in ONNX.
"""

from __future__ import annotations

import collections
import math
from typing import Sequence

import numpy as np

from ..errors import OneGraphError, ShapeError
from ..format import DType
from . import api
from . import api_extra
from . import graph as _g
from .graph import Tensor, check_seed
from .variables import Variable

relu = api.relu
sigmoid = api.sigmoid
tanh = api.tanh


def set_random_seed(seed: int, graph=None) -> None:
    """Set the graph-level seed (`graph.seed`, as TF1's): layer initializers draw from
    a generator seeded with it, and ops that take a seed (RandomShuffleQueue) derive
    theirs from it.

    Raises:
        TypeError: seed is not an int (numpy integers are fine), or graph is not an
            og.Graph.
        ValueError: seed is negative.
    """
    seed = check_seed(seed, "set_random_seed")
    if seed is None:
        raise TypeError("set_random_seed: seed must be an int >= 0, got None")
    _g.check_graph(graph, "set_random_seed")
    g = graph or _g.get_default_graph()
    g.seed = int(seed)
    g._init_rng = np.random.default_rng(seed)


def _rng(g) -> np.random.Generator:
    rng = getattr(g, "_init_rng", None)
    if rng is None:
        rng = g._init_rng = np.random.default_rng(0)
    return rng


def glorot_uniform(shape, fan_in: int, fan_out: int, dtype=np.float32, graph=None):
    """Glorot/Xavier uniform initial values (numpy) from the graph's generator."""
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return _rng(graph or _g.get_default_graph()).uniform(-limit, limit, shape).astype(dtype)


def _x(x) -> Tensor:
    return _g.convert_to_tensor(x)


def _zeros(shape, dtype):
    """A bias's initial value: zeros (an initializer for og.get_variable)."""
    return np.zeros(shape, dtype.numpy)


def _ones(shape, dtype):
    """A scale's initial value: ones (an initializer for og.get_variable)."""
    return np.ones(shape, dtype.numpy)


def _scope_or(kernel_init):
    """A layer's kernel initializer: the enclosing variable scope's when it has one
    (tf.layers' kernel_initializer=None takes the scope's), else `kernel_init`."""
    from .variable_scope import get_variable_scope

    return kernel_init if get_variable_scope().initializer is None else None


def softmax(logits, axis=None, name=None, dim=None) -> Tensor:
    """Softmax along `axis` (default the last; `dim` is TF1's old name).

    Raises:
        TypeError: axis is not an int.
        ValueError: both axis and dim are given.
    """
    axis = api._alias(axis, dim, "axis", "dim", "softmax")
    axis = -1 if axis is None else api._int_arg(axis, "softmax: axis")
    x = _x(logits)
    return x.graph.op("Softmax", [x], {"axis": axis}, name=name)


def log_softmax(logits, axis=None, name=None, dim=None) -> Tensor:
    """Log-softmax along `axis` (default the last; `dim` is TF1's old name).

    Raises:
        TypeError: axis is not an int.
        ValueError: both axis and dim are given.
    """
    axis = api._alias(axis, dim, "axis", "dim", "log_softmax")
    axis = -1 if axis is None else api._int_arg(axis, "log_softmax: axis")
    x = _x(logits)
    return x.graph.op("LogSoftmax", [x], {"axis": axis}, name=name)


def leaky_relu(x, alpha: float = 0.2, name=None) -> Tensor:
    """max(x, alpha * x)."""
    x = _x(x)
    return x.graph.op("LeakyRelu", [x], {"alpha": alpha}, name=name)


def elu(x, name=None) -> Tensor:
    """Exponential linear unit."""
    x = _x(x)
    return x.graph.op("Elu", [x], name=name)


def gelu(x, approximate: bool = False, name=None) -> Tensor:
    """Gaussian error linear unit (exact erf form, or the tanh approximation).

    Raises:
        TypeError: approximate is not a bool.
    """
    approximate = api._bool_arg(approximate, "gelu: approximate")
    x = _x(x)
    return x.graph.op("Gelu", [x], {"approximate": "tanh" if approximate else "none"},
                      name=name)


def softplus(x, name=None) -> Tensor:
    """log(1 + exp(x))."""
    x = _x(x)
    return x.graph.op("Softplus", [x], name=name)


# --------------------------------------------------------------------------- layers

def dense(x, units: int, activation=None, use_bias: bool = True, name: str = "dense"
          ) -> Tensor:
    """Fully connected layer: activation(x @ W + b), W (in, units) Glorot, b zeros.

    Args:
        x: (batch, in) tensor with a known last dim.
        units: output features.
        activation: a function applied to the result (e.g. og.nn.relu), or None.
        use_bias: add a bias vector.
        name: name scope of the variables.

    Raises:
        ShapeError: x is not of known rank >= 2 with a known last dim, or x is not
            floating point.
        TypeError: units is not an int, use_bias not a bool, activation not callable,
            or name not a str.
        ValueError: units is not > 0.
    """
    units = api._int_arg(units, "dense: units")
    if units <= 0:
        raise ValueError(f"dense: units must be > 0, got {units}")
    use_bias = api._bool_arg(use_bias, "dense: use_bias")
    if activation is not None and not callable(activation):
        raise TypeError(f"dense: activation must be a function or None, got "
                        f"{type(activation).__name__}")
    _g.check_name(name, "dense")
    x = _x(x)
    g = x.graph
    if x.shape is None or len(x.shape) < 2 or x.shape[-1] is None:
        raise ShapeError(f"dense: x ({x.name!r}) must have a known rank >= 2 and a known "
                         f"last dim, got shape {x.shape}")
    if x.dtype.numpy.kind != "f":  # (Glorot weights in an integer dtype are all zero)
        raise ShapeError(f"dense: input {x.name!r} must be floating point, got "
                         f"{x.dtype.short_name} (og.cast it first)")
    n_in = x.shape[-1]
    # variables through og.get_variable, as tf.layers.dense: a layer built again in a
    # reusing og.variable_scope shares them (imported here: variable_scope imports nn)
    from .variable_scope import get_variable, variable_scope

    def kernel_init(shape, dtype):
        return glorot_uniform(shape, n_in, units, dtype.numpy, g)

    with variable_scope(None, default_name=name or "dense", values=[x]):
        w = get_variable("kernel", [n_in, units], x.dtype, _scope_or(kernel_init))
        y = api.matmul(x, w)
        if use_bias:
            y = y + get_variable("bias", [units], x.dtype, _zeros)
        if activation is not None:
            y = activation(y)
    return y


def _is_positive_int(v) -> bool:
    return not isinstance(v, (bool, np.bool_)) and isinstance(v, (int, np.integer)) \
        and v >= 1


def _positive_int(v, what: str) -> int:
    """v as an int >= 1.

    Raises:
        TypeError: v is not one (names `what`).
    """
    if not _is_positive_int(v):
        raise TypeError(f"{what} must be a positive int, got {v!r:.60}")
    return int(v)


def _pair(v, what: str, n=2) -> list[int]:
    """A window size or stride: one positive int for every axis, or n of them.

    Raises:
        TypeError: v is not a positive int or a sequence of n of them.
    """
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v.item()
    iterable = hasattr(v, "__iter__") and not isinstance(v, (str, bytes))  # TF1: any
    items = list(v) if iterable else [v] * n
    if len(items) != n or not all(_is_positive_int(a) for a in items):
        raise TypeError(f"{what} must be a positive int or {n} of them, got {v!r:.60}")
    return [int(a) for a in items]


def _padding(padding, where: str) -> str:
    """"SAME" or "VALID" in any case (TF1's padding argument).

    Raises:
        OneGraphError: anything else.
    """
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise OneGraphError(f"{where}: padding must be SAME or VALID, got {padding!r}")
    return padding.upper()


def _same_pads(in_sp, kernel, strides):
    pb, pe = [], []
    for n, k, s in zip(in_sp, kernel, strides):
        out = -(-n // s)
        total = max((out - 1) * s + k - n, 0)
        pb.append(total // 2)
        pe.append(total - total // 2)
    return pb + pe


def conv2d(x=None, filters=None, *args, input=None, filter=None,  # noqa: A002 - TF's
           **kwargs) -> Tensor:
    """2-D convolution in one of two forms, told apart by the second argument:

    - ``og.nn.conv2d(x, filters: int, kernel_size, strides=1, padding="SAME",
      activation=None, use_bias=True, name="conv2d")``: a layer on NCHW input that
      makes its own weights (`conv2d_layer`);
    - ``og.nn.conv2d(input, filter: Tensor, strides, padding, use_cudnn_on_gpu=True,
      data_format="NHWC", dilations=None, name=None)``: TF1's tf.nn.conv2d op with a
      (kh, kw, in, out) filter (`nn_ops.conv2d_op`).

    TF1's keyword names input= and filter= are taken too.

    Raises:
        TypeError: the input or the filters are missing, or given twice.
        (and as the form called)
    """
    if (x is not None and input is not None) or (filters is not None and filter is not None):
        raise TypeError("conv2d: give the input as x or input=, and the filters as "
                        "filters or filter=, not both")
    x = x if x is not None else input
    filters = filters if filters is not None else filter
    if x is None or filters is None:
        raise TypeError("conv2d needs an input (x or input=) and filters (filters or "
                        "filter=)")
    if _g._is_symbolic(filters) or np.ndim(filters) == 4:
        from .nn_ops import conv2d_op

        return conv2d_op(x, filters, *args, **kwargs)
    return conv2d_layer(x, filters, *args, **kwargs)


def conv2d_layer(x, filters: int, kernel_size, strides=1, padding: str = "SAME",
                 activation=None, use_bias: bool = True, name: str = "conv2d") -> Tensor:
    """2-D convolution layer on NCHW input (ONNX Conv): activation(conv(x, W) + b).

    Args:
        x: (N, C, H, W) with known C.
        filters: output channels.
        kernel_size: int or (kh, kw).
        strides: int or (sh, sw).
        padding: "SAME" (output H/stride) or "VALID".
        activation: function applied to the result, or None.
        name: name scope.

    Raises:
        ShapeError: x is not 4-D with known channels.
        TypeError: filters, kernel_size or strides is not a positive int (or pair).
        OneGraphError: padding is not SAME or VALID.
    """
    x = _x(x)
    g = x.graph
    if x.shape is None or len(x.shape) != 4 or x.shape[1] is None:
        raise ShapeError(f"conv2d: input must be NCHW with known C, got {x.shape}")
    filters = _positive_int(filters, "conv2d: filters")
    kh, kw = _pair(kernel_size, "conv2d: kernel_size")
    sh, sw = _pair(strides, "conv2d: strides")
    c = x.shape[1]
    attrs = {"strides": [sh, sw], "kernel_shape": [kh, kw]}
    if _padding(padding, "conv2d") == "SAME":
        if x.shape[2] is not None and x.shape[3] is not None:
            attrs["pads"] = _same_pads(x.shape[2:], (kh, kw), (sh, sw))
        else:
            attrs["auto_pad"] = "SAME_UPPER"
    from .variable_scope import get_variable, variable_scope  # (variable_scope imports nn)

    def kernel_init(shape, dtype):  # ONNX's (out, in, kh, kw) layout: fans by hand
        return glorot_uniform(shape, c * kh * kw, filters * kh * kw, dtype.numpy, g)

    with variable_scope(None, default_name=name or "conv2d", values=[x]):
        w = get_variable("kernel", [filters, c, kh, kw], x.dtype, _scope_or(kernel_init))
        inputs = [x, w]
        if use_bias:
            inputs.append(get_variable("bias", [filters], x.dtype, _zeros))
        y = g.op("Conv", inputs, attrs)
        if activation is not None:
            y = activation(y)
    return y


def _pool(op_type, x, pool_size, strides, padding, name):
    x = _x(x)
    where = "max_pool2d_layer" if op_type == "MaxPool" else "avg_pool2d_layer"
    if x.shape is not None and len(x.shape) != 4:
        raise ShapeError(f"{where}: input must be NCHW (4-D), got shape {x.shape}")
    k = _pair(pool_size, f"{where}: pool_size")
    s = _pair(strides if strides is not None else pool_size, f"{where}: strides")
    attrs = {"kernel_shape": k, "strides": s}
    if _padding(padding, where) == "SAME":
        if x.shape is not None and None not in x.shape[2:]:
            attrs["pads"] = _same_pads(x.shape[2:], k, s)
        else:
            attrs["auto_pad"] = "SAME_UPPER"
    return x.graph.op(op_type, [x], attrs, name=name)


def max_pool2d_layer(x, pool_size=2, strides=None, padding: str = "VALID",
                     name=None) -> Tensor:
    """Max pooling over NCHW windows (strides default to pool_size); onegraph's layer
    form (og.nn.max_pool2d is TF's NHWC op).

    Raises:
        ShapeError: x is not 4-D.
        OneGraphError: padding is not SAME or VALID.
    """
    return _pool("MaxPool", x, pool_size, strides, padding, name)


def avg_pool2d_layer(x, pool_size=2, strides=None, padding: str = "VALID",
                     name=None) -> Tensor:
    """Average pooling over NCHW windows (padding excluded from the count); onegraph's
    layer form (og.nn.avg_pool2d is TF's NHWC op).

    Raises:
        ShapeError: x is not 4-D.
        OneGraphError: padding is not SAME or VALID.
    """
    return _pool("AveragePool", x, pool_size, strides, padding, name)


def flatten(x, name=None) -> Tensor:
    """(N, ...) -> (N, prod(...))."""
    x = _x(x)
    return x.graph.op("Flatten", [x], {"axis": 1}, name=name)


def batch_norm(x, training: bool, axis: int = 1, momentum: float = 0.9,
               epsilon: float = 1e-5, name: str = "batch_norm") -> Tensor:
    """Batch normalization built from primitives.

    Training mode normalises with the batch statistics and adds moving-average
    updates to the UPDATE_OPS collection (optimizers' `minimize` runs them):
    moving = momentum * moving + (1 - momentum) * batch statistic, where the batch
    variance is the biased one (divided by the count, as Keras's layer; TF1's fused
    batch norm and PyTorch keep the unbiased one). Inference mode uses the moving
    averages.

    Args:
        x: input; `axis` is the feature (channel) axis, 1 for NCHW/NC.
        training: a Python bool selecting the mode for this graph, or a bool scalar
            tensor (TF1's `is_training` placeholder, e.g. og.placeholder_with_default
            (False, [])) choosing at run time through og.cond; the moving-average
            updates then keep the averages unchanged in runs where it is false.
        momentum: moving average decay.
        epsilon: added to the variance.
        name: name scope.

    Raises:
        ShapeError: the rank or the feature dim is unknown, or axis is out of range.
        TypeError: axis is not an int, training not a bool, momentum or epsilon not a
            number, or name not a str.
        ShapeError: training is a tensor that is not a bool scalar.
    """
    axis = api._int_arg(axis, "batch_norm: axis")
    training = _training_arg(training, "batch_norm")
    for what, v in (("momentum", momentum), ("epsilon", epsilon)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                                 np.floating)):
            raise TypeError(f"batch_norm: {what} must be a number, got "
                            f"{type(v).__name__}")
    _g.check_name(name, "batch_norm")
    x = _x(x)
    if x.shape is not None and not -len(x.shape) <= axis < len(x.shape):
        raise ShapeError(f"batch_norm: axis {axis} is out of range for shape {x.shape}")
    if x.shape is None or x.shape[axis] is None:
        raise ShapeError(f"batch_norm: need known rank and feature dim, got {x.shape}")
    axis = axis % len(x.shape)
    c = x.shape[axis]
    # variables through og.get_variable, as tf.layers.batch_normalization: a tower
    # built again in a reusing og.variable_scope shares the moving averages it trained
    from .variable_scope import get_variable, variable_scope

    with variable_scope(None, default_name=name or "batch_norm", values=[x]):
        gamma = get_variable("gamma", [c], x.dtype, _ones)
        beta = get_variable("beta", [c], x.dtype, _zeros)
        mm = get_variable("moving_mean", [c], x.dtype, _zeros, trainable=False)
        mv = get_variable("moving_variance", [c], x.dtype, _ones, trainable=False)
        return batch_normalized(x, training, (gamma, beta, mm, mv), axis, momentum,
                                epsilon)


def batch_normalized(x, training, params, axis: int, momentum, epsilon,
                     unbiased: bool = False) -> Tensor:
    """x normalised along all axes but `axis` (known, non-negative), scaled and
    shifted: batch statistics when training (a Python bool or a bool scalar tensor)
    with the moving averages' updates added to UPDATE_OPS, else the moving averages.
    With a training tensor an og.cond computes only the chosen statistics and the
    averages decay by 1 (no change) where it is false, as tf.layers does.
    `params` is (gamma, beta, moving_mean, moving_variance), the first two (C,) tensors
    or None for none. `unbiased`: the moving variance averages the batch variance
    times n / (n - 1), as TF1's fused kernel does (the output still uses the biased
    one). Shared by og.nn.batch_norm and og.layers.batch_normalization."""
    gamma, beta, mm, mv = params
    g = x.graph
    rank = len(x.shape)
    c = x.shape[axis]
    bshape = [1] * rank
    bshape[axis] = c
    reduce_axes = [a for a in range(rank) if a != axis]
    gam = None if gamma is None else api.reshape(gamma, bshape)
    bet = None if beta is None else api.reshape(beta, bshape)
    if not isinstance(training, Tensor) and not training:
        return _scaled(x - api.reshape(mm, bshape), api.reshape(mv, bshape), epsilon,
                       gam, bet)

    def batch_statistics():
        mean = api.reduce_mean(x, reduce_axes, keepdims=True)
        return mean, api.reduce_mean(api.square(x - mean), reduce_axes, keepdims=True)

    if isinstance(training, Tensor):
        from .control_flow import cond

        mean, var = cond(training, batch_statistics,
                         lambda: (api.reshape(mm, bshape), api.reshape(mv, bshape)),
                         name="moments")
        decay = api.where(training, np.asarray(momentum, x.dtype.numpy),
                          np.asarray(1.0, x.dtype.numpy))
    else:
        mean, var = batch_statistics()
        decay = momentum
    # (where training is false the decay is 1, so the corrected variance adds 0)
    moving_var = var * _bessel(x, reduce_axes, c) if unbiased else var
    for average, stat in ((mm, mean), (mv, moving_var)):
        flat = api.reshape(api.stop_gradient(stat), [c])
        g.add_to_collection(_g.UPDATE_OPS, average.assign(average * decay
                                                          + flat * (1 - decay)))
    return _scaled(x - mean, var, epsilon, gam, bet)


def _bessel(x: Tensor, reduce_axes: list, c: int):
    """n / max(n - 1, 1) for the n values each channel's statistics take (a constant
    when the reduced dims are known, else computed from the run's input)."""
    dims = [x.shape[a] for a in reduce_axes]
    if all(d is not None for d in dims):
        n = float(np.prod(dims))
        return x.graph.constant(np.asarray(n / max(n - 1.0, 1.0), x.dtype.numpy))
    from .api_extra import size

    n = api.cast(size(x), x.dtype) / float(c)
    return n / api.maximum(n - 1.0, x.graph.constant(np.asarray(1.0, x.dtype.numpy)))


def _scaled(centered, var, epsilon, gam, bet) -> Tensor:
    """centered / sqrt(var + epsilon) * gamma + beta, either of those two may be None."""
    inv = api.reciprocal(api.sqrt(var + epsilon))
    y = centered * (inv if gam is None else inv * gam)
    return y if bet is None else y + bet


def _training_arg(training, what: str):
    """A `training` argument as a Python bool, or as a bool scalar tensor (a run-time
    switch).

    Raises:
        TypeError: it is neither a bool nor a tensor.
        ShapeError: it is a tensor that is not bool, or not a scalar.
    """
    if isinstance(training, Tensor) or hasattr(training, "_as_graph_tensor"):
        t = _g.bool_tensor(training, f"{what}: training")
        if t.shape is not None and len(t.shape) != 0:
            raise ShapeError(f"{what}: training must be a scalar, got shape "
                             f"{list(t.shape)}")
        return t
    return api._bool_arg(training, f"{what}: training")


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None,
            training=True) -> Tensor:
    """TF1's tf.nn.dropout: zero elements with probability `rate` (= 1 - keep_prob;
    TF1's second argument is keep_prob, so dropout(x, 0.9) keeps 90%) and scale the
    rest by 1/(1-rate). Give keep_prob or rate, not both.

    Uses the Session's random generator (`og.Session(graph, seed=...)`); identity
    when training is False. `training` may also be a bool scalar tensor (TF1's
    `is_training` placeholder): ONNX Dropout's training_mode input, chosen per run.
    `rate` is a number or a float scalar tensor (1 - a keep_prob placeholder).

    Raises:
        ValueError: a numeric rate is not in [0, 1), or keep_prob not in (0, 1].
        TypeError: neither or both of keep_prob and rate are given, one is neither a
            number nor a tensor, noise_shape or seed is given (not supported), or
            training is not a bool or a tensor.
        ShapeError: training is a tensor that is not a bool scalar, or a rate tensor is
            not a float scalar.
    """
    if noise_shape is not None or seed is not None:
        raise TypeError("dropout: noise_shape and seed are not supported (the Session's "
                        "generator draws; og.Session(graph, seed=...) repeats it)")
    if (keep_prob is None) == (rate is None):
        raise TypeError("dropout: give keep_prob or rate (= 1 - keep_prob), exactly one")
    if keep_prob is not None:
        if _g._is_symbolic(keep_prob):
            rate = 1.0 - _x(keep_prob)
        elif isinstance(keep_prob, (bool, np.bool_)) or not isinstance(
                keep_prob, (int, float, np.integer, np.floating)):
            raise TypeError(f"dropout: keep_prob must be a number or a tensor, got "
                            f"{type(keep_prob).__name__}")
        elif not 0 < float(keep_prob) <= 1:
            raise ValueError(f"dropout: keep_prob must be in (0, 1], got {keep_prob}")
        else:
            rate = 1.0 - float(keep_prob)
    symbolic = _g._is_symbolic(rate)
    if not symbolic:
        if isinstance(rate, (bool, np.bool_)) or not isinstance(
                rate, (int, float, np.integer, np.floating)):
            raise TypeError(f"dropout: rate must be a number or a tensor, got "
                            f"{type(rate).__name__}")
        if not 0 <= float(rate) < 1:
            raise ValueError(f"dropout: rate must be in [0, 1), got {rate}")
    training = _training_arg(training, "dropout")
    x = _x(x)
    if (not symbolic and rate == 0) or (not isinstance(training, Tensor) and not training):
        return x
    g = x.graph
    if symbolic:
        ratio = _g.convert_to_tensor(rate, graph=g)
        if ratio.dtype not in (DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32,
                               DType.FLOAT64) or (ratio.shape is not None and ratio.shape):
            raise ShapeError(f"dropout: a rate tensor must be a float scalar, got "
                             f"{ratio.dtype.short_name} of shape {ratio.shape}")
        ratio = api.cast(ratio, x.dtype)
    else:
        ratio = g.constant(np.asarray(rate, x.dtype.numpy))
    mode = training if isinstance(training, Tensor) else g.constant(np.asarray(True))
    outs = g.op("Dropout", [x, ratio, mode], num_outputs=2, name=name)
    return outs[0]


def embedding_lookup(params, ids, partition_strategy="mod", name=None,
                     validate_indices=True, max_norm=None) -> Tensor:
    """Rows of `params` picked by integer `ids` (any shape), as tf.nn.embedding_lookup:
    params is a Variable or tensor, or a list of shards of the full matrix split by
    partition_strategy ("mod": row r in shard r % n at r // n; "div": consecutive
    blocks). With max_norm, each looked-up embedding whose l2 norm exceeds it is
    scaled down to it. validate_indices is accepted and ignored, as TF1 does on CPU.

    The gradient w.r.t. params is sparse (IndexedSlices), so optimizers update only
    the looked-up rows. An id outside [-rows, rows) is refused when the graph runs; a
    negative one counts from the end, as ONNX's Gather has it (TF1 refuses it).

    Raises:
        ValueError: partition_strategy is not "mod" or "div", or params is an empty
            list.
        ShapeError: ids is not an integer tensor, or max_norm is given for ids of
            unknown rank.
    """
    _g.check_name(name, "embedding_lookup")
    if not isinstance(partition_strategy, str) or partition_strategy not in ("mod", "div"):
        raise ValueError(f"embedding_lookup: partition_strategy must be 'mod' or 'div', "
                         f"got {partition_strategy!r:.60}")
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError("embedding_lookup: params must be a tensor or a non-empty "
                             "list of shards")
        g = api._graph_of(*params)
        shards = [_g.convert_to_tensor(p, graph=g) for p in params]
    else:
        shards = [params]
    g = shards[0].graph if isinstance(shards[0], (Tensor, Variable)) else None
    idx = _g.integer_tensor(ids, "embedding_lookup: ids", g)
    rows = partitioned_rows(shards, idx, partition_strategy)
    if max_norm is not None:
        if idx.shape is None or rows.shape is None:
            raise ShapeError("embedding_lookup: max_norm needs ids of known rank")
        from .optimizers import clip_by_norm   # (optimizers imports this module)

        axes = list(range(len(idx.shape), len(rows.shape)))
        rows = clip_by_norm(rows, max_norm, axes=axes) if axes else rows
    return api.identity(rows, name=name) if name is not None else rows


def partitioned_rows(shards: list, ids: Tensor, strategy: str) -> Tensor:
    """Rows `ids` of params given as a list of tensors: one, or shards of the full
    matrix split by TF1's partition strategy ("mod": row r in shard r % n at r // n;
    "div": consecutive blocks). Raises nothing while building."""
    if len(shards) == 1:
        return api.gather(shards[0], ids, axis=0)
    whole = api.concat(shards, axis=0)
    if strategy == "div":
        return api.gather(whole, ids, axis=0)
    sizes = [s.shape[0] if s.shape else None for s in shards]
    if None in sizes:   # some shard's rows are only known at run time
        rows = api.concat([api.shape(s)[:1] for s in shards], 0)
        starts = api_extra.cumsum(rows, exclusive=True)
    else:
        starts = api.constant(np.concatenate([[0], np.cumsum(sizes[:-1])]).astype(np.int64))
    n = np.int64(len(shards))
    ids = api.cast(ids, DType.INT64)
    return api.gather(whole, api.gather(starts, ids % n) + ids // n, axis=0)


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ["c", "h"])):
    """TF1's LSTMStateTuple: an LSTM's state (c, h) with .c and .h."""

    __slots__ = ()


class LSTMCell:
    """A long short-term memory cell: (x, (c, h)) -> (h', (c', h')).

    Gates come from one matmul of concat([x, h]) with a (in + units, 4 * units)
    kernel, in TF1's order: input, cell candidate, forget, output (so a TF1 kernel
    gives TF1's results); `forget_bias` is added to the forget gate. Variables are
    created on the first call.

    TF1's constructor: LSTMCell(num_units, use_peepholes=False, cell_clip=None,
    initializer=None, num_proj=None, proj_clip=None, num_unit_shards=None,
    num_proj_shards=None, forget_bias=1.0, state_is_tuple=True, activation=None,
    reuse=None, name=None, dtype=None). `use_peepholes` adds TF1's diagonal
    connections from c to the input, forget and output gates (w_i_diag, w_f_diag,
    w_o_diag); `num_proj` projects h to num_proj units (projection/kernel), clipped
    to [-proj_clip, proj_clip], and h' is then that projection (the state is
    (c, projected h)); `initializer` draws the kernel, the peepholes and the
    projection; `cell_clip` clips c; `activation` replaces tanh. Shards and
    state_is_tuple=False are not supported (refused).

    Raises:
        TypeError: num_units or num_proj is not a positive int, a number is not a
            number, an unsupported option is asked for, or activation/initializer is
            not callable.
    """

    def __init__(self, num_units: int, use_peepholes=False, cell_clip=None,
                 initializer=None, num_proj=None, proj_clip=None, num_unit_shards=None,
                 num_proj_shards=None, forget_bias: float = 1.0, state_is_tuple=True,
                 activation=None, reuse=None, name=None, dtype=None):
        num_units = _positive_int(num_units, "LSTMCell: num_units")
        if num_unit_shards is not None or num_proj_shards is not None \
                or state_is_tuple is not True:
            raise TypeError("LSTMCell: shards and state_is_tuple=False are not supported")
        self.use_peepholes = api._bool_arg(use_peepholes, "LSTMCell: use_peepholes")
        self.num_proj = None if num_proj is None else \
            _positive_int(num_proj, "LSTMCell: num_proj")
        for what, v in (("forget_bias", forget_bias), ("cell_clip", cell_clip),
                        ("proj_clip", proj_clip)):
            if v is not None and (isinstance(v, (bool, np.bool_)) or not isinstance(
                    v, (int, float, np.integer, np.floating))):
                raise TypeError(f"LSTMCell: {what} must be a number, got "
                                f"{type(v).__name__}")
        for what, fn in (("activation", activation), ("initializer", initializer)):
            if fn is not None and not callable(fn):
                raise TypeError(f"LSTMCell: {what} must be callable, got "
                                f"{type(fn).__name__}")
        name = "lstm_cell" if name is None else name
        _g.check_name(name, "LSTMCell")
        self.num_units = num_units
        self.forget_bias = float(forget_bias)
        self.cell_clip = None if cell_clip is None else float(cell_clip)
        self.proj_clip = None if proj_clip is None else float(proj_clip)
        self.activation = activation or api.tanh
        self.initializer = initializer
        self.name = name
        self.kernel: Variable | None = None
        self.bias: Variable | None = None
        self.peepholes: tuple | None = None           # (w_i_diag, w_f_diag, w_o_diag)
        self.projection: Variable | None = None

    @property
    def _h_units(self) -> int:
        return self.num_units if self.num_proj is None else self.num_proj

    @property
    def state_size(self) -> tuple[int, int]:
        return LSTMStateTuple(self.num_units, self._h_units)

    @property
    def output_size(self) -> int:
        return self._h_units

    def zero_state(self, batch_size, dtype=np.float32) -> tuple:
        """(c, h) zeros: (batch_size, num_units) and (batch_size, num_proj or
        num_units); batch_size an int or a scalar int tensor."""
        from .rnn import _zeros_for

        return LSTMStateTuple(_zeros_for(batch_size, self.num_units, dtype),
                              _zeros_for(batch_size, self._h_units, dtype))

    def build(self, n_in: int, dtype=np.float32, graph=None) -> None:
        """Create the kernel and bias (done by the first call)."""
        g = graph or _g.get_default_graph()
        u, hu = self.num_units, self._h_units
        from .variable_scope import get_variable, variable_scope

        def glorot(fan_in, fan_out):
            def init(shape, dtype):
                return glorot_uniform(shape, fan_in, fan_out, dtype.numpy, g)
            return self.initializer or _scope_or(init)

        dt = DType.from_numpy(np.dtype(dtype))
        saved_cf, g._cf_stack = g._cf_stack, []
        try:
            # through og.get_variable, as TF1's LSTMCell: a cell built again in a
            # reusing og.variable_scope shares the kernel and bias
            with g.as_default(), variable_scope(None, default_name=self.name):
                self.kernel = get_variable("kernel", [n_in + hu, 4 * u], dt,
                                           glorot(n_in + hu, 4 * u))
                self.bias = get_variable("bias", [4 * u], dt, _zeros)
                if self.use_peepholes:   # TF's fans of a 1-D shape: both its length
                    self.peepholes = tuple(get_variable(f"w_{gate}_diag", [u], dt,
                                                        glorot(u, u))
                                           for gate in ("i", "f", "o"))
                if self.num_proj is not None:
                    with variable_scope("projection"):
                        self.projection = get_variable("kernel", [u, hu], dt, glorot(u, hu))
        finally:
            g._cf_stack = saved_cf

    def __call__(self, x, state: Sequence):
        x = _x(x)
        c, h = state
        if self.kernel is None:
            if x.shape is None or x.shape[-1] is None:
                raise ShapeError("LSTMCell: input feature dim must be known")
            self.build(x.shape[-1], x.dtype.numpy, x.graph)
        z = api.matmul(api.concat([x, h], axis=1), self.kernel) + self.bias
        i, j, f, o = api.split(z, 4, axis=1)
        act = self.activation
        if self.peepholes is not None:
            w_i, w_f, w_o = self.peepholes
            new_c = api.sigmoid(f + self.forget_bias + w_f * c) * c \
                + api.sigmoid(i + w_i * c) * act(j)
        else:
            new_c = api.sigmoid(f + self.forget_bias) * c + api.sigmoid(i) * act(j)
        if self.cell_clip is not None:
            new_c = api.clip_by_value(new_c, -self.cell_clip, self.cell_clip)
        gate = o + self.peepholes[2] * new_c if self.peepholes is not None else o
        new_h = api.sigmoid(gate) * act(new_c)
        if self.projection is not None:
            new_h = api.matmul(new_h, self.projection)
            if self.proj_clip is not None:
                new_h = api.clip_by_value(new_h, -self.proj_clip, self.proj_clip)
        return new_h, LSTMStateTuple(new_c, new_h)


# --------------------------------------------------------------------------- losses

def sparse_softmax_cross_entropy(labels, logits, name=None) -> Tensor:
    """Per-example cross-entropy of softmax(logits) against integer class labels.

    Args:
        labels: int tensor shaped like logits without the last axis.
        logits: unnormalised scores (..., classes).

    Returns:
        The loss per example (reduce it with og.reduce_mean).
    """
    lg = _x(logits)
    lab = _g.integer_tensor(labels, "sparse_softmax_cross_entropy: labels", lg.graph)
    return lg.graph.op("SparseSoftmaxCrossEntropyWithLogits", [lg, lab], name=name)[0]


sparse_softmax_cross_entropy_with_logits = sparse_softmax_cross_entropy


def softmax_cross_entropy(labels, logits, name=None) -> Tensor:
    """Per-example cross-entropy of softmax(logits) against label distributions."""
    lg = _x(logits)
    lab = _g.convert_to_tensor(labels, lg.dtype, lg.graph)
    return lg.graph.op("SoftmaxCrossEntropyWithLogits", [lg, lab], name=name)[0]


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1,
                                      name=None, axis=None) -> Tensor:
    """TF1's tf.nn.softmax_cross_entropy_with_logits (v1): the cross-entropy of
    softmax(logits) along `axis` (`dim`, default the last) against labels, with no
    gradient into labels (TF1's v1 stops it; softmax_cross_entropy_with_logits_v2
    lets it through). Keyword arguments, as TF1 requires.

    Raises:
        TypeError: labels or logits is missing, or arguments are given positionally.
        ValueError / ShapeError: as softmax_cross_entropy_with_logits_v2.
    """
    from .nn_more import softmax_cross_entropy_with_logits_v2

    if _sentinel is not None:
        raise TypeError("softmax_cross_entropy_with_logits: give labels= and logits= by "
                        "name (TF1 refuses positional arguments)")
    if labels is None or logits is None:
        raise TypeError("softmax_cross_entropy_with_logits needs labels= and logits=")
    lg = _x(logits)
    fixed = api.stop_gradient(_g.convert_to_tensor(labels, lg.dtype, lg.graph))
    return softmax_cross_entropy_with_logits_v2(fixed, lg, axis=dim if axis is None else axis,
                                                name=name)


def logistic_operands(labels, logits, what: str) -> tuple:
    """(labels, logits) of a logistic loss as tensors of the logits' float dtype.

    Raises:
        TypeError: logits are not floats.
        ShapeError: labels and logits have different static shapes.
    """
    x = _x(logits)
    if x.dtype not in (DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32, DType.FLOAT64):
        raise TypeError(f"{what}: logits must be floats, got {x.dtype.short_name}")
    z = _g.convert_to_tensor(labels, x.dtype, x.graph)
    if z.shape is not None and x.shape is not None and (
            len(z.shape) != len(x.shape) or any(
                a is not None and b is not None and a != b for a, b in zip(z.shape, x.shape))):
        raise ShapeError(f"{what}: labels {list(z.shape)} and logits {list(x.shape)} must "
                         "have the same shape")
    return z, x


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None) -> Tensor:
    """Elementwise cross-entropy of sigmoid(logits) against labels z in [0, 1], as
    TF1 computes it without overflow: max(x, 0) - x z + log(1 + exp(-|x|)). The
    gradient is sigmoid(x) - z everywhere, x = 0 included.

    Raises:
        TypeError: labels or logits is missing, or logits are not floats.
        ShapeError: labels and logits have different static shapes.
    """
    if labels is None or logits is None:
        raise TypeError("sigmoid_cross_entropy_with_logits needs labels= and logits=")
    z, x = logistic_operands(labels, logits, "sigmoid_cross_entropy_with_logits")
    g = x.graph
    with g.name_scope(name or "logistic_loss"):
        # Where, not Relu/Abs: their gradients at x = 0 would drop the 1/2 of sigmoid(0)
        positive = api.greater_equal(x, 0.0)
        relu_x = api.where(positive, x, api.zeros_like(x))
        neg_abs = api.where(positive, -x, x)
        return api.add(relu_x - x * z, softplus(neg_abs), name="value")


def mean_squared_error(labels, predictions, name=None) -> Tensor:
    """mean((predictions - labels)^2) over every element."""
    p = _x(predictions)
    d = p - _g.convert_to_tensor(labels, p.dtype, p.graph)
    return api.reduce_mean(api.square(d), name=name)


def l2_loss(t, name=None) -> Tensor:
    """sum(t^2) / 2."""
    return api.reduce_sum(api.square(_x(t)), name=name) * 0.5


# TF1's tf.nn functions that are not layers (bias_add, moments, l2_normalize, ...)
from .nn_ops import *  # noqa: E402,F401,F403
# TF1's transposed/separable/atrous/1-D convs, lrn, space_to_depth, weighted logistic loss
from .nn_extra import *  # noqa: E402,F401,F403
# TF1's batch_normalization, fused_batch_norm, conv3d, 1-D/3-D pools, v2 cross-entropy, ...
from .nn_more import *  # noqa: E402,F401,F403
# TF1's dynamic_rnn and the cells beside LSTMCell
from .rnn import (BasicRNNCell, DropoutWrapper, GRUCell, MultiRNNCell,  # noqa: E402,F401
                  bidirectional_dynamic_rnn, dynamic_rnn)
from . import rnn_cell  # noqa: E402,F401 - TF1's tf.nn.rnn_cell namespace
from .rnn_static import static_bidirectional_rnn, static_rnn  # noqa: E402,F401
# TF1's sampled losses and their candidate samplers
from .nn_sampled import (log_uniform_candidate_sampler, nce_loss,  # noqa: E402,F401
                         sampled_softmax_loss, uniform_candidate_sampler)
# TF1's CTC loss (dense labels), 1-D/3-D/N-D transposed convs, depthwise/3-D backprops,
# space_to_batch, v2 pools, more candidate samplers
from .nn_tf1_more import *  # noqa: E402,F401,F403
from .nn_sparse import *  # noqa: E402,F401,F403 - CTC decoders, sparse embedding lookups
