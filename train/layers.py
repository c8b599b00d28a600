"""TF1's tf.layers as og.layers: dense, conv1d, conv2d, conv3d, conv2d_transpose,
conv3d_transpose, separable_conv1d, separable_conv2d, max_pooling1d/2d/3d,
average_pooling1d/2d/3d, batch_normalization, dropout and flatten, with TF1's
arguments, defaults and variable names, so TF1 model code runs as written.

As in TF1, images are channels_last (NHWC) unless data_format="channels_first": the
ONNX Conv and pools run on NCHW, so channels_last layers transpose in and out. A conv
kernel is a variable in TF's (kh, kw, in, out) layout, as TF1's initializers and
checkpoints expect, and is transposed to ONNX's (out, in, kh, kw) in the graph.
Variables come from og.get_variable inside og.variable_scope(name, reuse=reuse), so
reuse and AUTO_REUSE share them as in TF1; regularizers are callables of the variable
whose result goes to og.REGULARIZATION_LOSSES when the variable is created (not on
reuse, as in TF1).
"""

from __future__ import annotations

import numpy as np

from ..errors import OneGraphError, ShapeError
from ..format import DType
from . import api
from . import graph as _g
from . import nn, nn_extra, nn_more, nn_tf1_more
from .graph import GLOBAL_VARIABLES, REGULARIZATION_LOSSES, Tensor
from .initializers import ones_initializer, zeros_initializer
from .nn_extra import conv2d_transpose as _transposed
from .nn_ops import check_valid_window, conv_padding
from .variable_scope import get_variable, variable_scope


def _data_format(data_format, where: str) -> bool:
    """Whether data_format is channels_first (else channels_last).

    Raises:
        ValueError: it is neither (TF1's error).
    """
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"{where}: data_format must be 'channels_last' or "
                         f"'channels_first', got {data_format!r}")
    return data_format == "channels_first"


def _callable_or_none(value, what: str):
    if value is not None and not callable(value):
        raise TypeError(f"{what} must be a function or None, got {type(value).__name__}")
    return value


def _unsupported(where: str, **arguments) -> None:
    """Refuse TF1 layer arguments onegraph does not implement when they are set
    (constraints, which TF1's optimizers apply after each update; renorm's options).

    Raises:
        OneGraphError: names the first argument that is not None.
    """
    for key, value in arguments.items():
        if value is not None:
            raise OneGraphError(f"{where}: {key} is not supported (leave it None)")


def _variable(name, shape, dtype, initializer, regularizer, trainable, what: str):
    """get_variable, with `regularizer(variable)` added to REGULARIZATION_LOSSES when
    the variable is new."""
    g = _g.get_default_graph()
    known = {id(v) for v in g.get_collection(GLOBAL_VARIABLES)}
    var = get_variable(name, shape, dtype, initializer, trainable=trainable)
    if regularizer is not None and id(var) not in known:
        _regularize(regularizer(var), f"{what}: {name}_regularizer")
    return var


def _regularize(loss, what: str) -> None:
    if loss is None:
        return
    if not isinstance(loss, Tensor):
        loss = _g.convert_to_tensor(loss)
    if loss.shape is not None and len(loss.shape) != 0:
        raise ShapeError(f"{what} must give a scalar, got shape {list(loss.shape)}")
    loss.graph.add_to_collection(REGULARIZATION_LOSSES, loss)


def _floating(x: Tensor, where: str) -> None:
    if x.dtype.numpy.kind != "f":
        raise ShapeError(f"{where}: inputs {x.name!r} must be floating point, got "
                         f"{x.dtype.short_name} (og.cast them first)")


def _finish(y, activation, activity_regularizer, where: str):
    if activation is not None:
        y = activation(y)
    if activity_regularizer is not None:
        _regularize(activity_regularizer(y), f"{where}: activity_regularizer")
    return y


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=zeros_initializer(), kernel_regularizer=None,
          bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None) -> Tensor:
    """activation(inputs @ kernel + bias) over the last axis (tf.layers.dense):
    variables "<scope>/kernel" (in, units), Glorot-uniform unless the scope or
    kernel_initializer says otherwise, and "<scope>/bias" (units,).

    Raises:
        ShapeError: inputs have an unknown rank or last dim, or are not floats.
        TypeError: units is not an int, an activation/initializer/regularizer is not
            callable, or name is not a str.
        ValueError: units is not > 0, or reuse is not a reuse value.
    """
    _unsupported("dense", kernel_constraint=kernel_constraint,
                 bias_constraint=bias_constraint)
    units = api._int_arg(units, "dense: units")
    if units <= 0:
        raise ValueError(f"dense: units must be > 0, got {units}")
    use_bias = api._bool_arg(use_bias, "dense: use_bias")
    trainable = api._bool_arg(trainable, "dense: trainable")
    for what, fn in (("activation", activation), ("kernel_regularizer", kernel_regularizer),
                     ("bias_regularizer", bias_regularizer),
                     ("activity_regularizer", activity_regularizer)):
        _callable_or_none(fn, f"dense: {what}")
    _g.check_name(name, "dense")
    x = _g.convert_to_tensor(inputs)
    if x.shape is None or len(x.shape) < 2 or x.shape[-1] is None:
        raise ShapeError(f"dense: inputs ({x.name!r}) must have a known rank >= 2 and a "
                         f"known last dim, got shape {x.shape}")
    _floating(x, "dense")
    with variable_scope(name, default_name="dense", values=[x], reuse=reuse):
        kernel = _variable("kernel", [x.shape[-1], units], x.dtype, kernel_initializer,
                           kernel_regularizer, trainable, "dense")
        y = api.matmul(x, kernel)
        if use_bias:
            y = y + _variable("bias", [units], x.dtype, bias_initializer,
                              bias_regularizer, trainable, "dense")
        return _finish(y, activation, activity_regularizer, "dense")


