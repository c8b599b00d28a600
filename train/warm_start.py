"""Initializing variables from a checkpoint, as TF1's tf.train.init_from_checkpoint and
tf.train.warm_start: fine-tuning starts from a trained model's values instead of the
variables' own initializers.

Neither assigns anything: each named variable's initializer is replaced by one that
assigns the checkpoint's value, so the usual `og.global_variables_initializer()` (made
after the call) or `var.initializer` loads it. The checkpoint is an og Saver's file or
a TensorFlow V2 checkpoint (see train/checkpoint_utils.py); its values are read when
the call is made (TF reads them when the initializer runs), so a missing tensor, a
shape or a dtype that does not fit is an error of the call, before any initializer
changed.

Variables are found by name in the get_variable store (as in TF1, `og.Variable`s are
reached by passing the object itself) or, for warm_start, in the TRAINABLE_VARIABLES
or GLOBAL_VARIABLES collections.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import graph as _g
from .checkpoint_utils import load_checkpoint
from .variable_scope import _lifted, _store
from .variables import Variable


def init_from_checkpoint(ckpt_dir_or_file, assignment_map) -> None:
    """Make variables initialize from a checkpoint's tensors (TF1's
    tf.train.init_from_checkpoint).

    `assignment_map` maps checkpoint names to variables, a dict or a list of pairs,
    taken in the order of the checkpoint names:
    - "ckpt/name": "scope/var" or a Variable: that variable from that tensor;
    - "ckpt_scope/": "scope/": every get_variable variable under "scope/" from the
      tensor of the same name under "ckpt_scope/";
    - "/": "scope/": from the checkpoint's root; "ckpt_scope/": "/" (or a name with
      no "/"): every get_variable variable of the graph from under "ckpt_scope/".

    Raises:
        CheckpointNotFoundError: there is no checkpoint at ckpt_dir_or_file.
        DataLossError: the checkpoint is damaged.
        ValueError: a checkpoint tensor is missing ("Tensor x is not found in ...");
            a variable's shape differs from its tensor's ("Shape of variable ...
            doesn't match with shape of tensor ..."); a variable's dtype differs;
            a scope maps to a name that does not end in "/".
        TypeError: assignment_map is not a dict or list of (str, str or Variable)
            pairs.
    """
    pairs = _pairs(assignment_map)
    reader = load_checkpoint(ckpt_dir_or_file)
    shapes = reader.get_variable_to_shape_map()
    g = _g.get_default_graph()
    store = {name: var for name, (var, _) in _store(g).items()}
    plan = []  # (variable, checkpoint tensor name); nothing changes until all are found
    for ckpt_name, current in sorted(pairs, key=lambda p: p[0]):
        var = current if isinstance(current, Variable) else store.get(current)
        if var is not None:
            _check_tensor(ckpt_name, shapes, ckpt_dir_or_file)
            _check_shape(var, ckpt_name, shapes[ckpt_name])
            plan.append((var, ckpt_name))
            continue
        scope = current[:current.rindex("/")] if "/" in current else ""
        if not ckpt_name.endswith("/"):
            raise ValueError(f"Assignment map with scope only name {scope} should map to "
                             f"scope only {ckpt_name}. Should be 'scope/': 'other_scope/'.")
        for name in sorted(store):
            if scope and not name.startswith(scope + "/"):
                continue
            # the name below the graph scope, under the checkpoint scope
            full = name[len(scope):]
            if current != "/":
                full = full[1:]
            if ckpt_name != "/":
                full = ckpt_name + full
            full = full.rstrip("/")
            if full not in shapes:
                raise ValueError(f"Tensor {full} ({name[len(scope) + 1:]} in {ckpt_name}) "
                                 f"is not found in {ckpt_dir_or_file} checkpoint")
            _check_shape(store[name], full, shapes[full])
            plan.append((store[name], full))
    values = [(var, name, reader.get_tensor(name)) for var, name in plan]
    for var, name, value in values:
        _check_dtype(var, name, value)
    for var, name, value in values:
        _initialize_from(var, value)


def warm_start(ckpt_to_initialize_from, vars_to_warm_start=".*",
               var_name_to_vocab_info=None, var_name_to_prev_var_name=None) -> None:
    """Make variables initialize from a checkpoint (TF1's tf.train.warm_start).

    Args:
        ckpt_to_initialize_from: a checkpoint file or a directory (its latest).
        vars_to_warm_start: a regular expression over the names of the
            TRAINABLE_VARIABLES (matched from the start; the default takes them
            all), a list of such expressions over the GLOBAL_VARIABLES (optimizer
            slots, moving averages), a list of Variables, or None (nothing: in TF1
            only variables with a vocabulary remapping, which onegraph lacks).
        var_name_to_vocab_info: must be empty: vocabulary remapping is not
            supported.
        var_name_to_prev_var_name: {variable name: checkpoint name} for variables
            stored under another name; each entry must name a warm-started variable.

    Raises:
        ValueError: vars_to_warm_start is a list mixing names and Variables, or of
            another type; two variables would read the same checkpoint tensor; an
            entry of var_name_to_prev_var_name names no warm-started variable (after
            the others were set up, as in TF1); and as init_from_checkpoint.
        NotImplementedError: var_name_to_vocab_info is not empty.
        CheckpointNotFoundError, DataLossError: as init_from_checkpoint.
    """
    if var_name_to_vocab_info:
        raise NotImplementedError(
            "warm_start: var_name_to_vocab_info is not supported (onegraph has no "
            "vocabulary remapping); warm-start those variables through "
            "var_name_to_prev_var_name or init_from_checkpoint instead")
    renamed = dict(var_name_to_prev_var_name or {})
    variables = _warm_start_variables(vars_to_warm_start)
    used = set()
    assignment = {}
    if vars_to_warm_start:
        for var in variables:
            prev = renamed.get(var.name)
            if prev:
                used.add(var.name)
            ckpt_name = prev or var.name
            if ckpt_name in assignment:
                raise ValueError("Can't warm-start two variables from the same "
                                 f"checkpoint tensor: {ckpt_name}")
            assignment[ckpt_name] = var
    init_from_checkpoint(ckpt_to_initialize_from, assignment)
    unused = set(renamed) - used
    if unused:
        raise ValueError("You provided the following variables in "
                         f"var_name_to_prev_var_name that were not used: {sorted(unused)}. "
                         "Perhaps you misspelled them?  Here is the list of viable "
                         f"variable names: {[v.name for v in variables]}")


# ------------------------------------------------------------------------- helpers

def _pairs(assignment_map) -> list:
    """assignment_map as [(checkpoint name, variable name or Variable)].

    Raises:
        TypeError: not a dict or list of such pairs.
    """
    if isinstance(assignment_map, Mapping):
        pairs = list(assignment_map.items())
    elif isinstance(assignment_map, (list, tuple)) and all(
            isinstance(p, (list, tuple)) and len(p) == 2 for p in assignment_map):
        pairs = [tuple(p) for p in assignment_map]
    else:
        raise TypeError("init_from_checkpoint: assignment_map must be a dict or a list of "
                        f"(checkpoint name, variable) pairs, got "
                        f"{type(assignment_map).__name__}")
    for ckpt_name, current in pairs:
        if not isinstance(ckpt_name, str) or not isinstance(current, (str, Variable)):
            raise TypeError("init_from_checkpoint: assignment_map maps checkpoint names "
                            "(str) to variable names (str) or Variables, got "
                            f"{ckpt_name!r:.60}: {current!r:.60}")
    return pairs


def _warm_start_variables(vars_to_warm_start) -> list:
    """The variables warm_start considers (see its doc).

    Raises:
        ValueError: vars_to_warm_start is of no accepted form.
    """
    g = _g.get_default_graph()
    if vars_to_warm_start is None or isinstance(vars_to_warm_start, str):
        found = g.get_collection(_g.TRAINABLE_VARIABLES, scope=vars_to_warm_start)
    elif isinstance(vars_to_warm_start, list) and all(isinstance(v, str)
                                                      for v in vars_to_warm_start):
        found = [v for scope in vars_to_warm_start
                 for v in g.get_collection(_g.GLOBAL_VARIABLES, scope=scope)]
    elif isinstance(vars_to_warm_start, list) and all(isinstance(v, Variable)
                                                      for v in vars_to_warm_start):
        found = list(vars_to_warm_start)
    elif isinstance(vars_to_warm_start, list):
        raise ValueError("If `vars_to_warm_start` is a list, it must be all `Variable` or "
                         "all `str`.  Given types are "
                         f"{[type(v).__name__ for v in vars_to_warm_start]}")
    else:
        raise ValueError("`vars_to_warm_start must be a `list` or `str`.  Given type is "
                         f"{type(vars_to_warm_start).__name__}")
    unique = {}
    for var in found:  # a variable listed by two scopes is warm-started once
        unique.setdefault(id(var), var)
    return list(unique.values())


def _check_tensor(name: str, shapes: dict, where) -> None:
    if name not in shapes:
        raise ValueError(f"Tensor {name} is not found in {where} checkpoint "
                         f"(it holds {sorted(shapes)[:20]})")


def _check_shape(var: Variable, name: str, shape) -> None:
    if tuple(var.shape) != tuple(shape):
        raise ValueError(f"Shape of variable {var.name} ({tuple(var.shape)}) doesn't match "
                         f"with shape of tensor {name} ({tuple(shape)}) from checkpoint "
                         "reader.")


def _check_dtype(var: Variable, name: str, value: np.ndarray) -> None:
    have = _g.DType.from_numpy(value.dtype)
    if have != var.dtype:
        raise ValueError(f"variable {var.name} is {var.dtype.name}, but checkpoint tensor "
                         f"{name} is {have.name}: TF1's restore would fail when the "
                         "initializer runs")


def _initialize_from(var: Variable, value: np.ndarray) -> None:
    """Replace var's initializer by one assigning `value` (also its initial_value)."""
    g = var.graph
    with _lifted(g):
        init = g.constant(value, name=f"{var.name}/checkpoint_value")
        assign = g.op("Assign", [var.handle, init], name=f"{var.name}/Assign").op
    names = g.get_collection_ref("_initializer_names")
    old = var.initializer.name
    names[:] = [assign.name if n == old else n for n in names]
    var.initial_value = init
    var.initializer = assign


__all__ = ["init_from_checkpoint", "warm_start"]
