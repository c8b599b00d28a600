"""TF1's layer classes (tf.compat.v1.layers.Dense, Conv2D, BatchNormalization, ...) as
og.layers.<Name>, built on the functional forms of og.layers.

A layer is constructed with the functional form's arguments (minus `inputs`), which
are checked there and then: the functional form is built once on a stand-in input in
a private graph, so a bad argument raises the very error the functional form raises.
The first call `layer(inputs)` creates the variables under the layer's variable scope
(default name made unique as TF1 does: "dense", "dense_1", ...); later calls reuse
them, whatever variable scope they are made in, so `d(x1)` and `d(x2)` share kernel
and bias. A later call must keep the built channel count (and, except for Dense, the
rank) and dtype. Regularization losses and BatchNormalization's moving-average
updates made by a call are kept in `losses` and `updates` (they also go to
og.REGULARIZATION_LOSSES and og.UPDATE_OPS, as with the functional forms: weight
regularizers once, when the variables are created).

`Layer` is also a base class as in TF1: override `build(input_shape)` (create
variables with `add_weight`) and `call(inputs, **kwargs)`.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from . import api
from . import nn as _nn
from . import graph as _g
from .graph import GLOBAL_VARIABLES, REGULARIZATION_LOSSES, TRAINABLE_VARIABLES, UPDATE_OPS
from .graph import Tensor
from .initializers import ones_initializer, zeros_initializer
from .variable_scope import _as_dtype, _graph_attribute, _scopes, _unique_scope_name
from .variable_scope import variable_scope


def _ignore(*args, **kwargs):
    """Stand-in for the user's functions while arguments are checked: returns None."""
    return None