def _to_channels_first(x: Tensor) -> Tensor:
    r = len(x.shape)
    return api.transpose(x, [0, r - 1] + list(range(1, r - 1)))


def _to_channels_last(x: Tensor) -> Tensor:
    r = len(x.shape)
    return api.transpose(x, [0] + list(range(2, r)) + [1])


def _image(inputs, data_format, where: str):
    """(inputs as a tensor, whether channels_first) for a 2-D image layer.

    Raises:
        ShapeError: inputs are not 4-D.
        ValueError: data_format is unknown.
    """
    first = _data_format(data_format, where)
    x = _g.convert_to_tensor(inputs)
    if x.shape is None or len(x.shape) != 4:
        raise ShapeError(f"{where}: inputs must be 4-D ({'NCHW' if first else 'NHWC'}), "
                         f"got shape {x.shape}")
    return x, first


def _same_or_valid(padding, where: str) -> str:
    if not isinstance(padding, str) or padding.lower() not in ("same", "valid"):
        raise ValueError(f"{where}: padding must be 'same' or 'valid', got {padding!r}")
    return padding.lower()


def _window_attrs(x_nchw: Tensor, kernel, strides, dilations, padding: str,
                  where: str) -> dict:
    """ONNX window attributes for TF's padding: "same" pads so the output is
    ceil(in / stride), the extra pixel at the end, as TF.

    Raises:
        ShapeError: a "valid" window is larger than a side known while building.
    """
    attrs = {"kernel_shape": list(kernel), "strides": list(strides)}
    reach = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    spatial = x_nchw.shape[2:]
    if padding == "same":
        if None not in spatial:
            attrs["pads"] = nn._same_pads(spatial, reach, strides)
        else:
            attrs["auto_pad"] = "SAME_UPPER"
    else:
        check_valid_window(spatial, reach, where, "'valid'")
    return attrs


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None,
           use_bias=True, kernel_initializer=None, bias_initializer=zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
           reuse=None) -> Tensor:
    """2-D convolution layer (tf.layers.conv2d): variables "<scope>/kernel" (kh, kw, in,
    filters) and "<scope>/bias" (filters,); output activation(conv + bias) in the
    input's data_format.

    Raises:
        ShapeError: inputs are not 4-D floats with a known channel count.
        TypeError: filters, kernel_size, strides or dilation_rate is not a positive
            int (or pair), or a function argument is not callable.
        ValueError: padding, data_format or reuse is unknown, or both strides and
            dilation_rate are above 1 (TF1's rule).
    """
    _unsupported("conv2d", kernel_constraint=kernel_constraint,
                 bias_constraint=bias_constraint)
    x, first = _image(inputs, data_format, "conv2d")
    _floating(x, "conv2d")
    filters = nn._positive_int(filters, "conv2d: filters")
    kernel = nn._pair(kernel_size, "conv2d: kernel_size")
    strides = nn._pair(strides, "conv2d: strides")
    dilations = nn._pair(dilation_rate, "conv2d: dilation_rate")
    if max(strides) > 1 and max(dilations) > 1:
        raise ValueError("conv2d: strides > 1 cannot be combined with dilation_rate > 1")
    padding = _same_or_valid(padding, "conv2d")
    use_bias = api._bool_arg(use_bias, "conv2d: use_bias")
    trainable = api._bool_arg(trainable, "conv2d: trainable")
    for what, fn in (("activation", activation), ("kernel_regularizer", kernel_regularizer),
                     ("bias_regularizer", bias_regularizer),
                     ("activity_regularizer", activity_regularizer)):
        _callable_or_none(fn, f"conv2d: {what}")
    _g.check_name(name, "conv2d")
    xc = x if first else _to_channels_first(x)
    channels = xc.shape[1]
    if channels is None:
        raise ShapeError(f"conv2d: the channel count of {x.name!r} must be known, got "
                         f"shape {x.shape}")
    g = x.graph
    with variable_scope(name, default_name="conv2d", values=[x], reuse=reuse):
        k = _variable("kernel", [kernel[0], kernel[1], channels, filters], x.dtype,
                      kernel_initializer, kernel_regularizer, trainable, "conv2d")
        operands = [xc, api.transpose(k, [3, 2, 0, 1])]
        if use_bias:
            operands.append(_variable("bias", [filters], x.dtype, bias_initializer,
                                      bias_regularizer, trainable, "conv2d"))
        attrs = _window_attrs(xc, kernel, strides, dilations, padding, "conv2d")
        attrs["dilations"] = list(dilations)
        reach = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
        operands[0] = conv_padding(xc, attrs, reach, strides)
        y = g.op("Conv", operands, attrs)
        if not first:
            y = _to_channels_last(y)
        return _finish(y, activation, activity_regularizer, "conv2d")


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=zeros_initializer(),
                     kernel_regularizer=None, bias_regularizer=None,
                     activity_regularizer=None, kernel_constraint=None,
                     bias_constraint=None, trainable=True, name=None,
                     reuse=None) -> Tensor:
    """Transposed 2-D convolution layer (tf.layers.conv2d_transpose): variables
    "<scope>/kernel" (kh, kw, filters, in) and "<scope>/bias" (filters,); each side
    grows to in * stride ("same") or in * stride + max(k - stride, 0) ("valid"), as
    og.nn.conv2d_transpose computes it.

    Raises:
        ShapeError: inputs are not 4-D floats with known channels.
        TypeError: filters, kernel_size or strides is not a positive int (or pair), or a
            function argument is not callable.
        ValueError: padding, data_format or reuse is unknown.
    """
    where = "conv2d_transpose"
    _unsupported(where, kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
    x, first = _image(inputs, data_format, where)
    _floating(x, where)
    filters = nn._positive_int(filters, f"{where}: filters")
    kernel = nn._pair(kernel_size, f"{where}: kernel_size")
    strides = nn._pair(strides, f"{where}: strides")
    padding = _same_or_valid(padding, where)
    use_bias = api._bool_arg(use_bias, f"{where}: use_bias")
    trainable = api._bool_arg(trainable, f"{where}: trainable")
    for what, fn in (("activation", activation), ("kernel_regularizer", kernel_regularizer),
                     ("bias_regularizer", bias_regularizer),
                     ("activity_regularizer", activity_regularizer)):
        _callable_or_none(fn, f"{where}: {what}")
    _g.check_name(name, where)
    dims = x.shape[2:] if first else x.shape[1:3]
    channels = x.shape[1] if first else x.shape[3]
    if channels is None:
        raise ShapeError(f"{where}: the channels of {x.name!r} must be known, got shape "
                         f"{x.shape}")
    # a height or width known only at run time grows by the same rule, as a tensor
    dims = [api.shape(x)[axis] if n is None else n
            for axis, n in zip((2, 3) if first else (1, 2), dims)]
    grown = [n * s if padding == "same" else n * s + max(k - s, 0)
             for n, k, s in zip(dims, kernel, strides)]
    out_shape = [-1, filters] + grown if first else [-1] + grown + [filters]
    fmt = "NCHW" if first else "NHWC"
    with variable_scope(name, default_name=where, values=[x], reuse=reuse):
        k = _variable("kernel", [kernel[0], kernel[1], filters, channels], x.dtype,
                      kernel_initializer, kernel_regularizer, trainable, where)
        y = _transposed(x, k, out_shape, [1, 1] + strides if first else [1] + strides + [1],
                       padding, data_format=fmt)
        if use_bias:
            b = _variable("bias", [filters], x.dtype, bias_initializer, bias_regularizer,
                          trainable, where)
            y = nn.bias_add(y, b, data_format=fmt)
        return _finish(y, activation, activity_regularizer, where)


def _pooling(op_type, where, inputs, pool_size, strides, padding, data_format, name):
    x, first = _image(inputs, data_format, where)
    kernel = nn._pair(pool_size, f"{where}: pool_size")
    steps = nn._pair(strides, f"{where}: strides")
    padding = _same_or_valid(padding, where)
    _g.check_name(name, where)
    g = x.graph
    with g.name_scope(name or where):
        xc = x if first else _to_channels_first(x)
        y = g.op(op_type, [xc], _window_attrs(xc, kernel, steps, (1, 1), padding, where))
        return y if first else _to_channels_last(y)


def max_pooling2d(inputs, pool_size, strides, padding="valid",
                  data_format="channels_last", name=None) -> Tensor:
    """Max over pool_size windows moved by strides (tf.layers.max_pooling2d).

    Raises:
        ShapeError: inputs are not 4-D.
        TypeError: pool_size or strides is not a positive int or pair.
        ValueError: padding or data_format is unknown.
    """
    return _pooling("MaxPool", "max_pooling2d", inputs, pool_size, strides, padding,
                    data_format, name)


def average_pooling2d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None) -> Tensor:
    """Mean over pool_size windows moved by strides, padding left out of the count as
    in TF (tf.layers.average_pooling2d).

    Raises:
        ShapeError: inputs are not 4-D.
        TypeError: pool_size or strides is not a positive int or pair.
        ValueError: padding or data_format is unknown.
    """
    return _pooling("AveragePool", "average_pooling2d", inputs, pool_size, strides,
                    padding, data_format, name)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True,
                        scale=True, beta_initializer=zeros_initializer(),
                        gamma_initializer=ones_initializer(),
                        moving_mean_initializer=zeros_initializer(),
                        moving_variance_initializer=ones_initializer(),
                        beta_regularizer=None, gamma_regularizer=None,
                        beta_constraint=None, gamma_constraint=None, training=False,
                        trainable=True, name=None, reuse=None, renorm=False,
                        renorm_clipping=None, renorm_momentum=0.99, fused=None,
                        virtual_batch_size=None, adjustment=None) -> Tensor:
    """Batch normalization along `axis` (tf.layers.batch_normalization): variables
    "<scope>/gamma", "beta", "moving_mean", "moving_variance". With training (a Python
    bool or a bool scalar tensor) the batch statistics normalise and the moving
    averages' updates go to og.UPDATE_OPS (run them with the train op, as in TF1);
    without it, the moving averages normalise. float16/bfloat16 inputs get float32
    parameters and are normalised in float32, as in TF1. Constraints, renorm,
    virtual_batch_size and adjustment are refused when set.

    `fused` picks the moving variance's update as TF1 does. Where TF1 runs its fused
    kernel (fused None or True, a 4-D or 5-D input, axis 1 or the last, and a
    float16, bfloat16 or float32 input) the update takes the unbiased batch variance
    (times n / (n - 1), n the number of values per channel; unchanged for n = 1);
    elsewhere (fused=False, other ranks or axes, float64) the biased one, as
    og.nn.batch_norm. The output is normalised with the biased variance either way.

    Raises:
        ShapeError: the rank or the size of `axis` is unknown, or axis is out of range.
        TypeError: axis is not an int, momentum or epsilon not a number, or a
            regularizer not callable.
        ValueError: reuse is unknown.
        OneGraphError: a constraint, renorm or its options, virtual_batch_size or
            adjustment is set.
    """
    _unsupported("batch_normalization", beta_constraint=beta_constraint,
                 gamma_constraint=gamma_constraint, renorm_clipping=renorm_clipping,
                 virtual_batch_size=virtual_batch_size, adjustment=adjustment)
    if api._bool_arg(renorm, "batch_normalization: renorm"):
        raise OneGraphError("batch_normalization: renorm is not supported")
    if fused is not None:   # the fused and unfused kernels compute the same values
        api._bool_arg(fused, "batch_normalization: fused")
    axis = api._int_arg(axis, "batch_normalization: axis")
    for what, v in (("momentum", momentum), ("epsilon", epsilon)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(
                v, (int, float, np.integer, np.floating)):
            raise TypeError(f"batch_normalization: {what} must be a number, got "
                            f"{type(v).__name__}")
    center = api._bool_arg(center, "batch_normalization: center")
    scale = api._bool_arg(scale, "batch_normalization: scale")
    trainable = api._bool_arg(trainable, "batch_normalization: trainable")
    training = nn._training_arg(training, "batch_normalization")
    for what, fn in (("beta_regularizer", beta_regularizer),
                     ("gamma_regularizer", gamma_regularizer)):
        _callable_or_none(fn, f"batch_normalization: {what}")
    _g.check_name(name, "batch_normalization")
    x = _g.convert_to_tensor(inputs)
    _floating(x, "batch_normalization")
    if x.shape is None or not -len(x.shape) <= axis < len(x.shape) \
            or x.shape[axis] is None:
        raise ShapeError(f"batch_normalization: axis {axis} must be a known dim of the "
                         f"inputs, got shape {x.shape}")
    axis %= len(x.shape)
    c = x.shape[axis]
    where = "batch_normalization"
    # TF1 keeps float16/bfloat16 layers' parameters, and computes, in float32
    half = x.dtype in (DType.FLOAT16, DType.BFLOAT16)
    dt = DType.FLOAT32 if half else x.dtype
    with variable_scope(name, default_name=where, values=[x], reuse=reuse):
        gamma = _variable("gamma", [c], dt, gamma_initializer, gamma_regularizer,
                          trainable, where) if scale else None
        beta = _variable("beta", [c], dt, beta_initializer, beta_regularizer,
                         trainable, where) if center else None
        mm = _variable("moving_mean", [c], dt, moving_mean_initializer, None, False,
                       where)
        mv = _variable("moving_variance", [c], dt, moving_variance_initializer, None,
                       False, where)
        xc = api.cast(x, dt) if half else x
        y = nn.batch_normalized(xc, training, (gamma, beta, mm, mv), axis, momentum,
                                epsilon, unbiased=_tf1_fused(fused, x, axis))
        return api.cast(y, x.dtype) if half else y


def _tf1_fused(fused, x: Tensor, axis: int) -> bool:
    """Whether TF1's tf.layers.batch_normalization runs its fused kernel for these
    arguments: fused None or True, a 4-D or 5-D input (TF 2.21's v1 layer also fuses
    5-D ones), the channels on axis 1 or the last (axis non-negative here), and a
    float16, bfloat16 or float32 input (float64 falls back to the plain kernel even
    with fused=True, as does any other rank or axis)."""
    rank = len(x.shape)
    return (fused is not False and rank in (4, 5) and axis in (1, rank - 1)
            and x.dtype in (DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32))


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False,
            name=None) -> Tensor:
    """inputs with each element zeroed with probability `rate` and the rest scaled by
    1 / (1 - rate) when training (a Python bool or a bool scalar tensor), else as
    they are (tf.layers.dropout; note TF1's default training=False). Masks come from
    the Session's generator (og.Session(graph, seed=...)).

    Raises:
        ValueError: rate is not in [0, 1).
        OneGraphError: noise_shape or seed is given (not supported: masks are drawn
            per element from the Session's generator).
    """
    if noise_shape is not None:
        raise OneGraphError("dropout: noise_shape is not supported (masks are drawn per "
                            "element)")
    if seed is not None:
        raise OneGraphError("dropout: seed is not supported; masks come from the "
                            "Session's generator: og.Session(graph, seed=...)")
    return nn.dropout(inputs, rate=rate, training=training, name=name)


