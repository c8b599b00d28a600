"""TF1's variable sharing: `variable_scope`, `get_variable`, `get_variable_scope` and
`AUTO_REUSE`.

`get_variable("w", shape)` creates the variable "<variable scope>/w" or, in a reusing
scope, returns the one created before, so two towers built from the same code share
their weights::

    def tower(x):
        w = og.get_variable("w", [4, 2])
        return x @ w

    with og.variable_scope("model"):
        a = tower(x1)
    with og.variable_scope("model", reuse=True):
        b = tower(x2)                  # uses model/w too

The variables are ordinary og.Variables (in GLOBAL_VARIABLES and, when trainable,
TRAINABLE_VARIABLES), so optimizers, savers and og.gradients treat them like any
other. Their names depend on the variable scope only; ops created inside a
variable_scope also get a name scope, uniquified as og.name_scope does, so the second
entry of scope "model" names its ops "model_1/..." while its variables stay "model/...".

Each graph keeps its variables by name (shared by all threads) and, per thread, its
current variable scope, as TF1 does.
"""

from __future__ import annotations

import contextlib
import enum
import inspect
import os
import threading
import traceback


from ..format import DType
from ..errors import OneGraphError
from . import api
from . import graph as _g
from . import initializers as _init
from .graph import Graph, Tensor
from .variables import Variable


class _ReuseMode(enum.Enum):
    """Reuse modes beyond True/False (TF1's _ReuseMode)."""

    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE
"""reuse=og.AUTO_REUSE: get_variable creates the variable if it does not exist and
returns it if it does."""

# Frames of this package are left out of "Originally defined at" (TF1 leaves out its
# own): the user wants the line of their code that created the variable.
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_TRACE_FRAMES = 5


class VariableScope:
    """The defaults get_variable uses in a scope: its name prefix, reuse mode,
    initializer and dtype. `with og.variable_scope(...) as scope` gives one; entering
    `og.variable_scope(scope)` later (even inside another scope) goes back to it.

    Attributes:
        name: the prefix of variable names ("" for the root scope).
        original_name_scope: the op name scope opened when the scope was made.
        reuse: False, True or og.AUTO_REUSE.
        initializer: default initializer of get_variable (None: by dtype).
        dtype: default dtype of get_variable.
    """

    def __init__(self, reuse, name: str = "", initializer=None, name_scope: str = "",
                 dtype=DType.FLOAT32):
        self._reuse = reuse
        self._name = name
        self._initializer = initializer
        self._name_scope = name_scope
        self._dtype = dtype

    @property
    def name(self) -> str:
        """The prefix of variable names ("" for the root scope)."""
        return self._name

    @property
    def original_name_scope(self) -> str:
        """The op name scope opened when the scope was made ("a/")."""
        return self._name_scope

    @property
    def reuse(self):
        """False, True or og.AUTO_REUSE."""
        return self._reuse

    @property
    def initializer(self):
        """The default initializer of get_variable (None: by dtype)."""
        return self._initializer

    @property
    def dtype(self):
        """The default dtype of get_variable."""
        return self._dtype

    def reuse_variables(self) -> None:
        """Make get_variable in this scope (from now on) return existing variables.
        Never raises."""
        self._reuse = True

    def set_initializer(self, initializer) -> None:
        """Set the scope's default initializer. Never raises."""
        self._initializer = initializer

    def set_dtype(self, dtype) -> None:
        """Set the scope's default dtype.

        Raises:
            TypeError: dtype names no dtype.
        """
        self._dtype = _as_dtype(dtype, "VariableScope.set_dtype")

    def get_collection(self, name) -> list:
        """The items of the default graph's collection `name` whose names start with
        this scope's prefix ("scope/"; everything for the root scope).

        Raises:
            TypeError: name is not hashable.
        """
        prefix = f"{self._name}/" if self._name else ""
        return [v for v in _g.get_default_graph().get_collection(name)
                if getattr(v, "name", "").startswith(prefix)]

    def global_variables(self) -> list:
        """This scope's variables (GLOBAL_VARIABLES under its prefix). Never raises."""
        return self.get_collection(_g.GLOBAL_VARIABLES)

    def trainable_variables(self) -> list:
        """This scope's trainable variables. Never raises."""
        return self.get_collection(_g.TRAINABLE_VARIABLES)

    def __repr__(self) -> str:
        return f"<og.VariableScope {self._name!r} reuse={self._reuse}>"