class Layer:
    """Base class of TF1's layers (tf.compat.v1.layers.Layer).

    Subclasses override `build(input_shape)`, creating their variables with
    `add_weight`, and `call(inputs, **kwargs)`. The first `layer(inputs)` opens the
    layer's variable scope (the name, or the snake-case class name, made unique as a
    variable_scope default_name), builds and calls; later calls go back into that
    scope with reuse=True, sharing the variables.

    Args:
        trainable: whether the variables go to og.TRAINABLE_VARIABLES.
        name: the layer's name (default: the snake-case class name, made unique per
            graph: "dense", "dense_1", ...).
        dtype: the dtype of the layer's inputs and variables (default: the first
            inputs' dtype).

    Raises:
        TypeError: trainable is not a bool, name is not a str, or dtype names no
            floating dtype.
    """

    _base_name = "layer"

    def __init__(self, trainable=True, name=None, dtype=None):
        where = type(self).__name__
        self._trainable = api._bool_arg(trainable, f"{where}: trainable")
        _g.check_name(name, where)
        if dtype is not None:
            dtype = _as_dtype(dtype, where)
            if dtype.numpy.kind != "f":
                raise TypeError(f"{where}: dtype must be a floating dtype, got "
                                f"{dtype.short_name}")
        self._dtype = dtype
        self._scope_base = name or self._base_name
        self._name = name or _unique_layer_name(self._base_name)
        self.built = False
        self._graph = None
        self._scope = None          # VariableScope of the first call (generic layers)
        self._scope_name = None
        self._variables: list = []
        self._losses: list = []
        self._updates: list = []
        self._spec = None           # (rank or None, channel axis, channels) once built

    # -- identity -------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The layer's name. Never raises."""
        return self._name

    @property
    def scope_name(self) -> str:
        """The variable scope of the layer's variables ("dense", "outer/dense_1").

        Raises:
            ValueError: the layer has not been called yet.
        """
        if self._scope_name is None:
            raise ValueError(f"{self._name}: no name scope yet; call the layer first")
        return self._scope_name

    @property
    def dtype(self):
        """The layer's dtype (the first inputs' unless given; None before). Never raises."""
        return self._dtype

    @property
    def trainable(self) -> bool:
        """Whether the layer's variables are trainable. Never raises."""
        return self._trainable

    @property
    def graph(self):
        """The graph the layer was built in (None before its first call). Never raises."""
        return self._graph

    # -- variables, losses, updates ------------------------------------------------------

    @property
    def variables(self) -> list:
        """All the layer's variables, in creation order (empty before the first call).
        Never raises."""
        return list(self._variables)

    weights = variables

    @property
    def trainable_variables(self) -> list:
        """The layer's variables in og.TRAINABLE_VARIABLES (none when trainable=False).
        Never raises."""
        if not self._variables or not self._trainable:
            return []
        trained = {id(v) for v in self._graph.get_collection(TRAINABLE_VARIABLES)}
        return [v for v in self._variables if id(v) in trained]

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self) -> list:
        """The layer's other variables (moving averages; all when trainable=False).
        Never raises."""
        trained = {id(v) for v in self.trainable_variables}
        return [v for v in self._variables if id(v) not in trained]

    non_trainable_weights = non_trainable_variables

    @property
    def losses(self) -> list:
        """The regularization losses the layer's calls added (weight regularizers' once,
        activity regularizers' per call). Never raises."""
        return list(self._losses)

    @property
    def updates(self) -> list:
        """The update ops the layer's calls added to og.UPDATE_OPS (BatchNormalization's
        moving averages when training). Never raises."""
        return list(self._updates)

    def get_weights(self, session=None) -> list:
        """The values of `variables` as numpy arrays, read in `session` (default: the
        default session).

        Raises:
            ValueError: no session is given and none is the default.
        """
        if not self._variables:
            return []
        return list(_g._session_for(session, self, "Layer.get_weights").run(
            self._variables))

    def set_weights(self, weights, session=None) -> None:
        """Set `variables` to `weights` (arrays in the same order) in `session`
        (default: the default session), as Variable.load does.

        Raises:
            ValueError: the number of arrays or one's shape differs from the
                variables', or no session is given and none is the default.
        """
        weights = list(weights)
        if len(weights) != len(self._variables):
            raise ValueError(f"{self._name}: set_weights got {len(weights)} arrays for "
                             f"{len(self._variables)} weights")
        for var, value in zip(self._variables, weights):
            if tuple(np.shape(value)) != tuple(var.shape):
                raise ValueError(f"{self._name}: weight {var.name!r} has shape "
                                 f"{list(var.shape)}, got an array of shape "
                                 f"{list(np.shape(value))}")
        sess = _g._session_for(session, self, "Layer.set_weights")
        for var, value in zip(self._variables, weights):
            var.load(np.asarray(value, var.dtype.numpy), sess)

    # -- building and calling ----------------------------------------------------------

    def build(self, input_shape) -> None:
        """Create the layer's variables for inputs of `input_shape` (override it; this
        one creates none). Never raises."""
        self.built = True

    def call(self, inputs, **kwargs):
        """The layer's computation on inputs (override it; this one returns them).
        Never raises."""
        return inputs

    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None,
                   trainable=None):
        """A variable "<layer scope>/<name>" (og.get_variable), for `build`; a
        regularizer's loss goes to `losses` and og.REGULARIZATION_LOSSES. trainable
        defaults to the layer's.

        Raises:
            TypeError: regularizer is not callable.
            ValueError: the variable exists and the scope does not reuse it.
        """
        _fn._callable_or_none(regularizer, f"{self._name}: regularizer")
        dtype = dtype or self._dtype or api.float32
        trainable = self._trainable if trainable is None else bool(trainable)
        var = _fn._variable(name, shape, dtype, initializer, regularizer,
                            trainable and self._trainable, self._name)
        if all(v is not var for v in self._variables):
            self._variables.append(var)
        return var

    add_variable = add_weight

    def __call__(self, inputs, *args, **kwargs):
        """The layer's outputs for inputs: the first call builds the variables, later
        ones share them.

        Raises:
            ValueError: inputs come from another graph than the first call's.
            ShapeError: a later call's inputs have another rank or channel count than
                the built one (layers with variables).
            TypeError: a later call's inputs have another dtype than the built one.
            Whatever the layer's build and call raise.
        """
        g = _graph_of(inputs)
        if self._graph is not None and g is not self._graph:
            raise ValueError(f"{self._name}: inputs must be in the graph the layer was "
                             "built in")
        losses = {id(t) for t in g.get_collection(REGULARIZATION_LOSSES)}
        updates = {id(t) for t in g.get_collection(UPDATE_OPS)}
        with g.as_default():
            outputs = self._invoke(g, inputs, *args, **kwargs)
        self._graph = g
        self._losses += [t for t in g.get_collection(REGULARIZATION_LOSSES)
                         if id(t) not in losses]
        self._updates += [t for t in g.get_collection(UPDATE_OPS) if id(t) not in updates]
        return outputs

    def apply(self, inputs, *args, **kwargs):
        """The same as calling the layer (TF1's apply).

        Raises:
            As __call__.
        """
        return self(inputs, *args, **kwargs)

    def _invoke(self, g, inputs, *args, **kwargs):
        if not self.built:
            with variable_scope(None, default_name=self._scope_base) as scope:
                self._scope, self._scope_name = scope, scope.name
                if self._dtype is None and isinstance(inputs, Tensor):
                    self._dtype = inputs.dtype
                shape = inputs.shape if isinstance(inputs, Tensor) else None
                self.build(shape)
                self.built = True
                return self.call(inputs, *args, **kwargs)
        with variable_scope(self._scope, reuse=True):
            return self.call(inputs, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<og.layers.{type(self).__name__} {self._name!r}>"


def _graph_of(inputs):
    for t in inputs if isinstance(inputs, (list, tuple)) else [inputs]:
        if isinstance(t, Tensor):
            return t.graph
        if hasattr(t, "graph") and isinstance(t.graph, _g.Graph):
            return t.graph
    return _g.get_default_graph()


def _unique_layer_name(base: str) -> str:
    """base, base_1, ... per default graph (TF1 numbers layers' names per graph)."""
    counts = _graph_attribute(_g.get_default_graph(), "_layer_names", dict)
    k = counts.get(base, 0)
    counts[base] = k + 1
    return base if k == 0 else f"{base}_{k}"


def _arguments(local: dict) -> dict:
    """A constructor's locals() less self and the Layer's own arguments."""
    return {k: v for k, v in local.items()
            if k not in ("self", "trainable", "name", "dtype", "__class__")}


_TUPLES = ("kernel_size", "strides", "dilation_rate", "pool_size")


class _Functional(Layer):
    """A layer whose build and call are one og.layers function (`_function`): the first
    call runs it in a new variable scope, later calls run it again with reuse=True in
    that scope."""

    _function = None          # the og.layers function, as a name in train/layers.py
    _spatial = None           # spatial axes of conv/pool inputs (None: Dense, BN, ...)
    _has_variables = True
    _takes_training = False

    def _setup(self, trainable, name, dtype, args: dict) -> None:
        super().__init__(trainable=trainable, name=name, dtype=dtype)
        self._args = dict(args)
        self._check_arguments()
        n = self._spatial or 1
        for key, value in args.items():
            if key in _TUPLES and value is not None:
                value = tuple(_nn._pair(value, key, n))
            elif key == "padding":
                value = value.lower()
            setattr(self, key, value)

    def _fn(self):
        return getattr(_fn, self._function)

    def _probe_shape(self) -> list:
        """A stand-in input's shape for checking the arguments: sizes unknown but the
        channels (1)."""
        if self._spatial is None:
            return [None, 1]
        if self._args.get("data_format") == "channels_first":
            return [None, 1] + [None] * self._spatial
        return [None] * (self._spatial + 1) + [1]

    def _fixed(self) -> dict:
        return {"trainable": self._trainable} if self._has_variables else {}

    def _check_arguments(self) -> None:
        """Build the functional form on a stand-in input in a private graph, the user's
        functions replaced by stand-ins and the initializers by the defaults (they are
        checked when the variables are made).

        Raises:
            What the functional form raises for these arguments.
        """
        probe = {}
        for key, value in self._args.items():
            if key.endswith("_initializer"):
                value = None
            elif (key == "activation" or key.endswith("_regularizer")) and callable(value):
                value = _ignore
            probe[key] = value
        with _g.Graph().as_default():
            x = api.placeholder(self._dtype or api.float32, self._probe_shape())
            self._fn()(x, **probe, **self._fixed())

    def _channel_axis(self, rank: int) -> int:
        if self._spatial is not None and self._args.get("data_format") == "channels_first":
            return 1
        return rank - 1

    def _check_inputs(self, x: Tensor) -> None:
        """Refuse inputs unlike the built ones.

        Raises:
            TypeError: their dtype differs from the layer's.
            ShapeError: their rank (fixed for all but Dense) or channel count differs
                from the built one.
        """
        if self._dtype is not None and x.dtype != self._dtype:
            raise TypeError(f"{self._name}: inputs {x.name!r} must be "
                            f"{self._dtype.short_name}, got {x.dtype.short_name}")
        if self._spec is None or x.shape is None:
            return
        rank, axis, channels = self._spec
        if rank is not None and len(x.shape) != rank:
            raise ShapeError(f"{self._name}: built for inputs of rank {rank}, got "
                             f"{x.name!r} of shape {list(x.shape)}")
        if len(x.shape) > 0:
            found = x.shape[axis if rank is not None else -1]
            if found is not None and found != channels:
                raise ShapeError(f"{self._name}: built for {channels} input channels "
                                 f"(axis {axis}), got {x.name!r} of shape "
                                 f"{list(x.shape)}")

    def _spec_of(self, x: Tensor):
        """(rank or None when any rank >= 2 goes, channel axis, channel count)."""
        rank = len(x.shape)
        axis = self._channel_axis(rank)
        return (None if self._spatial is None and self._function == "dense" else rank,
                axis, x.shape[axis])

    def _invoke(self, g, inputs, *args, **kwargs):
        if args:
            raise TypeError(f"{self._name}: takes the inputs and keyword arguments only, "
                            f"got {len(args)} more positional")
        training = kwargs.pop("training", False)
        if kwargs:
            raise TypeError(f"{self._name}: unexpected keyword argument "
                            f"{sorted(kwargs)[0]!r}")
        x = _g.convert_to_tensor(inputs)
        self._check_inputs(x)
        call = dict(self._args, **self._fixed())
        if self._takes_training:
            call["training"] = training
        fn = self._fn()
        if not self._has_variables:
            y = fn(x, **call, name=self._name)
            self.built = True
            return y
        if self.built:
            with variable_scope(self._parent, reuse=True, auxiliary_name_scope=False):
                return fn(x, **call, name=self._local, reuse=True)
        parent = _scopes(g).current
        local = _unique_scope_name(_scopes(g), self._scope_base)
        y = fn(x, **call, name=local)
        self._parent, self._local = parent, local
        self._scope_name = f"{parent.name}/{local}" if parent.name else local
        depth = self._scope_name.count("/") + 1
        self._variables = [v for v in g.get_collection(GLOBAL_VARIABLES)
                           if v.name.startswith(self._scope_name + "/")
                           and v.name.count("/") == depth]
        self._spec = self._spec_of(x)
        self._dtype = x.dtype
        self.built = True
        return y

    def _variable_named(self, name: str):
        """The layer's variable "<scope>/<name>" (None before the first call or when
        the layer has none of that name). Never raises."""
        for v in self._variables:
            if v.name == f"{self._scope_name}/{name}":
                return v
        return None


class _Kernel:
    """kernel and bias of Dense and the convolutions."""

    @property
    def kernel(self):
        """The kernel variable (None before the first call). Never raises."""
        return self._variable_named("kernel")

    @property
    def bias(self):
        """The bias variable (None before the first call or with use_bias=False).
        Never raises."""
        return self._variable_named("bias")


class Dense(_Kernel, _Functional):
    """Densely connected layer (tf.compat.v1.layers.Dense): outputs
    activation(inputs @ kernel + bias) over the last axis, with the variables
    "<scope>/kernel" (in, units) and "<scope>/bias" (units,) of og.layers.dense.
    Attributes: units, activation, use_bias, kernel, bias, ... (the arguments).

    Raises:
        TypeError: units is not an int, use_bias / trainable is not a bool, a function
            argument is not callable, name is not a str or dtype no floating dtype.
        ValueError: units is not > 0.
        OneGraphError: kernel_constraint or bias_constraint is set.
    """

    _base_name = _function = "dense"

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=zeros_initializer(), kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, dtype=None):
        self._setup(trainable, name, dtype, _arguments(locals()))