def flatten(inputs, name=None, data_format="channels_last") -> Tensor:
    """(batch, ...) -> (batch, prod(...)) in channels_last order: channels_first inputs
    are moved to channels_last first, as TF1 does so that the weights after it do not
    depend on the format (tf.layers.flatten).

    Raises:
        ValueError: data_format is unknown.
        ShapeError: inputs are a scalar.
    """
    first = _data_format(data_format, "flatten")
    x = _g.convert_to_tensor(inputs)
    if x.shape is not None and len(x.shape) == 0:
        raise ShapeError("flatten: inputs must have a batch axis, got a scalar")
    if first and x.shape is not None and len(x.shape) >= 3:
        x = _to_channels_last(x)
    return x.graph.op("Flatten", [x], {"axis": 1}, name=name)


# --------------------------------------------------------------------------- 1-D and 3-D

_LAYOUTS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


def _spatial(inputs, data_format, n: int, where: str):
    """(inputs as a floating tensor, whether channels_first, the channel count, the
    og.nn layout string) for a layer over n spatial axes.

    Raises:
        ShapeError: inputs are not (n + 2)-D floats with a known channel count.
        ValueError: data_format is unknown.
    """
    first = _data_format(data_format, where)
    x = _g.convert_to_tensor(inputs)
    if x.shape is None or len(x.shape) != n + 2:
        layout = _LAYOUTS[n][1 if first else 0]
        raise ShapeError(f"{where}: inputs must be {n + 2}-D ({layout}), got shape "
                         f"{x.shape}")
    _floating(x, where)
    channels = x.shape[1] if first else x.shape[-1]
    if channels is None:
        raise ShapeError(f"{where}: the channel count of {x.name!r} must be known, got "
                         f"shape {x.shape}")
    return x, first, channels, _LAYOUTS[n][1 if first else 0]