class _ThreadScopes(threading.local):
    """One thread's current variable scope and how often each scope name was
    opened (for default_name uniquification), in one graph."""

    def __init__(self):
        super().__init__()
        self.current = VariableScope(False)
        self.counts: dict[str, int] = {}


_lazy_lock = threading.Lock()


def _graph_attribute(g: Graph, attr: str, make):
    """g's attribute `attr`, set to make() on first use (once, whatever the threads)."""
    found = getattr(g, attr, None)
    if found is None:
        with _lazy_lock:
            found = getattr(g, attr, None)
            if found is None:
                found = make()
                setattr(g, attr, found)
    return found


def _scopes(g: Graph) -> _ThreadScopes:
    return _graph_attribute(g, "_var_scopes", _ThreadScopes)


def _store(g: Graph) -> dict:
    """name -> (Variable, creation traceback) of the variables get_variable made."""
    return _graph_attribute(g, "_var_store", dict)


def get_variable_scope() -> VariableScope:
    """The current variable scope of the default graph in this thread (the root scope,
    named "", outside any variable_scope). Never raises."""
    return _scopes(_g.get_default_graph()).current


# --------------------------------------------------------------------------- scopes

class variable_scope:  # noqa: N801 - TF1's name
    """A context manager opening a variable scope (and a name scope for ops), as
    tf.variable_scope. The same object may be entered again (TF1 allows it): later
    entries go back to the variable scope its first entry opened.

    Args:
        name_or_scope: a str, appended to the current variable scope's name, or a
            VariableScope to go back to (its name is used as is, wherever this is
            entered; its reuse, initializer and dtype apply unless given here).
        default_name: used when name_or_scope is None, made unique among the
            scopes opened in the current one ("dense", "dense_1", ...).
        values: tensors the ops will use: their graph is made the default inside.
        initializer: default initializer of get_variable inside.
        reuse: True (get_variable returns existing variables, refuses new ones),
            og.AUTO_REUSE (returns them or creates them), or None/False (inherit the
            enclosing scope's; a VariableScope keeps its own).
        dtype: default dtype of get_variable inside (else inherited).
        auxiliary_name_scope: False opens no name scope for ops.

    The `with` block gets the VariableScope. The name scope is the str (or the last
    part of the VariableScope's name), uniquified: entering "model" twice gives op
    names "model/..." then "model_1/...".

    Raises:
        TypeError: name_or_scope and default_name are both None, name_or_scope is
            not a str or VariableScope, default_name not a str, values not a list,
            auxiliary_name_scope not a bool, or dtype names no dtype.
        ValueError: reuse is not True, False, None or og.AUTO_REUSE; reuse is set
            without a name_or_scope; or values come from different graphs.
        RuntimeError: (on exit) scopes were exited out of order.
    """

    def __init__(self, name_or_scope, default_name: str | None = None, values=None,
                 initializer=None, reuse=None, dtype=None,
                 auxiliary_name_scope: bool = True):
        _check_scope_args(name_or_scope, default_name, auxiliary_name_scope)
        if reuse is False:
            reuse = None  # TF1: False means inherit, like None
        if not (reuse is None or reuse is True or reuse is AUTO_REUSE):
            raise ValueError(f"variable_scope: reuse must be True, False, None or "
                             f"og.AUTO_REUSE, got {_g._brief(reuse)}")
        if name_or_scope is None and reuse is not None:
            raise ValueError("variable_scope: reuse=True cannot be used without a "
                             "name_or_scope")
        if dtype is not None:
            dtype = _as_dtype(dtype, "variable_scope")
        self._args = (_graph_of_values(values), name_or_scope, default_name, initializer,
                      reuse, dtype, auxiliary_name_scope)
        self._first = None  # the VariableScope of the first entry
        self._open: list = []  # the entries not exited yet, innermost last

    def __enter__(self) -> "VariableScope":
        g, name_or_scope, default_name, initializer, reuse, dtype, aux = self._args
        if self._first is not None:
            name_or_scope = self._first
        entry = _entered(g, name_or_scope, default_name, initializer, reuse, dtype, aux)
        scope = entry.__enter__()
        self._open.append(entry)
        if self._first is None:
            self._first = scope
        return scope

    def __exit__(self, exc_type, exc, tb):
        return self._open.pop().__exit__(exc_type, exc, tb)