_CONV_RAISES = """
    Raises:
        TypeError: filters, kernel_size, strides or dilation_rate is not a positive int
            (or one per spatial axis), use_bias / trainable is not a bool, a function
            argument is not callable, name is not a str or dtype no floating dtype.
        ValueError: padding or data_format is unknown, or strides and dilation_rate
            are both above 1.
        OneGraphError: a constraint is set.
    """


class _Conv(_Kernel, _Functional):
    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, activation=None,
                 use_bias=True, kernel_initializer=None, bias_initializer=zeros_initializer(),
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 dtype=None):
        self._setup(trainable, name, dtype, _arguments(locals()))


class Conv1D(_Conv):
    __doc__ = """1-D convolution layer (tf.compat.v1.layers.Conv1D) of (batch, width, in)
    inputs ((batch, in, width) with channels_first), as og.layers.conv1d: variables
    "<scope>/kernel" (k, in, filters) and "<scope>/bias" (filters,). Attributes:
    filters, kernel_size, strides, padding, data_format, dilation_rate, kernel, bias.
    """ + _CONV_RAISES
    _base_name = _function = "conv1d"
    _spatial = 1


class Conv2D(_Conv):
    __doc__ = """2-D convolution layer (tf.compat.v1.layers.Conv2D) of NHWC inputs (NCHW
    with channels_first), as og.layers.conv2d: variables "<scope>/kernel" (kh, kw, in,
    filters) and "<scope>/bias" (filters,). Attributes: filters, kernel_size, strides,
    padding, data_format, dilation_rate, kernel, bias.
    """ + _CONV_RAISES
    _base_name = _function = "conv2d"
    _spatial = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer=None, bias_initializer=zeros_initializer(),
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 dtype=None):
        self._setup(trainable, name, dtype, _arguments(locals()))