def _layer_args(where: str, use_bias, trainable, name, **functions):
    """use_bias and trainable as bools, after checking the function arguments and name.

    Raises:
        TypeError: use_bias / trainable is not a bool, a function argument is not
            callable, or name is not a str.
    """
    use_bias = api._bool_arg(use_bias, f"{where}: use_bias")
    trainable = api._bool_arg(trainable, f"{where}: trainable")
    for what, fn in functions.items():
        _callable_or_none(fn, f"{where}: {what}")
    _g.check_name(name, where)
    return use_bias, trainable


def _window(where: str, n: int, kernel_size, strides, dilation_rate, padding):
    """kernel, strides and dilations as n positive ints each, and padding in TF's
    upper case.

    Raises:
        TypeError: one of them is not a positive int or n of them.
        ValueError: padding is not "same"/"valid", or strides and dilation_rate are
            both above 1 (TF1's rule).
    """
    kernel = nn._pair(kernel_size, f"{where}: kernel_size", n)
    steps = nn._pair(strides, f"{where}: strides", n)
    rates = nn._pair(dilation_rate, f"{where}: dilation_rate", n)
    if max(steps) > 1 and max(rates) > 1:
        raise ValueError(f"{where}: strides > 1 cannot be combined with dilation_rate > 1")
    return kernel, steps, rates, _same_or_valid(padding, where).upper()