def _check_scope_args(name_or_scope, default_name, auxiliary_name_scope) -> None:
    """Refuse arguments of variable_scope of the wrong type.

    Raises:
        TypeError: as variable_scope says.
    """
    if name_or_scope is None and default_name is None:
        raise TypeError("variable_scope: if default_name is None then name_or_scope is "
                        "required")
    if name_or_scope is not None and not isinstance(name_or_scope, (str, VariableScope)):
        raise TypeError(f"variable_scope: name_or_scope must be a str or a "
                        f"VariableScope, got {type(name_or_scope).__name__}")
    if default_name is not None and not isinstance(default_name, str):
        raise TypeError(f"variable_scope: default_name must be a str or None, got "
                        f"{type(default_name).__name__}")
    if not isinstance(auxiliary_name_scope, bool):
        raise TypeError(f"variable_scope: auxiliary_name_scope must be True or False, "
                        f"got {_g._brief(auxiliary_name_scope)}")


def _graph_of_values(values) -> Graph:
    """The graph of the tensors and variables in `values` (default graph if none).

    Raises:
        TypeError: values is not a list or tuple (or None).
        ValueError: they belong to different graphs.
    """
    if values is None:
        return _g.get_default_graph()
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"variable_scope: values must be a list of tensors, got "
                        f"{type(values).__name__}")
    graphs = {id(v.graph): v.graph for v in values
              if isinstance(v, (Tensor, Variable))}
    if len(graphs) > 1:
        raise ValueError("variable_scope: values must be from the same graph")
    return next(iter(graphs.values())) if graphs else _g.get_default_graph()


@contextlib.contextmanager
def _entered(g: Graph, name_or_scope, default_name, initializer, reuse, dtype,
             auxiliary_name_scope: bool):
    """The body of variable_scope: default graph, name scope, then variable scope."""
    if isinstance(name_or_scope, VariableScope):
        ops_name = name_or_scope.name.split("/")[-1]
    else:
        ops_name = default_name if name_or_scope is None else name_or_scope
    with g.as_default(), _ops_name_scope(g, ops_name, auxiliary_name_scope) as opened:
        scopes = _scopes(g)
        if isinstance(name_or_scope, VariableScope):
            inner = _jump_to(scopes, name_or_scope, initializer, reuse, dtype)
        else:
            if name_or_scope is None:
                name_or_scope = _unique_scope_name(scopes, default_name)
            original = name_or_scope if opened is None else opened
            inner = _prolong(scopes, name_or_scope, original, initializer, reuse, dtype)
        with inner as scope:
            yield scope


@contextlib.contextmanager
def _ops_name_scope(g: Graph, name: str, auxiliary: bool):
    """The name scope for ops: `name` uniquified (yields its "a/b/" form), the current
    one when not auxiliary, or none (yields None) for an empty name."""
    if not auxiliary:
        yield "/".join(g._scope) + "/" if g._scope else ""
    elif not name:
        yield None
    else:
        with g.name_scope(name) as full:
            yield full


def _unique_scope_name(scopes: _ThreadScopes, prefix: str) -> str:
    """`prefix`, or prefix_N, unopened so far in the current variable scope (TF1's
    counts restart when the enclosing scope is left, see `_prolong`)."""
    parent = scopes.current.name
    full = f"{parent}/{prefix}" if parent else prefix
    if scopes.counts.get(full, 0) == 0:
        return prefix
    k = 1
    while scopes.counts.get(f"{full}_{k}", 0) > 0:
        k += 1
    return f"{prefix}_{k}"


@contextlib.contextmanager
def _prolong(scopes: _ThreadScopes, name: str, original_name_scope: str, initializer,
             reuse, dtype):
    """A sub-scope `name` of the current scope: inherits its reuse (unless given),
    initializer and dtype."""
    old = scopes.current
    full = f"{old.name}/{name}" if old.name else name
    scope = VariableScope(reuse or old.reuse, full, old.initializer, original_name_scope,
                          old.dtype)
    _override(scope, initializer, dtype)
    scopes.counts[full] = scopes.counts.get(full, 0) + 1
    scopes.current = scope
    try:
        yield scope
    finally:
        misnested = scopes.current is not scope
        # default names inside restart when this scope is entered again (TF1)
        for key in scopes.counts:
            if key.startswith(full + "/"):
                scopes.counts[key] = 0
        scopes.current = old
    _check_nesting(misnested)


