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
import functools
import inspect
import os
import threading
import traceback


from ..format import DType
from ..errors import OneGraphError, UnimplementedError
from . import api
from . import graph as _g
from . import initializers as _init
from .graph import Graph, Tensor
from .variables import (Variable, VariableAggregation, VariableSynchronization,
                        _check_constraint, _sync_aggregation_trainable)


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
    initializer, regularizer, partitioner, custom getter, dtype, constraint...
    `with og.variable_scope(...) as scope` gives one; entering
    `og.variable_scope(scope)` later (even inside another scope) goes back to it.

    Attributes:
        name: the prefix of variable names ("" for the root scope).
        original_name_scope: the op name scope opened when the scope was made.
        reuse: False, True or og.AUTO_REUSE.
        initializer: default initializer of get_variable (None: by dtype).
        regularizer: default regularizer of get_variable (None: none).
        caching_device, partitioner, use_resource, constraint: get_variable's
            defaults of those arguments.
        custom_getter: the getter get_variable calls (those of nested scopes
            composed, the innermost outermost), or None.
        dtype: default dtype of get_variable.
    """

    def __init__(self, reuse, name: str = "", initializer=None, regularizer=None,
                 caching_device=None, partitioner=None, custom_getter=None,
                 name_scope: str = "", dtype=DType.FLOAT32, use_resource=None,
                 constraint=None):
        self._reuse = reuse
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint

    def _copy(self, reuse, name: str, name_scope: str, constraint) -> "VariableScope":
        """This scope's defaults under another name, reuse and constraint (TF1 does not
        carry a scope's constraint into the scopes opened inside it)."""
        return VariableScope(reuse, name, self._initializer, self._regularizer,
                             self._caching_device, self._partitioner, self._custom_getter,
                             name_scope, self._dtype, self._use_resource, constraint)

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

    @property
    def regularizer(self):
        """The default regularizer of get_variable (None: none)."""
        return self._regularizer

    @property
    def caching_device(self):
        """The default caching_device of get_variable (no effect in og)."""
        return self._caching_device

    @property
    def partitioner(self):
        """The default partitioner of get_variable (og supports None only)."""
        return self._partitioner

    @property
    def custom_getter(self):
        """The custom getter of get_variable in this scope, or None."""
        return self._custom_getter

    @property
    def use_resource(self):
        """The default use_resource of get_variable (accepted, no effect)."""
        return self._use_resource

    @property
    def constraint(self):
        """The default constraint of get_variable, or None."""
        return self._constraint

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

    def set_regularizer(self, regularizer) -> None:
        """Set the scope's default regularizer. Never raises."""
        self._regularizer = regularizer

    def set_caching_device(self, caching_device) -> None:
        """Set the scope's default caching_device (no effect in og). Never raises."""
        self._caching_device = caching_device

    def set_partitioner(self, partitioner) -> None:
        """Set the scope's default partitioner (get_variable refuses one). Never
        raises."""
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter) -> None:
        """Set the scope's custom getter (replacing, not composing). Never raises."""
        self._custom_getter = custom_getter

    def set_use_resource(self, use_resource) -> None:
        """Set the scope's default use_resource. Never raises."""
        self._use_resource = use_resource

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

    def local_variables(self) -> list:
        """This scope's local variables (LOCAL_VARIABLES under its prefix). Never
        raises."""
        return self.get_collection(_g.LOCAL_VARIABLES)

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
        regularizer: default regularizer of get_variable inside (inherited).
        caching_device: default caching_device inside (accepted, no effect).
        partitioner: default partitioner inside (get_variable refuses one).
        custom_getter: `getter(next_getter, name, *args, **kwargs)` get_variable
            calls inside; an enclosing scope's getter becomes its next_getter.
        reuse: True (get_variable returns existing variables, refuses new ones),
            og.AUTO_REUSE (returns them or creates them), or None/False (inherit the
            enclosing scope's; a VariableScope keeps its own).
        dtype: default dtype of get_variable inside (else inherited).
        use_resource: default use_resource inside (accepted).
        constraint: default constraint of get_variable in this scope (TF1 does not
            pass it on to scopes opened inside).
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
                 initializer=None, regularizer=None, caching_device=None, partitioner=None,
                 custom_getter=None, reuse=None, dtype=None, use_resource=None,
                 constraint=None, auxiliary_name_scope: bool = True):
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
        given = {"initializer": initializer, "regularizer": regularizer,
                 "caching_device": caching_device, "partitioner": partitioner,
                 "custom_getter": custom_getter, "reuse": reuse, "dtype": dtype,
                 "use_resource": use_resource, "constraint": constraint}
        self._args = (_graph_of_values(values), name_or_scope, default_name, given,
                      auxiliary_name_scope)
        self._first = None  # the VariableScope of the first entry
        self._open: list = []  # the entries not exited yet, innermost last

    def __enter__(self) -> "VariableScope":
        g, name_or_scope, default_name, given, aux = self._args
        if self._first is not None:
            name_or_scope = self._first
        entry = _entered(g, name_or_scope, default_name, given, aux)
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
def _entered(g: Graph, name_or_scope, default_name, given: dict,
             auxiliary_name_scope: bool):
    """The body of variable_scope: default graph, name scope, then variable scope."""
    if isinstance(name_or_scope, VariableScope):
        ops_name = name_or_scope.name.split("/")[-1]
    else:
        ops_name = default_name if name_or_scope is None else name_or_scope
    with g.as_default(), _ops_name_scope(g, ops_name, auxiliary_name_scope) as opened:
        scopes = _scopes(g)
        if isinstance(name_or_scope, VariableScope):
            inner = _jump_to(scopes, name_or_scope, given)
        else:
            if name_or_scope is None:
                name_or_scope = _unique_scope_name(scopes, default_name)
            original = name_or_scope if opened is None else opened
            inner = _prolong(scopes, name_or_scope, original, given)
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
def _prolong(scopes: _ThreadScopes, name: str, original_name_scope: str, given: dict):
    """A sub-scope `name` of the current scope: inherits its reuse (unless given),
    initializer, regularizer, custom getter, dtype... (not its constraint)."""
    old = scopes.current
    full = f"{old.name}/{name}" if old.name else name
    scope = old._copy(given["reuse"] or old.reuse, full, original_name_scope,
                      given["constraint"])
    _override(scope, given, old.custom_getter)
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
def _jump_to(scopes: _ThreadScopes, target: VariableScope, given: dict):
    """Back into a captured scope: a copy of it with the given overrides; its own
    reuse stands unless reuse is given (the enclosing scope's is not inherited)."""
    old = scopes.current
    scope = target._copy(given["reuse"] or target.reuse, target.name,
                         target.original_name_scope, given["constraint"])
    _override(scope, given, target.custom_getter)
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


