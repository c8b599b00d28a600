"""TF1's tf.train.ExponentialMovingAverage: shadow variables holding moving averages of
variables or tensors, updated by the op `apply` returns:

    shadow -= (1 - decay) * (shadow - value)

with decay = min(decay, (1 + num_updates) / (10 + num_updates)) when num_updates is
given. As TF1:
- the shadow of a Variable is "<var>/<name>" ("w/ExponentialMovingAverage", made
  unique if taken), non-trainable, in GLOBAL_VARIABLES, and starts at the variable's
  value: a new Session holds the variable's initial value in it (as og's variables
  start initialised), and its initializer copies the variable's current value (TF1's
  `cond(is_variable_initialized(var), var.read_value, var.initial_value)`; for a
  variable with a tensor initial value, that tensor). The Variable itself, not its
  shadow, joins the graph's MOVING_AVERAGE_VARIABLES collection.
- the shadow of a tensor is "<op name>/<name>", starting at 0; with zero_debias=True
  it is debiased (Kingma et al. 2015) through two more variables, "<shadow>/biased"
  and "<shadow>/local_step": biased is the plain average starting at 0, and the
  shadow biased / (1 - decay^local_step). zero_debias has no effect on Variables.
- `variables_to_restore()` maps the shadows' names to the model's variables, so a
  Saver built from it loads the averages into the model (for evaluation).
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..errors import OneGraphError, ShapeError
from . import api
from . import graph as _g
from .graph import Graph, Tensor
from .api_compat import GraphKeys
from .optimizers import _number
from .variables import Variable, global_variables, trainable_variables

MOVING_AVERAGE_VARIABLES = GraphKeys.MOVING_AVERAGE_VARIABLES


def _is_float(dtype) -> bool:
    return dtype is not _g.DType.UNDEFINED and (dtype.numpy.kind == "f"
                                                or dtype.short_name == "bfloat16")


def _check_scalar_tensor(value, what: str, want_float: bool) -> Tensor:
    """A Tensor or Variable hyper-parameter as a tensor.

    Raises:
        TypeError: its dtype is not floating point (want_float) or not a number.
        ShapeError: its static shape is not a scalar.
    """
    t = _g.convert_to_tensor(value)
    if t.dtype is not _g.DType.UNDEFINED:
        kinds = "f" if want_float else "fiu"
        if t.dtype.numpy.kind not in kinds:
            raise TypeError(f"{what} must be a {'floating-point' if want_float else 'number'}"
                            f" tensor, got {t.dtype.short_name}")
    if t.shape is not None and len(t.shape) != 0:
        raise ShapeError(f"{what} must be a scalar, got shape {list(t.shape)}")
    return t


@contextlib.contextmanager
def _root(g: Graph):
    """Build at the root name scope, outside control dependencies and cond/while
    contexts (TF1's init_scope, where the shadows are made)."""
    with g.control_dependencies(None):
        saved = g._scope, g._cf_stack
        g._scope, g._cf_stack = [], []
        try:
            yield
        finally:
            g._scope, g._cf_stack = saved


def _next_unique(g: Graph, base: str) -> str:
    """The name g.unique_name would give `base` at the root scope now, without taking
    it (TF1's unique_name(mark_as_used=False)); Graph._unique itself would advance the
    graph's counter, so the next real name would skip one."""
    def taken(name):
        return name in g._used_names or g.ir_graph.find_tensor(name) is not None

    if not taken(base):
        return base
    k = g._name_counts.get(base, 0) + 1
    while taken(f"{base}_{k}"):
        k += 1
    return f"{base}_{k}"


class ExponentialMovingAverage:
    """Maintains moving averages of variables or tensors (TF1's
    tf.train.ExponentialMovingAverage; see the module doc).

    Args:
        decay: a number in [0, 1], or a floating-point scalar Tensor or Variable (cast
            to float32, as TF1 converts it).
        num_updates: None, a number >= 0, or a scalar number Tensor or Variable (usually
            the global step): the decay is then min(decay, (1 + n) / (10 + n)).
        zero_debias: debias the averages of tensors (not Variables), as TF1.
        name: the shadows' name suffix and the update ops' name scope.

    Example::

        ema = og.train.ExponentialMovingAverage(0.999, num_updates=step)
        with og.control_dependencies([train_op]):
            train_and_average = ema.apply([w, b])
        ...
        saver = og.train.Saver(ema.variables_to_restore())   # for evaluation

    Raises:
        TypeError: decay or num_updates is not a number or a number tensor (decay: a
            floating-point one), zero_debias is not a bool, or name is not a non-empty
            str.
        ValueError: decay (a number) is outside [0, 1] (TF1 checks none; outside it
            the average diverges), or num_updates (a number) negative, NaN or infinite.
        ShapeError: decay or num_updates is a tensor that is not a scalar.
    """

    def __init__(self, decay, num_updates=None, zero_debias=False,
                 name="ExponentialMovingAverage"):
        what = "ExponentialMovingAverage"
        if _g._is_symbolic(decay):
            _check_scalar_tensor(decay, f"{what}: decay", want_float=True)
        else:
            decay = _number(decay, f"{what}: decay", 0.0, 1.0)
        if num_updates is not None:
            if _g._is_symbolic(num_updates):
                _check_scalar_tensor(num_updates, f"{what}: num_updates", want_float=False)
            else:
                num_updates = _number(num_updates, f"{what}: num_updates", lo=0.0)
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = api._bool_arg(zero_debias, f"{what}: zero_debias")
        if not isinstance(name, str) or not name:
            raise TypeError(f"{what}: name must be a non-empty str, got {name!r}")
        self._name = name
        # averaged item (a Variable or Tensor, which hash by identity) -> its shadow
        self._averages: dict = {}

    @property
    def name(self) -> str:
        """The name given (the shadows' suffix and the update ops' name scope)."""
        return self._name

    # -- shadows ------------------------------------------------------------------------

    @staticmethod
    def _check_item(item, where: str):
        """Raises TypeError unless item is a Variable or Tensor."""
        if not isinstance(item, (Variable, Tensor)):
            raise TypeError(f"ExponentialMovingAverage.{where}: expected a Variable or "
                            f"Tensor, got {type(item).__name__} {_g._brief(item)}")

    @staticmethod
    def _prefix(item) -> str:
        """TF1's slot name prefix: the variable's name, or the tensor's op's name."""
        if isinstance(item, Variable):
            return item.name
        op = item.op
        return item.name if op is None else op.name

    def _make_shadow(self, item, g: Graph) -> Variable:
        name = f"{self._prefix(item)}/{self._name}"
        with _root(g):
            if isinstance(item, Variable):
                data = g.ir_graph.tensors[item.handle.tensor_index].data
                if data is None:
                    # a tensor-initialised variable: the tensor its initializer assigns
                    shadow = Variable(item.initial_value, trainable=False, name=name, graph=g)
                else:
                    read = g.op("ReadVariable", [item.handle], name=f"{item.name}/read")
                    shadow = Variable(read, trainable=False, name=name, graph=g)
                    # a new Session holds the variable's initial value in the shadow too
                    # (a tensor-valued initial value alone would leave it uninitialised)
                    g.ir_graph.tensors[shadow.handle.tensor_index].data = np.array(data)
                g.add_to_collection(MOVING_AVERAGE_VARIABLES, item)
            else:
                shape = item.shape
                if shape is None or any(d is None for d in shape):
                    raise ShapeError(f"ExponentialMovingAverage.apply: tensor {item.name!r} "
                                     f"needs a fully known shape, got "
                                     f"{None if shape is None else list(shape)}")
                shadow = Variable(np.zeros(shape, item.dtype.numpy), trainable=False,
                                  name=name, graph=g)
        return shadow

    # -- updates -------------------------------------------------------------------------

    def _decay_tensor(self, g: Graph) -> Tensor:
        decay = _g.convert_to_tensor(self._decay, api.float32, g)
        decay = api.identity(api.cast(decay, api.float32) if decay.dtype != api.float32
                             else decay, name="decay")
        if self._num_updates is not None:
            n = _g.convert_to_tensor(self._num_updates, api.float32, g)
            n = api.cast(n, api.float32, name="num_updates")
            decay = api.minimum(decay, (1.0 + n) / (10.0 + n))
        return decay

    def _debiased_update(self, shadow: Variable, value, one_minus, g: Graph) -> Tensor:
        """Update the biased average and the step count, and set the shadow to
        biased / (1 - decay^step) (TF1's _zero_debias; new variables on each apply, as
        TF1's)."""
        dt = shadow.dtype.numpy
        with _root(g):
            biased = Variable(np.zeros(shadow.shape, dt), trainable=False,
                              name=f"{shadow.name}/biased", graph=g)
            local_step = Variable(np.zeros((), dt), trainable=False,
                                  name=f"{shadow.name}/local_step", graph=g)
        update_biased = biased.assign_sub((biased.read_value() - value) * one_minus)
        update_step = local_step.assign_add(np.ones((), dt))
        # TF1 is given 1 - decay and takes 1 - (1 - decay) as the base
        one = g.constant(np.ones((), dt))
        bias_factor = one - api.pow(one - one_minus, update_step)
        return shadow.assign(update_biased / bias_factor)

    def apply(self, var_list=None):
        """Create the shadows of the items not averaged yet (on first use) and return
        one op updating every item's average from its current value (TF1's
        `apply`). The items' values are read when the op runs, after any enclosing
        `og.control_dependencies` (wrap the call in one to average after a train step).

        Args:
            var_list: Variables and tensors (default: the default graph's trainable
                variables), all of one graph.

        Returns:
            The update `Operation` (named after the EMA's name scope).

        Raises:
            TypeError: var_list is not a list, or holds something other than a Variable
                or Tensor, or one whose dtype is not floating point (TF1: "The
                variables must be half, float, or double").
            ShapeError: a tensor's shape is not fully known.
            OneGraphError: the items belong to different graphs.
        """
        if var_list is None:
            var_list = trainable_variables()
        if isinstance(var_list, (Variable, Tensor, str, bytes)) or not hasattr(
                var_list, "__iter__"):
            raise TypeError(f"ExponentialMovingAverage.apply: var_list must be a list of "
                            f"Variables or Tensors, got {type(var_list).__name__}")
        var_list = list(var_list)
        for item in var_list:
            self._check_item(item, "apply")
            if not _is_float(item.dtype):
                raise TypeError(f"The variables must be half, float, or double: "
                                f"{item.name} is {item.dtype.short_name}")
        g = var_list[0].graph if var_list else _g.get_default_graph()
        for item in var_list:
            if item.graph is not g:
                raise OneGraphError(f"ExponentialMovingAverage.apply: {item.name!r} "
                                       f"belongs to another graph than "
                                       f"{var_list[0].name!r}")
        for item in var_list:
            if item not in self._averages:
                self._averages[item] = self._make_shadow(item, g)
        with g.name_scope(self._name) as scope:
            decay = self._decay_tensor(g)
            updates = []
            for item in var_list:
                shadow = self._averages[item]
                with g.name_scope("AssignMovingAvg"):
                    one_minus = 1.0 - decay
                    if shadow.dtype != one_minus.dtype:
                        one_minus = api.cast(one_minus, shadow.dtype)
                    value = _g.convert_to_tensor(item)
                    if self._zero_debias and isinstance(item, Tensor):
                        updates.append(self._debiased_update(shadow, value, one_minus, g))
                    else:
                        updates.append(shadow.assign_sub(
                            (shadow.read_value() - value) * one_minus))
            return g.op("NoOp", [], name=scope.rstrip("/").rsplit("/", 1)[-1],
                        control_inputs=updates)

    # -- lookups -------------------------------------------------------------------------

    def average(self, var):
        """The shadow Variable holding the average of `var`, or None if `var` is not
        averaged (TF1's `average`).

        Raises:
            TypeError: var is not a Variable or Tensor.
        """
        self._check_item(var, "average")
        return self._averages.get(var)

    def average_name(self, var) -> str:
        """The name of the shadow of `var`: its shadow's name once averaged, else the
        name `apply` would give it now (TF1's `average_name`, for a Saver dict such as
        {ema.average_name(w): w}).

        Raises:
            TypeError: var is not a Variable or Tensor.
        """
        self._check_item(var, "average_name")
        shadow = self._averages.get(var)
        if shadow is not None:
            return shadow.name
        return _next_unique(var.graph, f"{self._prefix(var)}/{self._name}")

    def variables_to_restore(self, moving_avg_variables=None) -> dict:
        """{name in the checkpoint: Variable} for a Saver that loads the moving averages
        into the model's variables (TF1's `variables_to_restore`): each of
        `moving_avg_variables` under its shadow's name (`average_name`), and every other
        global variable of the graph under its own name, except those whose name is
        already a key (the shadows themselves).

        Args:
            moving_avg_variables: the variables to restore from their averages; default
                the graph's trainable variables and its MOVING_AVERAGE_VARIABLES.

        Raises:
            TypeError: moving_avg_variables is not a list of Variables or Tensors.
        """
        if moving_avg_variables is not None and (
                isinstance(moving_avg_variables, (Variable, Tensor, str, bytes))
                or not hasattr(moving_avg_variables, "__iter__")):
            raise TypeError("ExponentialMovingAverage.variables_to_restore: "
                            "moving_avg_variables must be a list of Variables, got "
                            f"{type(moving_avg_variables).__name__}")
        if moving_avg_variables is not None:
            moving = list(moving_avg_variables)
            for v in moving:
                self._check_item(v, "variables_to_restore")
            g = moving[0].graph if moving else self._graph()
        else:
            g = self._graph()
            moving = trainable_variables(graph=g) + g.get_collection(MOVING_AVERAGE_VARIABLES)
        unique = list({id(v): v for v in moving}.values())
        name_map = {self.average_name(v): v for v in unique}
        averaged_names = {v.name for v in unique}
        for v in global_variables(graph=g):
            if v.name not in averaged_names and v.name not in name_map:
                name_map[v.name] = v
        return name_map

    def _graph(self) -> Graph:
        """The graph of the averaged items, else the default graph."""
        for item in self._averages:
            return item.graph
        return _g.get_default_graph()


__all__ = ["ExponentialMovingAverage", "MOVING_AVERAGE_VARIABLES"]