def _fits(x: Tensor, first: bool, kernel, rates, padding: str, where: str) -> None:
    """Refuse a "valid" window that reaches past a spatial side known while building
    (TF1 refuses it as a negative output size).

    Raises:
        ShapeError: names the layer, the axis and the sizes.
    """
    if padding != "VALID":
        return
    check_valid_window(x.shape[2:] if first else x.shape[1:-1],
                       [(k - 1) * r + 1 for k, r in zip(kernel, rates)], where, "'valid'")


def _bias_and_finish(y, use_bias, filters, dtype, bias_initializer, bias_regularizer,
                     trainable, layout, activation, activity_regularizer, where):
    if use_bias:
        b = _variable("bias", [filters], dtype, bias_initializer, bias_regularizer,
                      trainable, where)
        y = nn.bias_add(y, b, data_format=layout)
    return _finish(y, activation, activity_regularizer, where)


def _conv_nd(where, n, inputs, filters, kernel_size, strides, padding, data_format,
             dilation_rate, activation, use_bias, kernel_initializer, bias_initializer,
             kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
             bias_constraint, trainable, name, reuse) -> Tensor:
    _unsupported(where, kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
    x, first, channels, layout = _spatial(inputs, data_format, n, where)
    filters = nn._positive_int(filters, f"{where}: filters")
    kernel, steps, rates, padding = _window(where, n, kernel_size, strides, dilation_rate,
                                            padding)
    _fits(x, first, kernel, rates, padding, where)
    use_bias, trainable = _layer_args(
        where, use_bias, trainable, name, activation=activation,
        kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
        activity_regularizer=activity_regularizer)
    with variable_scope(name, default_name=where, values=[x], reuse=reuse):
        k = _variable("kernel", kernel + [channels, filters], x.dtype, kernel_initializer,
                      kernel_regularizer, trainable, where)
        if n == 1:
            y = nn_extra.conv1d(x, k, steps[0], padding, data_format=layout,
                                dilations=rates[0])
        else:
            five = [1, 1] + steps if first else [1] + steps + [1]
            dil = [1, 1] + rates if first else [1] + rates + [1]
            y = nn_more.conv3d(x, k, five, padding, data_format=layout, dilations=dil)
        return _bias_and_finish(y, use_bias, filters, x.dtype, bias_initializer,
                                bias_regularizer, trainable, layout, activation,
                                activity_regularizer, where)


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid",
           data_format="channels_last", dilation_rate=1, activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
           reuse=None) -> Tensor:
    """1-D convolution layer (tf.layers.conv1d) of (batch, width, in) inputs (or
    (batch, in, width) with channels_first): variables "<scope>/kernel" (k, in,
    filters) and "<scope>/bias" (filters,); output activation(conv + bias) in the
    input's data_format, built on og.nn.conv1d.

    Raises:
        ShapeError: inputs are not 3-D floats with a known channel count.
        TypeError: filters, kernel_size, strides or dilation_rate is not a positive
            int (or one of them), use_bias / trainable is not a bool, a function
            argument is not callable, or name is not a str.
        ValueError: padding, data_format or reuse is unknown, or both strides and
            dilation_rate are above 1 (TF1's rule).
        OneGraphError: kernel_constraint or bias_constraint is set.
    """
    return _conv_nd("conv1d", 1, inputs, filters, kernel_size, strides, padding,
                    data_format, dilation_rate, activation, use_bias, kernel_initializer,
                    bias_initializer, kernel_regularizer, bias_regularizer,
                    activity_regularizer, kernel_constraint, bias_constraint, trainable,
                    name, reuse)