@contextlib.contextmanager
def _jump_to(scopes: _ThreadScopes, target: VariableScope, initializer, reuse, dtype):
    """Back into a captured scope: a copy of it with the given overrides; its own
    reuse stands unless reuse is given (the enclosing scope's is not inherited)."""
    old = scopes.current
    scope = VariableScope(reuse or target.reuse, target.name, target.initializer,
                          target.original_name_scope, target.dtype)
    _override(scope, initializer, dtype)
    scopes.counts[target.name] = scopes.counts.get(target.name, 0) + 1
    saved_counts = dict(scopes.counts)
    scopes.current = scope
    try:
        yield scope
    finally:
        misnested = scopes.current is not scope
        scopes.counts = saved_counts
        scopes.current = old
    _check_nesting(misnested)


def _override(scope: VariableScope, initializer, dtype) -> None:
    """Apply variable_scope's initializer and dtype arguments when given."""
    if initializer is not None:
        scope.set_initializer(initializer)
    if dtype is not None:
        scope.set_dtype(dtype)


def _check_nesting(misnested: bool) -> None:
    """Raises RuntimeError when a scope was left while one opened inside it was
    still open (only reachable by calling __enter__/__exit__ by hand)."""
    if misnested:
        raise RuntimeError("variable_scope: improper nesting of variable_scope (a scope "
                           "was exited while a scope opened inside it was still open)")


# --------------------------------------------------------------------------- variables

def get_variable(name: str, shape=None, dtype=None, initializer=None, trainable=None,
                 collections=None) -> Variable:
    """The variable "<current variable scope>/<name>": created, or with reuse
    returned, as tf.get_variable.

    Args:
        name: the variable's name within the scope.
        shape: its shape (a list of ints; must be fully known to create it, unless
            the initializer is a value or takes no arguments). On reuse, None
            accepts any shape.
        dtype: default: the scope's (float32 unless set).
        initializer: a callable `init(shape, dtype=..., partition_info=...)` (an
            og initializer, or its class), a value (array-like or Tensor; then
            shape must be None and the variable takes the value's shape), or None
            for the scope's initializer, else glorot_uniform for floats and zeros
            for integers, bools and strings.
        trainable: add it to TRAINABLE_VARIABLES too (default True).
        collections: collections to add it to (default [GLOBAL_VARIABLES];
            TRAINABLE_VARIABLES is added when trainable).

    Reuse follows the scope: False refuses an existing name, True refuses a new
    one, og.AUTO_REUSE does either. A returned variable must agree with the given
    shape and dtype.

    Raises:
        ValueError: "Variable scope/w already exists, disallowed. Did you mean to set
            reuse=True or reuse=og.AUTO_REUSE in VarScope? ..." (creating twice
            without reuse); "Variable scope/w does not exist, or was not created
            with og.get_variable(). ..." (reuse=True); "Trying to share variable
            scope/w, but specified shape (3, 4) and found shape (2, 4)." (or dtype);
            "If initializer is a constant, do not specify shape."; "Initializer type
            'float64' and explicit dtype 'float32' don't match."; "Shape of a new
            variable (scope/w) must be fully defined, but instead was (?, 4)."; an
            empty name; a dtype with no default initializer (complex...); and what
            the initializer raises for its arguments.
        TypeError: name is not a str, shape not a list of ints, dtype names no
            dtype, trainable not a bool, or collections not a list.
        ShapeError: a dim of shape is negative.
        OneGraphError: the initializer's value does not fit dtype (a fraction for
            an integer variable...).
    """
    _check_variable_name(name)
    dims = _g._shape_tuple(shape, "get_variable: shape")
    trainable = True if trainable is None else api._bool_arg(trainable,
                                                             "get_variable: trainable")
    collections = _collections(collections, trainable)
    g = _g.get_default_graph()
    scope = _scopes(g).current
    full = f"{scope.name}/{name}" if scope.name else name
    if dtype is not None:
        dtype = _as_dtype(dtype, "get_variable")
        if initializer is not None and not callable(initializer):
            if _plain_python(initializer):
                # Python numbers have no dtype of their own (TF1 reads an int as
                # int32, og.constant as int64): they take the explicit one if they fit
                try:
                    initializer = _g._as_array(initializer, dtype)
                except OneGraphError as e:
                    raise _g._named(e, f"get_variable {name!r}: initializer") from None
            else:
                _check_value_dtype(initializer, dtype)
    if initializer is None:
        initializer = scope.initializer
    _check_not_in_control_flow(g, initializer, full)
    dt = _as_dtype(scope.dtype, "get_variable") if dtype is None else dtype
    if dims is not None and initializer is not None and not callable(initializer):
        raise ValueError("If initializer is a constant, do not specify shape.")
    with g._lock:  # one thread's check-then-create must not interleave another's
        found = _store(g).get(full)
        if found is not None:
            return _reused(found, full, scope.reuse, dims, dt)
        if scope.reuse is True:
            raise ValueError(f"Variable {full} does not exist, or was not created with "
                             "og.get_variable(). Did you mean to set "
                             "reuse=og.AUTO_REUSE in VarScope?")
        var = _create(g, full, dims, dt, initializer, trainable, collections)
        _store(g)[full] = (var, _origin())
    return var