class Conv3D(_Conv):
    __doc__ = """3-D convolution layer (tf.compat.v1.layers.Conv3D) of NDHWC inputs (NCDHW
    with channels_first), as og.layers.conv3d: variables "<scope>/kernel" (kd, kh, kw,
    in, filters) and "<scope>/bias" (filters,). Attributes: filters, kernel_size,
    strides, padding, data_format, dilation_rate, kernel, bias.
    """ + _CONV_RAISES
    _base_name = _function = "conv3d"
    _spatial = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1, 1), activation=None,
                 use_bias=True, kernel_initializer=None, bias_initializer=zeros_initializer(),
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 dtype=None):
        self._setup(trainable, name, dtype, _arguments(locals()))


_TRANSPOSE_RAISES = """
    Raises:
        TypeError: filters, kernel_size or strides is not a positive int (or one per
            spatial axis), use_bias / trainable is not a bool, a function argument is
            not callable, name is not a str or dtype no floating dtype.
        ValueError: padding or data_format is unknown.
        OneGraphError: a constraint is set.
    """


class Conv2DTranspose(_Kernel, _Functional):
    __doc__ = """Transposed 2-D convolution layer (tf.compat.v1.layers.Conv2DTranspose),
    as og.layers.conv2d_transpose: variables "<scope>/kernel" (kh, kw, filters, in) and
    "<scope>/bias" (filters,). Attributes: filters, kernel_size, strides, padding,
    data_format, kernel, bias.
    """ + _TRANSPOSE_RAISES
    _base_name = _function = "conv2d_transpose"
    _spatial = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=zeros_initializer(),
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 dtype=None):
        self._setup(trainable, name, dtype, _arguments(locals()))


