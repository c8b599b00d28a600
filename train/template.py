"""TF1's `make_template`: wrap a function so that its first call creates variables (with
og.get_variable) in a variable scope of its own and every later call shares them::

    def linear(x):
        w = og.get_variable("w", [2, 3])
        return x @ w

    layer = make_template("linear", linear)
    a = layer(x1)          # creates linear/w
    b = layer(x2)          # uses linear/w again

The scope is "linear" made unique ("linear_1", ...) where the template is first called
(or made, with create_scope_now_=True), or exactly unique_name_. Each call re-enters it,
with reuse off the first time and on afterwards, and opens a fresh op name scope as
og.variable_scope does ("linear/", "linear_1/", ...).
"""

from __future__ import annotations

import functools
import logging
import traceback
import warnings

from . import api
from . import graph as _g
from . import variable_scope as _vs

_log = logging.getLogger("onegraph")


def make_template(name_: str, func_, create_scope_now_: bool = False,
                  unique_name_: str | None = None, custom_getter_=None,
                  **kwargs) -> "Template":
    """A Template calling func_(*args, **kwargs, **call_kwargs) (a call's own keyword
    arguments win, as with functools.partial) in its variable scope.

    Args:
        name_: the scope's name, made unique among the scopes opened where the scope
            is made ("scale", "scale_1", ...).
        func_: the function to wrap; it should create its variables with
            og.get_variable (og.Variable made in its first call is not shared).
        create_scope_now_: make the scope now rather than at the first call.
        unique_name_: the scope's name exactly (name_ is then only the Template's
            name); not made unique, so two templates of one unique_name_ clash.
        custom_getter_: not supported (og.variable_scope has no custom getters).
        **kwargs: keyword arguments bound into every call of func_.

    Raises:
        ValueError: name_ is None (TF1's "name cannot be None.") or empty, or
            unique_name_ is empty.
        TypeError: name_ or unique_name_ is not a str, func_ is not callable, or
            create_scope_now_ is not a bool.
        NotImplementedError: custom_getter_ is given.
    """
    if name_ is None:
        raise ValueError("name cannot be None.")
    _check_name(name_, "name_")
    if unique_name_ is not None:
        _check_name(unique_name_, "unique_name_")
    if not callable(func_):
        raise TypeError(f"make_template: func_ must be callable, got "
                        f"{type(func_).__name__} {_g._brief(func_)}")
    create_scope_now_ = api._bool_arg(create_scope_now_, "make_template: create_scope_now_")
    if custom_getter_ is not None:
        raise NotImplementedError("make_template: custom_getter_ is not supported: "
                                  "og.variable_scope has no custom_getter")
    if kwargs:
        func_ = functools.partial(func_, **kwargs)
    return Template(name_, func_, create_scope_now_, unique_name_)


def _check_name(name, what: str) -> None:
    """Raises TypeError for a name that is not a str, ValueError for an empty one (TF1
    would put the variables at the root and count every graph variable as the
    template's)."""
    if not isinstance(name, str):
        raise TypeError(f"make_template: {what} must be a str, got {type(name).__name__} "
                        f"{_g._brief(name)}")
    if not name:
        raise ValueError(f"make_template: {what} must not be empty")


def _skip_common(stack: list, current: list) -> list:
    """The frames of `stack` after those it shares with `current` (its last frame at
    least): where the template was made, seen from where it failed."""
    for i, (made, now) in enumerate(zip(stack, current)):
        if made != now:
            return stack[i:]
    return stack[-1:]