def _check_not_in_control_flow(g: Graph, initializer, full: str) -> None:
    """Refuse, before anything is made, a tensor initial value computed inside an
    og.cond branch or og.while_loop body: the variable's initializer runs outside it,
    where that value does not exist (TF1's error).

    Raises:
        ValueError: it is such a tensor.
    """
    if not isinstance(initializer, Tensor):
        return
    op = initializer.op
    if op is not None and g._node_context.get(op.node_index) is not None:
        raise ValueError(f"Initializer for variable {full} is from inside a control-flow "
                         "construct, such as a loop or conditional. When creating a "
                         "variable inside a loop or conditional, use a lambda as the "
                         "initializer.")


def _as_dtype(dtype, what: str) -> DType:
    """dtype as a DType; TypeError naming `what` when it names none (TF1's error)."""
    try:
        return _g.as_dtype(dtype)
    except OneGraphError as e:
        raise TypeError(f"{what}: dtype: {e}") from None


def _check_variable_name(name) -> None:
    """Raises TypeError for a name that is not a str, ValueError for an empty one."""
    if not isinstance(name, str):
        raise TypeError(f"get_variable: name must be a str, got {type(name).__name__} "
                        f"{_g._brief(name)}")
    if not name:
        raise ValueError("get_variable: name must not be empty")


def _collections(collections, trainable: bool) -> list:
    """The collections of a new variable, as TF1: [GLOBAL_VARIABLES] by default, plus
    TRAINABLE_VARIABLES when trainable.

    Raises:
        TypeError: collections is not a list, tuple or set (or None), or holds an
            unhashable key.
    """
    if collections is None:
        collections = [_g.GLOBAL_VARIABLES]
    elif not isinstance(collections, (list, tuple, set)):
        raise TypeError(f"get_variable: collections must be a list of collection names, "
                        f"got {type(collections).__name__} {_g._brief(collections)}")
    collections = list(collections)
    for key in collections:
        Graph._collection_key(key)
    if trainable and _g.TRAINABLE_VARIABLES not in collections:
        collections.append(_g.TRAINABLE_VARIABLES)
    return collections


def _value_dtype(value) -> DType:
    """The dtype a value initializer gives the variable (og.constant's rules).

    Raises:
        OneGraphError: the value is not array-like.
    """
    if isinstance(value, (Tensor, Variable)):
        return value.dtype
    return DType.from_numpy(_g._as_array(value).dtype)


def _check_value_dtype(value, dtype: DType) -> None:
    """Raises ValueError when a value initializer's dtype is not the explicit one."""
    found = _value_dtype(value)
    if found != dtype:
        raise ValueError(f"Initializer type '{found.short_name}' and explicit dtype "
                         f"'{dtype.short_name}' don't match.")


def _plain_python(value) -> bool:
    """value is a Python bool/int/float, or a (nested) list or tuple of them."""
    if isinstance(value, (list, tuple)):
        return all(_plain_python(v) for v in value)
    return type(value) in (bool, int, float)


def _shape_str(dims) -> str:
    """A shape as TF1's TensorShape prints it: (3, 4), (3,), (?, 4), <unknown>."""
    if dims is None:
        return "<unknown>"
    parts = ["?" if d is None else str(d) for d in dims]
    return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"


def _compatible(dims, found) -> bool:
    """Whether two shapes (None = unknown rank, None dims unknown) can be equal."""
    if dims is None or found is None:
        return True
    return len(dims) == len(found) and all(a is None or b is None or a == b
                                           for a, b in zip(dims, found))


