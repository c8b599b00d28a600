"""TF1's global-step helpers (tf.compat.v1.train.get_global_step, create_global_step,
assert_global_step, global_step) on top of `variables.get_or_create_global_step`.

As TF1's, the lookup first takes the graph's GLOBAL_STEP collection (when it holds
exactly one item) and, when the collection is empty, whatever is named "global_step"
in the graph (a Variable made with that name but outside the collection counts, as in
TF1). A collection holding several items means there is no usable global step: None,
as TF1 (which also logs an error).
"""

from __future__ import annotations

import numpy as np

from . import graph as _g
from .graph import Graph, Tensor
from .variables import Variable, get_or_create_global_step


def assert_global_step(global_step_tensor) -> None:
    """Check that `global_step_tensor` can be a global step: a Variable or Tensor of an
    integer dtype that is a scalar (or of unknown shape), TF1's rules.

    Raises:
        TypeError: it is not a Variable or Tensor, its dtype is not an integer one, or
            its shape is fully known and not a scalar (TF1 raises TypeError for all
            three, and so does this, so TF1 code catching it keeps working).
    """
    if not isinstance(global_step_tensor, (Variable, Tensor)):
        raise TypeError(f'Existing "global_step" must be a Variable or Tensor: '
                        f"{type(global_step_tensor).__name__} "
                        f"{_g._brief(global_step_tensor)}")
    dtype = global_step_tensor.dtype
    if dtype is _g.DType.UNDEFINED or dtype.numpy.kind not in "iu":
        raise TypeError(f'Existing "global_step" does not have integer type: '
                        f"{dtype.short_name}")
    shape = global_step_tensor.shape
    if shape is not None and len(shape) != 0 and all(d is not None for d in shape):
        raise TypeError(f'Existing "global_step" is not scalar: {list(shape)}')


def _named_global_step(graph: Graph):
    """What the graph calls "global_step" (TF1's get_tensor_by_name('global_step:0')):
    the Variable when it is a variable's own tensor, else the tensor; None if nothing."""
    try:
        t = graph.get_tensor_by_name("global_step:0")
    except KeyError:
        return None
    return graph._variables_by_handle.get(t.tensor_index, t)


def get_global_step(graph: Graph | None = None):
    """The global step of `graph` (default: the default graph), or None when it has
    none (TF1's tf.compat.v1.train.get_global_step): the single item of the
    GLOBAL_STEP collection, else what is named "global_step"; None also when the
    collection holds several items.

    Raises:
        TypeError: graph is not an og.Graph, or the global step found is not a scalar
            integer Variable or Tensor (see `assert_global_step`).
    """
    _g.check_graph(graph, "get_global_step")
    g = graph or _g.get_default_graph()
    found = g.get_collection(_g.GLOBAL_STEP)
    if len(found) > 1:
        return None
    step = found[0] if found else _named_global_step(g)
    if step is None:
        return None
    assert_global_step(step)
    return step


def create_global_step(graph: Graph | None = None) -> Variable:
    """Create the global step of `graph` (default: the default graph): an int64 scalar
    Variable named "global_step" starting at 0, not trainable, in GLOBAL_VARIABLES and
    GLOBAL_STEP, made at the root name scope (TF1's tf.compat.v1.train.create_global_step).

    Raises:
        TypeError: graph is not an og.Graph.
        ValueError: the graph already has a global step (TF1's '"global_step" already
            exists.').
    """
    _g.check_graph(graph, "create_global_step")
    g = graph or _g.get_default_graph()
    if get_global_step(g) is not None:
        raise ValueError('"global_step" already exists.')
    if g.get_collection(_g.GLOBAL_STEP):
        # several items: TF1 would add another; refusing is clearer than a third
        raise ValueError('"global_step" already exists (the GLOBAL_STEP collection '
                         "holds several items)")
    return get_or_create_global_step(g)


def global_step(sess, global_step_tensor) -> int:
    """The value of the global step in `sess`, as a Python int (TF1's
    tf.compat.v1.train.global_step). The step may also be given by name.

    Raises:
        TypeError: sess has no `run` method (is not a Session).
        OneGraphError: the name is not a tensor of the session's graph.
        ExecutionError: the step cannot be computed (e.g. not initialised).
    """
    if not callable(getattr(sess, "run", None)):
        raise TypeError(f"global_step: sess must be an og.Session, got "
                        f"{type(sess).__name__}")
    return int(np.asarray(sess.run(global_step_tensor)))


__all__ = ["assert_global_step", "create_global_step", "get_global_step", "global_step"]