def conv3d(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1, 1), activation=None,
           use_bias=True, kernel_initializer=None, bias_initializer=zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
           reuse=None) -> Tensor:
    """3-D convolution layer (tf.layers.conv3d) of NDHWC inputs (NCDHW with
    channels_first): variables "<scope>/kernel" (kd, kh, kw, in, filters) and
    "<scope>/bias" (filters,); output activation(conv + bias) in the input's
    data_format, built on og.nn.conv3d.

    Raises:
        ShapeError: inputs are not 5-D floats with a known channel count.
        TypeError: filters, kernel_size, strides or dilation_rate is not a positive
            int (or 3 of them), use_bias / trainable is not a bool, a function
            argument is not callable, or name is not a str.
        ValueError: padding, data_format or reuse is unknown, or both strides and
            dilation_rate are above 1 (TF1's rule).
        OneGraphError: kernel_constraint or bias_constraint is set.
    """
    return _conv_nd("conv3d", 3, inputs, filters, kernel_size, strides, padding,
                    data_format, dilation_rate, activation, use_bias, kernel_initializer,
                    bias_initializer, kernel_regularizer, bias_regularizer,
                    activity_regularizer, kernel_constraint, bias_constraint, trainable,
                    name, reuse)


def conv3d_transpose(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=zeros_initializer(),
                     kernel_regularizer=None, bias_regularizer=None,
                     activity_regularizer=None, kernel_constraint=None,
                     bias_constraint=None, trainable=True, name=None,
                     reuse=None) -> Tensor:
    """Transposed 3-D convolution layer (tf.layers.conv3d_transpose): variables
    "<scope>/kernel" (kd, kh, kw, filters, in) and "<scope>/bias" (filters,); each
    spatial side grows to in * stride ("same") or in * stride + max(k - stride, 0)
    ("valid"), computed from og.shape for sizes only the run knows; built on
    og.nn.conv3d_transpose.

    Raises:
        ShapeError: inputs are not 5-D floats with a known channel count.
        TypeError: filters, kernel_size or strides is not a positive int (or 3 of
            them), use_bias / trainable is not a bool, a function argument is not
            callable, or name is not a str.
        ValueError: padding, data_format or reuse is unknown.
        OneGraphError: kernel_constraint or bias_constraint is set.
    """
    where = "conv3d_transpose"
    _unsupported(where, kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
    x, first, channels, layout = _spatial(inputs, data_format, 3, where)
    filters = nn._positive_int(filters, f"{where}: filters")
    kernel, steps, _, padding = _window(where, 3, kernel_size, strides, 1, padding)
    use_bias, trainable = _layer_args(
        where, use_bias, trainable, name, activation=activation,
        kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
        activity_regularizer=activity_regularizer)
    axes = (2, 3, 4) if first else (1, 2, 3)
    # a side known only at run time grows by the same rule, as a tensor
    dims = [api.shape(x)[axis] if x.shape[axis] is None else x.shape[axis] for axis in axes]
    grown = [d * s if padding == "SAME" else d * s + max(k - s, 0)
             for d, k, s in zip(dims, kernel, steps)]
    out_shape = [-1, filters] + grown if first else [-1] + grown + [filters]
    five = [1, 1] + steps if first else [1] + steps + [1]
    with variable_scope(name, default_name=where, values=[x], reuse=reuse):
        k = _variable("kernel", kernel + [filters, channels], x.dtype, kernel_initializer,
                      kernel_regularizer, trainable, where)
        y = nn_tf1_more.conv3d_transpose(x, k, out_shape, five, padding,
                                         data_format=layout)
        return _bias_and_finish(y, use_bias, filters, x.dtype, bias_initializer,
                                bias_regularizer, trainable, layout, activation,
                                activity_regularizer, where)


def _separable(where, n, inputs, filters, kernel_size, strides, padding, data_format,
               dilation_rate, depth_multiplier, activation, use_bias, depthwise_initializer,
               pointwise_initializer, bias_initializer, depthwise_regularizer,
               pointwise_regularizer, bias_regularizer, activity_regularizer,
               depthwise_constraint, pointwise_constraint, bias_constraint, trainable, name,
               reuse) -> Tensor:
    _unsupported(where, depthwise_constraint=depthwise_constraint,
                 pointwise_constraint=pointwise_constraint, bias_constraint=bias_constraint)
    x, first, channels, layout = _spatial(inputs, data_format, n, where)
    filters = nn._positive_int(filters, f"{where}: filters")
    multiplier = nn._positive_int(depth_multiplier, f"{where}: depth_multiplier")
    kernel, steps, rates, padding = _window(where, n, kernel_size, strides, dilation_rate,
                                            padding)
    _fits(x, first, kernel, rates, padding, where)
    use_bias, trainable = _layer_args(
        where, use_bias, trainable, name, activation=activation,
        depthwise_regularizer=depthwise_regularizer,
        pointwise_regularizer=pointwise_regularizer, bias_regularizer=bias_regularizer,
        activity_regularizer=activity_regularizer)
    with variable_scope(name, default_name=where, values=[x], reuse=reuse):
        depthwise = _variable("depthwise_kernel", kernel + [channels, multiplier], x.dtype,
                              depthwise_initializer, depthwise_regularizer, trainable, where)
        pointwise = _variable("pointwise_kernel", [1] * n + [channels * multiplier, filters],
                              x.dtype, pointwise_initializer, pointwise_regularizer,
                              trainable, where)
        xs = x
        if n == 1:   # as TF: a separable_conv2d over a height of 1
            axis = 2 if first else 1
            xs = api.expand_dims(x, axis)
            depthwise, pointwise = api.expand_dims(depthwise, 0), api.expand_dims(pointwise, 0)
            steps, rates = [1] + steps, [1] + rates
        four = [1, 1] + steps if first else [1] + steps + [1]
        fmt = "NCHW" if first else "NHWC"
        y = nn_extra.separable_conv2d(xs, depthwise, pointwise, four, padding, rate=rates,
                                      data_format=fmt)
        if n == 1:
            y = api.squeeze(y, [axis])
        return _bias_and_finish(y, use_bias, filters, x.dtype, bias_initializer,
                                bias_regularizer, trainable, layout, activation,
                                activity_regularizer, where)


def separable_conv1d(inputs, filters, kernel_size, strides=1, padding="valid",
                     data_format="channels_last", dilation_rate=1, depth_multiplier=1,
                     activation=None, use_bias=True, depthwise_initializer=None,
                     pointwise_initializer=None, bias_initializer=zeros_initializer(),
                     depthwise_regularizer=None, pointwise_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None,
                     depthwise_constraint=None, pointwise_constraint=None,
                     bias_constraint=None, trainable=True, name=None,
                     reuse=None) -> Tensor:
    """Depthwise-separable 1-D convolution layer (tf.layers.separable_conv1d): each
    input channel convolved with depth_multiplier filters, then a 1-wide conv to
    `filters`; variables "<scope>/depthwise_kernel" (k, in, depth_multiplier),
    "<scope>/pointwise_kernel" (1, in * depth_multiplier, filters) and "<scope>/bias"
    (filters,). As TF, og.nn.separable_conv2d over an expanded axis of size 1.

    Raises:
        ShapeError: inputs are not 3-D floats with a known channel count.
        TypeError: filters, depth_multiplier, kernel_size, strides or dilation_rate is
            not a positive int (or one of them), use_bias / trainable is not a bool, a
            function argument is not callable, or name is not a str.
        ValueError: padding, data_format or reuse is unknown, or both strides and
            dilation_rate are above 1 (TF1's rule).
        OneGraphError: a constraint is set.
    """
    return _separable("separable_conv1d", 1, inputs, filters, kernel_size, strides,
                      padding, data_format, dilation_rate, depth_multiplier, activation,
                      use_bias, depthwise_initializer, pointwise_initializer,
                      bias_initializer, depthwise_regularizer, pointwise_regularizer,
                      bias_regularizer, activity_regularizer, depthwise_constraint,
                      pointwise_constraint, bias_constraint, trainable, name, reuse)


def separable_conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", dilation_rate=(1, 1), depth_multiplier=1,
                     activation=None, use_bias=True, depthwise_initializer=None,
                     pointwise_initializer=None, bias_initializer=zeros_initializer(),
                     depthwise_regularizer=None, pointwise_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None,
                     depthwise_constraint=None, pointwise_constraint=None,
                     bias_constraint=None, trainable=True, name=None,
                     reuse=None) -> Tensor:
    """Depthwise-separable 2-D convolution layer (tf.layers.separable_conv2d): each
    input channel convolved with depth_multiplier filters, then a 1x1 conv to
    `filters`; variables "<scope>/depthwise_kernel" (kh, kw, in, depth_multiplier),
    "<scope>/pointwise_kernel" (1, 1, in * depth_multiplier, filters) and
    "<scope>/bias" (filters,); built on og.nn.separable_conv2d.

    Raises:
        ShapeError: inputs are not 4-D floats with a known channel count.
        TypeError: filters, depth_multiplier, kernel_size, strides or dilation_rate is
            not a positive int (or 2 of them), use_bias / trainable is not a bool, a
            function argument is not callable, or name is not a str.
        ValueError: padding, data_format or reuse is unknown, or both strides and
            dilation_rate are above 1 (TF1's rule).
        OneGraphError: a constraint is set.
    """
    return _separable("separable_conv2d", 2, inputs, filters, kernel_size, strides,
                      padding, data_format, dilation_rate, depth_multiplier, activation,
                      use_bias, depthwise_initializer, pointwise_initializer,
                      bias_initializer, depthwise_regularizer, pointwise_regularizer,
                      bias_regularizer, activity_regularizer, depthwise_constraint,
                      pointwise_constraint, bias_constraint, trainable, name, reuse)