class Conv3DTranspose(_Kernel, _Functional):
    __doc__ = """Transposed 3-D convolution layer (tf.compat.v1.layers.Conv3DTranspose),
    as og.layers.conv3d_transpose: variables "<scope>/kernel" (kd, kh, kw, filters, in)
    and "<scope>/bias" (filters,). Attributes: filters, kernel_size, strides, padding,
    data_format, kernel, bias.
    """ + _TRANSPOSE_RAISES
    _base_name = _function = "conv3d_transpose"
    _spatial = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format="channels_last", activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=zeros_initializer(),
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 dtype=None):
        self._setup(trainable, name, dtype, _arguments(locals()))


class _Separable(_Functional):
    _SEPARABLE_RAISES = """
    Raises:
        TypeError: filters, depth_multiplier, kernel_size, strides or dilation_rate is
            not a positive int (or one per spatial axis), use_bias / trainable is not a
            bool, a function argument is not callable, name is not a str or dtype no
            floating dtype.
        ValueError: padding or data_format is unknown, or strides and dilation_rate
            are both above 1.
        OneGraphError: a constraint is set.
    """

    @property
    def depthwise_kernel(self):
        """The depthwise kernel variable (None before the first call). Never raises."""
        return self._variable_named("depthwise_kernel")

    @property
    def pointwise_kernel(self):
        """The pointwise kernel variable (None before the first call). Never raises."""
        return self._variable_named("pointwise_kernel")

    @property
    def bias(self):
        """The bias variable (None before the first call or with use_bias=False).
        Never raises."""
        return self._variable_named("bias")