def _override(scope: VariableScope, given: dict, outer_getter) -> None:
    """Apply variable_scope's arguments that were given; a custom getter is composed
    with `outer_getter` (the scope's it is entered from, or the captured scope's)."""
    for key in ("initializer", "regularizer", "caching_device", "partitioner", "dtype",
                "use_resource"):
        if given[key] is not None:
            getattr(scope, f"set_{key}")(given[key])
    if given["custom_getter"] is not None:
        scope.set_custom_getter(_composed_getter(given["custom_getter"], outer_getter))


def _composed_getter(getter, outer_getter):
    """`getter`, calling `outer_getter` (which calls the true getter) as its own
    next getter, as TF1 composes the custom getters of nested scopes."""
    if outer_getter is None:
        return getter

    def composed(getter_, *args, **kwargs):
        return getter(functools.partial(outer_getter, getter_), *args, **kwargs)

    return composed


def _check_nesting(misnested: bool) -> None:
    """Raises RuntimeError when a scope was left while one opened inside it was
    still open (only reachable by calling __enter__/__exit__ by hand)."""
    if misnested:
        raise RuntimeError("variable_scope: improper nesting of variable_scope (a scope "
                           "was exited while a scope opened inside it was still open)")


# --------------------------------------------------------------------------- variables

def get_variable(name: str, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape: bool = True, use_resource=None, custom_getter=None,
                 constraint=None, synchronization=VariableSynchronization.AUTO,
                 aggregation=VariableAggregation.NONE) -> Variable:
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
        regularizer: a function of the new variable (default: the scope's); a
            result other than None goes to REGULARIZATION_LOSSES, built under
            "<variable>/Regularizer/" (only when the variable is created).
        trainable: add it to TRAINABLE_VARIABLES too (default True, False for
            synchronization ON_READ).
        collections: collections to add it to (default [GLOBAL_VARIABLES];
            TRAINABLE_VARIABLES is added when trainable).
        caching_device, use_resource: accepted (TF1's), no effect.
        partitioner: None (default: the scope's); og has no PartitionedVariable.
        validate_shape: False lets the variable be assigned values of other shapes.
        custom_getter: `getter(next_getter, name, *args, **kwargs)` returning the
            variable, called with the full name and every argument as keywords
            (constraint only if it takes it or **kwargs); composed after the
            scope's getter.
        constraint: kept as the variable's `.constraint` (default: the scope's).
        synchronization, aggregation: og.VariableSynchronization and
            og.VariableAggregation members (or their values).

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
            empty name; a dtype with no default initializer (complex...); a
            custom_getter or partitioner that is not callable; a constraint that
            is not callable; an invalid synchronization or aggregation; and what
            the initializer raises for its arguments.
        errors.UnimplementedError: a partitioner is given (or the scope's) for a
            variable that is not a scalar.
        TypeError: name is not a str, shape not a list of ints, dtype names no
            dtype, trainable not a bool, or collections not a list.
        ShapeError: a dim of shape is negative.
        OneGraphError: the initializer's value does not fit dtype (a fraction for
            an integer variable...).
    """
    _check_variable_name(name)
    g = _g.get_default_graph()
    scope = _scopes(g).current
    regularizer = scope.regularizer if regularizer is None else regularizer
    caching_device = scope.caching_device if caching_device is None else caching_device
    partitioner = scope.partitioner if partitioner is None else partitioner
    custom_getter = scope.custom_getter if custom_getter is None else custom_getter
    use_resource = scope.use_resource if use_resource is None else use_resource
    if custom_getter is not None and not callable(custom_getter):
        raise ValueError(f"Passed a custom_getter which is not callable: "
                         f"{_g._brief(custom_getter)}")
    if dtype is not None:
        dtype = _as_dtype(dtype, "get_variable")
        initializer = _explicit_dtype_value(name, initializer, dtype)
    initializer = scope.initializer if initializer is None else initializer
    constraint = scope.constraint if constraint is None else constraint
    dtype = _as_dtype(scope.dtype, "get_variable") if dtype is None else dtype
    full = f"{scope.name}/{name}" if scope.name else name
    if trainable is not None:
        trainable = api._bool_arg(trainable, "get_variable: trainable")
    synchronization, aggregation, trainable = _sync_aggregation_trainable(
        synchronization, aggregation, trainable, full)
    kwargs = {"name": full, "shape": shape, "dtype": dtype, "initializer": initializer,
              "regularizer": regularizer, "reuse": scope.reuse, "trainable": trainable,
              "collections": collections, "caching_device": caching_device,
              "partitioner": partitioner, "validate_shape": validate_shape,
              "use_resource": use_resource, "synchronization": synchronization,
              "aggregation": aggregation}
    if custom_getter is None:
        return _true_getter(constraint=constraint, **kwargs)
    if _takes_keyword(custom_getter, "constraint"):
        kwargs["constraint"] = constraint
    return custom_getter(_true_getter, **kwargs)


def get_local_variable(name: str, shape=None, dtype=None, initializer=None,
                       regularizer=None, trainable=False, collections=None,
                       caching_device=None, partitioner=None, validate_shape: bool = True,
                       use_resource=None, custom_getter=None, constraint=None,
                       synchronization=VariableSynchronization.AUTO,
                       aggregation=VariableAggregation.NONE) -> Variable:
    """get_variable into LOCAL_VARIABLES (added to the given collections), never
    trainable whatever `trainable` says (TF1's tf.get_local_variable).

    Raises:
        As get_variable.
    """
    del trainable  # TF1 ignores it: local variables are not trained
    if collections is not None and not isinstance(collections, (list, tuple, set)):
        raise TypeError(f"get_local_variable: collections must be a list of collection "
                        f"names, got {type(collections).__name__}")
    collections = list(collections or []) + [_g.LOCAL_VARIABLES]
    return get_variable(name, shape, dtype, initializer, regularizer, False, collections,
                        caching_device, partitioner, validate_shape, use_resource,
                        custom_getter, constraint, synchronization, aggregation)


def no_regularizer(_) -> None:
    """A regularizer that regularizes nothing (TF1's tf.no_regularizer): None, so a
    scope's regularizer can be switched off for one variable. Never raises."""
    return None


def _takes_keyword(fn, keyword: str) -> bool:
    """Whether fn has a parameter `keyword` or takes **kwargs (TF1 passes a custom
    getter `constraint` only then, for getters written before it existed)."""
    params = _parameters(fn)
    return params is not None and (keyword in params or any(
        p.kind is p.VAR_KEYWORD for p in params.values()))


def _explicit_dtype_value(name: str, initializer, dtype: DType):
    """A value initializer checked against an explicit dtype: Python numbers take it
    (they have no dtype of their own: TF1 reads an int as int32, og.constant as
    int64) when they fit; arrays and tensors must have it.

    Raises:
        ValueError: a typed value of another dtype (TF1's message).
        OneGraphError: a Python value does not fit dtype.
    """
    if initializer is None or callable(initializer):
        return initializer
    if _plain_python(initializer):
        try:
            return _g._as_array(initializer, dtype)
        except OneGraphError as e:
            raise _g._named(e, f"get_variable {name!r}: initializer") from None
    _check_value_dtype(initializer, dtype)
    return initializer


def _true_getter(name: str, shape=None, dtype=DType.FLOAT32, initializer=None,
                 regularizer=None, reuse=None, trainable=None, collections=None,
                 caching_device=None, partitioner=None, validate_shape: bool = True,
                 use_resource=None, constraint=None,
                 synchronization=VariableSynchronization.AUTO,
                 aggregation=VariableAggregation.NONE) -> Variable:
    """The variable `name` (the full name) of the default graph: returned when it
    exists and `reuse` allows, else created (the getter a custom getter receives).

    Raises:
        As get_variable.
    """
    del caching_device, use_resource  # one device; og's variables act as resources
    if partitioner is not None and not (isinstance(shape, (list, tuple)) and not shape):
        if not callable(partitioner):
            raise ValueError(f"Partitioner must be callable, but received: "
                             f"{_g._brief(partitioner)}")
        raise UnimplementedError(f"get_variable {name!r}: a partitioner (a "
                                 "PartitionedVariable) is not supported; give "
                                 "partitioner=None")
    dims = _g._shape_tuple(shape, "get_variable: shape")
    trainable = True if trainable is None else api._bool_arg(trainable,
                                                             "get_variable: trainable")
    collections = _collections(collections, trainable)
    _check_constraint(constraint)
    g = _g.get_default_graph()
    dt = _as_dtype(dtype, "get_variable")
    _check_not_in_control_flow(g, initializer, name)
    if dims is not None and initializer is not None and not callable(initializer):
        raise ValueError("If initializer is a constant, do not specify shape.")
    with g._lock:  # one thread's check-then-create must not interleave another's
        found = _store(g).get(name)
        if found is not None:
            return _reused(found, name, reuse, dims, dt)
        if reuse is True:
            raise ValueError(f"Variable {name} does not exist, or was not created with "
                             "og.get_variable(). Did you mean to set "
                             "reuse=og.AUTO_REUSE in VarScope?")
        var = _create(g, name, dims, dt, initializer, trainable, collections,
                      {"validate_shape": validate_shape, "constraint": constraint,
                       "synchronization": synchronization, "aggregation": aggregation})
        _store(g)[name] = (var, _origin())
    if regularizer is not None:
        _regularize(g, var, name, regularizer)
    return var


def _regularize(g: Graph, var: Variable, full: str, regularizer) -> None:
    """regularizer(var), built under "<full>/Regularizer/" outside control flow, into
    REGULARIZATION_LOSSES unless it is None (TF1's)."""
    with _lifted(g), g.name_scope(f"{full}/Regularizer/"):
        loss = regularizer(var)
    if loss is not None:
        g.add_to_collection(_g.REGULARIZATION_LOSSES, loss)


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
            collections: list, extra: dict) -> Variable:
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
        shape = None if dims is None else list(dims)
        return Variable(value, trainable=trainable, name=full, dtype=value_dtype,
                        collections=collections, graph=g, shape=shape, **extra)


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


__all__ = ["AUTO_REUSE", "VariableScope", "get_local_variable", "get_variable",
           "get_variable_scope", "no_regularizer", "variable_scope"]