def _pooling_nd(fn, where, n, inputs, pool_size, strides, padding, data_format, name):
    first = _data_format(data_format, where)
    x = _g.convert_to_tensor(inputs)
    if x.shape is None or len(x.shape) != n + 2:
        layout = _LAYOUTS[n][1 if first else 0]
        raise ShapeError(f"{where}: inputs must be {n + 2}-D ({layout}), got shape "
                         f"{x.shape}")
    kernel = nn._pair(pool_size, f"{where}: pool_size", n)
    steps = nn._pair(strides, f"{where}: strides", n)
    padding = _same_or_valid(padding, where).upper()
    _fits(x, first, kernel, [1] * n, padding, where)
    _g.check_name(name, where)
    with x.graph.name_scope(name or where):
        return fn(x, kernel, steps, padding, data_format=_LAYOUTS[n][1 if first else 0])


def max_pooling1d(inputs, pool_size, strides, padding="valid",
                  data_format="channels_last", name=None) -> Tensor:
    """Max over pool_size windows of a (batch, width, channels) input (channels_first:
    (batch, channels, width)) moved by strides (tf.layers.max_pooling1d; og.nn.max_pool1d).

    Raises:
        ShapeError: inputs are not 3-D, or a "valid" window is wider than them.
        TypeError: pool_size or strides is not a positive int (or one of them), or name
            is not a str.
        ValueError: padding or data_format is unknown.
    """
    return _pooling_nd(nn_more.max_pool1d, "max_pooling1d", 1, inputs, pool_size, strides,
                       padding, data_format, name)