class SeparableConv1D(_Separable):
    __doc__ = """Depthwise-separable 1-D convolution layer
    (tf.compat.v1.layers.SeparableConv1D), as og.layers.separable_conv1d: variables
    "<scope>/depthwise_kernel" (k, in, depth_multiplier), "<scope>/pointwise_kernel"
    (1, in * depth_multiplier, filters) and "<scope>/bias" (filters,).
    """ + _Separable._SEPARABLE_RAISES
    _base_name = _function = "separable_conv1d"
    _spatial = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, depth_multiplier=1,
                 activation=None, use_bias=True, depthwise_initializer=None,
                 pointwise_initializer=None, bias_initializer=zeros_initializer(),
                 depthwise_regularizer=None, pointwise_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, trainable=True, name=None,
                 dtype=None):
        self._setup(trainable, name, dtype, _arguments(locals()))


class SeparableConv2D(_Separable):
    __doc__ = """Depthwise-separable 2-D convolution layer
    (tf.compat.v1.layers.SeparableConv2D), as og.layers.separable_conv2d: variables
    "<scope>/depthwise_kernel" (kh, kw, in, depth_multiplier),
    "<scope>/pointwise_kernel" (1, 1, in * depth_multiplier, filters) and
    "<scope>/bias" (filters,).
    """ + _Separable._SEPARABLE_RAISES
    _base_name = _function = "separable_conv2d"
    _spatial = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), depth_multiplier=1,
                 activation=None, use_bias=True, depthwise_initializer=None,
                 pointwise_initializer=None, bias_initializer=zeros_initializer(),
                 depthwise_regularizer=None, pointwise_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, trainable=True, name=None,
                 dtype=None):
        self._setup(trainable, name, dtype, _arguments(locals()))


class _Pooling(_Functional):
    _has_variables = False

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None):
        self._setup(True, name, None, _arguments(locals()))


def _pooling_doc(what: str, tf_name: str, fn: str, n: int) -> str:
    return f"""{what} over pool_size windows moved by strides
    (tf.compat.v1.layers.{tf_name}), as og.layers.{fn}; no variables. Attributes:
    pool_size, strides, padding, data_format.

    Raises:
        TypeError: pool_size or strides is not a positive int (or {n} of them), or name
            is not a str.
        ValueError: padding or data_format is unknown.
    """


class MaxPooling1D(_Pooling):
    __doc__ = _pooling_doc("Max", "MaxPooling1D", "max_pooling1d", 1)
    _base_name = _function = "max_pooling1d"
    _spatial = 1


class MaxPooling2D(_Pooling):
    __doc__ = _pooling_doc("Max", "MaxPooling2D", "max_pooling2d", 2)
    _base_name = _function = "max_pooling2d"
    _spatial = 2


class MaxPooling3D(_Pooling):
    __doc__ = _pooling_doc("Max", "MaxPooling3D", "max_pooling3d", 3)
    _base_name = _function = "max_pooling3d"
    _spatial = 3


class AveragePooling1D(_Pooling):
    __doc__ = _pooling_doc("Mean", "AveragePooling1D", "average_pooling1d", 1)
    _base_name = _function = "average_pooling1d"
    _spatial = 1