def _reused(found: tuple, full: str, reuse, dims, dt: DType) -> Variable:
    """The existing variable `full`, when reuse allows and shape and dtype agree.

    Raises:
        ValueError: reuse is off, or the shape or dtype disagrees.
    """
    var, origin = found
    if reuse is False:
        raise ValueError(f"Variable {full} already exists, disallowed. Did you mean to "
                         "set reuse=True or reuse=og.AUTO_REUSE in VarScope? Originally "
                         f"defined at:\n\n{origin}")
    if not _compatible(dims, var.shape):
        raise ValueError(f"Trying to share variable {full}, but specified shape "
                         f"{_shape_str(dims)} and found shape {_shape_str(var.shape)}.")
    if dt != var.dtype:
        raise ValueError(f"Trying to share variable {full}, but specified dtype "
                         f"{dt.short_name} and found dtype {var.dtype.short_name}.")
    return var


def _origin() -> str:
    """Where the caller's code created a variable: the innermost frames outside this
    package, innermost first (TF1's "Originally defined at")."""
    frames = [f for f in traceback.extract_stack()
              if not os.path.abspath(f.filename).startswith(_PACKAGE_DIR + os.sep)]
    return "".join(traceback.format_list(frames[::-1][:_TRACE_FRAMES]))


def _default_initializer(full: str, dt: DType):
    """glorot_uniform for floats, zeros for integers, bools and strings (TF1's).

    Raises:
        ValueError: dt is neither (complex, float8...).
    """
    if dt in _init.FLOATS:
        return _init.GlorotUniform()
    if dt is DType.BOOL or dt is DType.STRING or (
            not dt.raw_storage and dt.numpy.kind in "iu"):
        return _init.Zeros()
    raise ValueError(f"get_variable: an initializer for variable {full} of "
                     f"{dt.short_name} is required")


def _create(g: Graph, full: str, dims, dt: DType, initializer, trainable: bool,
            collections: list) -> Variable:
    """A new variable `full` holding the initializer's value (see get_variable).

    Raises:
        ValueError: no default initializer for dt, or dims is not fully known and
            the initializer needs a shape.
        OneGraphError: the value does not fit dt.
    """
    if initializer is None:
        initializer = _default_initializer(full, dt)
    if inspect.isclass(initializer):
        initializer = initializer()
    with _lifted(g):
        with g.name_scope(f"{full}/Initializer"):
            value, value_dtype = _initial_value(full, dims, dt, initializer)
        return Variable(value, trainable=trainable, name=full, dtype=value_dtype,
                        collections=collections, graph=g)


@contextlib.contextmanager
def _lifted(g: Graph):
    """Build at the root name scope, outside control flow and control dependencies:
    a variable and its initializer belong to the graph, not to the op being built
    (TF1's init_scope)."""
    saved_cf, g._cf_stack = g._cf_stack, []
    saved_scope, g._scope = g._scope, []
    try:
        with g.control_dependencies(None):
            yield
    finally:
        g._cf_stack = saved_cf
        g._scope = saved_scope


def _initial_value(full: str, dims, dt: DType, initializer) -> tuple:
    """(initial value, dtype to convert it to or None to keep the value's).

    Raises:
        ValueError: dims is not fully known and the initializer needs a shape.
    """
    if not callable(initializer):
        return initializer, None
    if dims is not None and None not in dims:
        return _call_initializer(initializer, list(dims), dt), dt
    if _takes_no_arguments(initializer):
        return initializer(), None
    raise ValueError(f"Shape of a new variable ({full}) must be fully defined, but "
                     f"instead was {_shape_str(dims)}.")


def _parameters(fn):
    """fn's parameters, or None when Python cannot tell (some builtins)."""
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None


def _call_initializer(initializer, shape: list, dt: DType):
    """initializer(shape, dtype=dt), with partition_info=None when it takes one (TF1
    passes it only to initializers that name it)."""
    params = _parameters(initializer)
    if params is not None and ("partition_info" in params or any(
            p.kind is p.VAR_KEYWORD for p in params.values())):
        return initializer(shape, dtype=dt, partition_info=None)
    return initializer(shape, dtype=dt)


def _takes_no_arguments(fn) -> bool:
    """Whether fn can be called without arguments."""
    params = _parameters(fn)
    return params is not None and all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in params.values())


__all__ = ["AUTO_REUSE", "VariableScope", "get_variable", "get_variable_scope",
           "variable_scope"]