def average_pooling1d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None) -> Tensor:
    """Mean over pool_size windows of a (batch, width, channels) input moved by strides,
    padding left out of the count as in TF (tf.layers.average_pooling1d;
    og.nn.avg_pool1d).

    Raises:
        ShapeError: inputs are not 3-D, or a "valid" window is wider than them.
        TypeError: pool_size or strides is not a positive int (or one of them), or name
            is not a str.
        ValueError: padding or data_format is unknown.
    """
    return _pooling_nd(nn_more.avg_pool1d, "average_pooling1d", 1, inputs, pool_size,
                       strides, padding, data_format, name)


def max_pooling3d(inputs, pool_size, strides, padding="valid",
                  data_format="channels_last", name=None) -> Tensor:
    """Max over pool_size windows of an NDHWC input (NCDHW with channels_first) moved
    by strides (tf.layers.max_pooling3d; og.nn.max_pool3d).

    Raises:
        ShapeError: inputs are not 5-D, or a "valid" window is larger than them.
        TypeError: pool_size or strides is not a positive int (or 3 of them), or name
            is not a str.
        ValueError: padding or data_format is unknown.
    """
    return _pooling_nd(nn_more.max_pool3d, "max_pooling3d", 3, inputs, pool_size, strides,
                       padding, data_format, name)


def average_pooling3d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None) -> Tensor:
    """Mean over pool_size windows of an NDHWC input (NCDHW with channels_first) moved
    by strides, padding left out of the count as in TF (tf.layers.average_pooling3d;
    og.nn.avg_pool3d).

    Raises:
        ShapeError: inputs are not 5-D, or a "valid" window is larger than them.
        TypeError: pool_size or strides is not a positive int (or 3 of them), or name
            is not a str.
        ValueError: padding or data_format is unknown.
    """
    return _pooling_nd(nn_more.avg_pool3d, "average_pooling3d", 3, inputs, pool_size,
                       strides, padding, data_format, name)


__all__ = ["average_pooling1d", "average_pooling2d", "average_pooling3d",
           "batch_normalization", "conv1d", "conv2d", "conv2d_transpose", "conv3d",
           "conv3d_transpose", "dense", "dropout", "flatten", "max_pooling1d",
           "max_pooling2d", "max_pooling3d", "separable_conv1d", "separable_conv2d"]


# the class forms (tf.compat.v1.layers.Dense, ...), built on the functions above
from .layers_classes import (  # noqa: E402 - they import this module
    AveragePooling1D, AveragePooling2D, AveragePooling3D, BatchNormalization, Conv1D,
    Conv2D, Conv2DTranspose, Conv3D, Conv3DTranspose, Dense, Dropout, Flatten, Layer,
    MaxPooling1D, MaxPooling2D, MaxPooling3D, SeparableConv1D, SeparableConv2D)

__all__ += ["AveragePooling1D", "AveragePooling2D", "AveragePooling3D",
            "BatchNormalization", "Conv1D", "Conv2D", "Conv2DTranspose", "Conv3D",
            "Conv3DTranspose", "Dense", "Dropout", "Flatten", "Layer", "MaxPooling1D",
            "MaxPooling2D", "MaxPooling3D", "SeparableConv1D", "SeparableConv2D"]