class AveragePooling2D(_Pooling):
    __doc__ = _pooling_doc("Mean", "AveragePooling2D", "average_pooling2d", 2)
    _base_name = _function = "average_pooling2d"
    _spatial = 2


class AveragePooling3D(_Pooling):
    __doc__ = _pooling_doc("Mean", "AveragePooling3D", "average_pooling3d", 3)
    _base_name = _function = "average_pooling3d"
    _spatial = 3


class Dropout(_Functional):
    """Dropout layer (tf.compat.v1.layers.Dropout): `layer(inputs, training=...)` zeroes
    each element with probability rate and scales the rest by 1 / (1 - rate) when
    training (a bool or a bool scalar tensor; default False, as TF1), as
    og.layers.dropout; no variables.

    Raises:
        ValueError: rate is not in [0, 1).
        TypeError: name is not a str.
        OneGraphError: noise_shape or seed is given (masks come from the Session's
            generator).
    """

    _base_name = _function = "dropout"
    _has_variables = False
    _takes_training = True

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None):
        self._setup(True, name, None, _arguments(locals()))


class Flatten(_Functional):
    """Flatten layer (tf.compat.v1.layers.Flatten): (batch, ...) -> (batch, prod(...)) in
    channels_last order, as og.layers.flatten; no variables.

    Raises:
        ValueError: data_format is unknown.
        TypeError: name is not a str.
    """

    _base_name = _function = "flatten"
    _has_variables = False

    def __init__(self, data_format="channels_last", name=None):
        self._setup(True, name, None, _arguments(locals()))


class BatchNormalization(_Functional):
    """Batch normalization layer (tf.compat.v1.layers.BatchNormalization), as
    og.layers.batch_normalization: `layer(inputs, training=...)` normalises with the
    batch statistics when training (a bool or a bool scalar tensor; default False) and
    adds the moving averages' updates to `updates` and og.UPDATE_OPS, else with the
    moving averages. Variables "<scope>/gamma", "beta", "moving_mean",
    "moving_variance"; attributes gamma, beta, moving_mean, moving_variance, axis,
    momentum, epsilon, center, scale.

    Raises:
        TypeError: axis is not an int, momentum or epsilon not a number, center /
            scale / trainable not a bool, a regularizer not callable, name not a str or
            dtype no floating dtype.
        OneGraphError: a constraint, renorm or its options, virtual_batch_size or
            adjustment is set.
    """

    _base_name = _function = "batch_normalization"
    _takes_training = True

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=zeros_initializer(), gamma_initializer=ones_initializer(),
                 moving_mean_initializer=zeros_initializer(),
                 moving_variance_initializer=ones_initializer(), beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None,
                 trainable=True, virtual_batch_size=None, adjustment=None, name=None,
                 dtype=None):
        self._setup(trainable, name, dtype, _arguments(locals()))

    def _probe_shape(self) -> list:
        axis = self._args["axis"]
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
            return [None, 1]
        rank = max(2, axis + 1 if axis >= 0 else -axis)
        shape = [None] * rank
        shape[axis] = 1
        return shape

    def _channel_axis(self, rank: int) -> int:
        return int(self._args["axis"]) % rank

    @property
    def gamma(self):
        """The scale variable (None before the first call or with scale=False).
        Never raises."""
        return self._variable_named("gamma")

    @property
    def beta(self):
        """The offset variable (None before the first call or with center=False).
        Never raises."""
        return self._variable_named("beta")

    @property
    def moving_mean(self):
        """The moving mean variable (None before the first call). Never raises."""
        return self._variable_named("moving_mean")

    @property
    def moving_variance(self):
        """The moving variance variable (None before the first call). Never raises."""
        return self._variable_named("moving_variance")


__all__ = ["AveragePooling1D", "AveragePooling2D", "AveragePooling3D", "BatchNormalization",
           "Conv1D", "Conv2D", "Conv2DTranspose", "Conv3D", "Conv3DTranspose", "Dense",
           "Dropout", "Flatten", "Layer", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D",
           "SeparableConv1D", "SeparableConv2D"]


# last: train/layers.py imports this module at its end, so either may be imported first
from . import layers as _fn  # noqa: E402