class Template:
    """A function sharing its variables between calls (see make_template, which makes
    these). Calling it calls the wrapped function in the template's variable scope.

    Properties: name, func, variable_scope (None until the scope is made),
    variable_scope_name ("linear/"), and the template's variables (empty before its
    first call), taken from the graph's collections under that scope: variables,
    trainable_variables, non_trainable_variables, global_variables, local_variables
    (weights, trainable_weights, non_trainable_weights are aliases; var_scope is a
    deprecated alias of variable_scope).
    """

    def __init__(self, name: str, func, create_scope_now: bool = False,
                 unique_name: str | None = None):
        self._func = func
        # where the template was made, to name it in errors from its calls (TF1's)
        self._stacktrace = traceback.format_stack()[:-2]
        self._name = name
        self._unique_name = unique_name
        self._variable_scope = None
        self._graph = None
        if create_scope_now:
            # a variable scope only: the ops of the first call still get "name/"
            if unique_name is not None:
                opened = _vs.variable_scope(unique_name, auxiliary_name_scope=False)
            else:
                opened = _vs.variable_scope(None, default_name=name,
                                            auxiliary_name_scope=False)
            with opened as scope:
                self._variable_scope = scope
        self._variables_created = False
        self._first_call = True

    def __call__(self, *args, **kwargs):
        """func(*args, **kwargs) in the template's scope: creating its variables the
        first time, reusing them afterwards.

        Raises:
            ValueError: a later call created a trainable variable ("Trainable
                variable created when calling a template after the first time, ...")
                or asked for a variable the first call did not create.
            Exception: whatever func raises, its message followed by "originally
                defined at:" and where the template was made.
        """
        if self._variable_scope is not None:
            with _vs.variable_scope(self._variable_scope, reuse=not self._first_call):
                return self._call_func(args, kwargs)
        with _vs.variable_scope(self._unique_name, default_name=self._name) as scope:
            self._variable_scope = scope
            return self._call_func(args, kwargs)

    def _call_func(self, args, kwargs):
        """Call func, checking later calls create no trainable variable; name the
        template in any error."""
        try:
            if self._variables_created:
                return self._call_again(args, kwargs)
            if self._first_call:
                self._first_call = False
                try:
                    result = self._func(*args, **kwargs)
                except BaseException:
                    self._first_call = True  # nothing shared yet: the next call creates
                    raise
                self._graph = _g.get_default_graph()
                self._variables_created = True
                return result
            # the first call is still running in another thread
            return self._func(*args, **kwargs)
        except Exception as exc:
            self._annotate(exc)
            raise

    def _call_again(self, args, kwargs):
        """A call after the first: func, then refuse new trainable variables (TF1's
        check: they would be silently unshared) and log new other ones.

        Raises:
            ValueError: func created a trainable variable.
        """
        g = _g.get_default_graph()
        global_ref = g.get_collection_ref(_g.GLOBAL_VARIABLES)
        trainable_ref = g.get_collection_ref(_g.TRAINABLE_VARIABLES)
        globals_at_start, trainable_at_start = len(global_ref), len(trainable_ref)
        result = self._func(*args, **kwargs)
        if len(trainable_ref) != trainable_at_start:
            raise ValueError("Trainable variable created when calling a template after "
                             "the first time, perhaps you used og.Variable when you meant "
                             f"og.get_variable: {trainable_ref[trainable_at_start:]}")
        if len(global_ref) != globals_at_start:
            _log.info("New variables created when calling a template after the first "
                      "time, perhaps you used og.Variable when you meant "
                      "og.get_variable: %s", global_ref[globals_at_start:])
        return result

    def _annotate(self, exc: Exception) -> None:
        """Append where the template was made to exc's message (TF1's)."""
        trace = "".join(_skip_common(self._stacktrace, traceback.format_stack()))
        first = exc.args[0] if exc.args else ""
        exc.args = (f"{first}\n\noriginally defined at:\n{trace}",) + exc.args[1:]

    @property
    def name(self) -> str:
        """The name_ the template was made with."""
        return self._name

    @property
    def func(self):
        """The wrapped function (a functools.partial when kwargs were bound)."""
        return self._func

    @property
    def variable_scope(self):
        """The template's og.VariableScope (None until made)."""
        return self._variable_scope

    @property
    def var_scope(self):
        """Deprecated alias of variable_scope (warns DeprecationWarning)."""
        warnings.warn("Template.var_scope is deprecated: use Template.variable_scope",
                      DeprecationWarning, stacklevel=2)
        return self._variable_scope

    @property
    def variable_scope_name(self):
        """The scope's name followed by "/" ("" for the root scope; None until made),
        so that "a/" does not match variables of "a_1"."""
        if self._variable_scope is None:
            return None
        name = self._variable_scope.name
        return name if not name or name.endswith("/") else name + "/"

    def _collection(self, key: str) -> list:
        """The items of collection `key` under the template's scope, in the graph of
        its first call ([] before it)."""
        if not self._variables_created:
            return []
        return self._graph.get_collection(key, self.variable_scope_name)

    @property
    def variables(self) -> list:
        """The template's global then local variables."""
        return self.global_variables + self.local_variables

    @property
    def trainable_variables(self) -> list:
        """The template's trainable variables."""
        return self._collection(_g.TRAINABLE_VARIABLES)

    @property
    def non_trainable_variables(self) -> list:
        """The template's global variables that are not trainable."""
        trainable = set(map(id, self.trainable_variables))
        return [v for v in self.global_variables if id(v) not in trainable]

    @property
    def global_variables(self) -> list:
        """The template's global variables."""
        return self._collection(_g.GLOBAL_VARIABLES)

    @property
    def local_variables(self) -> list:
        """The template's local variables."""
        return self._collection(_g.LOCAL_VARIABLES)

    @property
    def weights(self) -> list:
        """Alias of variables."""
        return self.variables

    @property
    def trainable_weights(self) -> list:
        """Alias of trainable_variables."""
        return self.trainable_variables

    @property
    def non_trainable_weights(self) -> list:
        """Alias of non_trainable_variables."""
        return self.non_trainable_variables

    def __repr__(self) -> str:
        return f"<og.Template {self._name!r} scope={self.variable_scope_name!r}>"


__all__ = ["Template", "make_template"]
