"""Operator definitions and the registry that maps (domain, op_type) to them.

An op is described once, by an `OpDef`: its inputs, outputs and attributes (with
defaults), the float kernel, shape/dtype inference and (optionally) the gradient rule.
Op family modules (`ops/elementwise.py`, `ops/conv.py`, ...) build `OpDef`s with
`define(...)` and list them in a module-level `OPS` tuple; `ops/__init__.py` collects
those tuples into the one registry, refusing duplicates.

Kernel contract
---------------
``kernel(inputs, attrs, ctx) -> tuple``

* ``inputs``: list of numpy arrays, ``None`` for an omitted optional input, in the
  order of ``OpDef.inputs`` (a variadic last input takes all remaining positions).
* ``attrs``: dict of attribute values with defaults filled in (ints, floats, str,
  lists, numpy arrays for tensor attributes, `format.Graph` objects for subgraphs),
  plus ``attrs[NUM_OUTPUTS]``, the number of outputs the node declares.
* ``ctx``: a `KernelContext` (or None when the op does not need one): gives
  subgraph execution, per-run state (variables, queues) and random generators.
* returns a tuple with one numpy array per output (never a bare array).

Inference contract
------------------
``infer(attrs, inputs) -> list[TensorInfo]`` where ``inputs`` holds a `TensorInfo`
(dtype, shape with None for unknown dims, value if statically known) per input or
None for omitted optional inputs. Raise `ShapeError` on inconsistent inputs.

Gradient contract
-----------------
``gradient(b, node, grad_outputs) -> list`` with one entry per op input: a graph
tensor handle holding d(loss)/d(input), or None where there is none. ``b`` is the
graph builder supplied by `onegraph.train` (``b.op(op_type, inputs, attrs,
num_outputs=1)``, ``b.constant(value)``); ``node.inputs``/``node.outputs`` are handles.
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..errors import ExecutionError, OpAttributeError, UnsupportedOpError

REQUIRED = object()  # sentinel: attribute has no default and must be given

# Executors add this key to a kernel's attrs: how many outputs the node declares, so
# kernels skip optional outputs nobody asked for (MaxPool's Indices) and opset<18
# Split knows its part count.
NUM_OUTPUTS = "__num_outputs__"

# Executors add this key too: a hashable identity of the node, the same in every plan
# of one executor, under which stateful kernels keep per-node state in `ctx.state`
# (a seeded random op's generator, which advances from run to run as onnxruntime's
# and TF1's do). Attrs without it (a kernel called on its own) get no such state.
NODE_KEY = "__node_key__"

# Executors resolve a node's attrs once per plan (`OpDef.resolve_attrs` with
# num_outputs), so that dict lives as long as the plan: kernels keep what they derive
# from the attributes alone (compiled tree tables, parsed vectors) under this key.
KERNEL_CACHE = "__kernel_cache__"


def kernel_cache(attrs) -> dict:
    """The per-node dict a kernel may keep attribute-derived values in (see
    KERNEL_CACHE). Attrs an executor did not resolve (no NUM_OUTPUTS key) get a fresh
    dict each call, so a caller's own attribute dict is never changed."""
    if NUM_OUTPUTS not in attrs:
        return {}
    cache = attrs.get(KERNEL_CACHE)
    if cache is None:
        cache = attrs[KERNEL_CACHE] = {}
    return cache

# Arrays executors hold as plan constants (an initializer's read-only view, a folded
# value): the same object carries the same values in every run, so a kernel may keep
# what it derives from one (a decoded filter, a dequantized weight) keyed on its
# identity. A fed array may not be trusted so, read-only or not: the caller may refill
# its buffer in place between runs. {id: array}, weakly held.
_PLAN_CONSTANTS: "weakref.WeakValueDictionary[int, np.ndarray]" = \
    weakref.WeakValueDictionary()


def mark_plan_constant(array) -> None:
    """Record `array` (a read-only ndarray an executor holds for the life of its plans)
    as a plan constant (see `is_plan_constant`). Never raises."""
    if type(array) is np.ndarray:
        _PLAN_CONSTANTS[id(array)] = array


def is_plan_constant(array) -> bool:
    """Whether `array` is, as this very object, an array an executor marked with
    `mark_plan_constant`: values derived from it may be cached on its identity for as
    long as it lives. Never raises."""
    return _PLAN_CONSTANTS.get(id(array)) is array


ATTR_TYPES = ("int", "float", "string", "ints", "floats", "strings", "tensor", "graph",
              "graphs")


_ATTR_WORDS = {"int": "an integer", "float": "a number", "string": "a string",
               "ints": "a list of integers", "floats": "a list of numbers",
               "strings": "a list of strings"}


def _attr_fits(kind: str, value) -> bool:
    """Whether an attribute value has the form its type needs (kernels read `int`
    attributes as Python ints, `ints` as sequences, ...); tensors and graphs are
    checked by the ops that read them, and None stands for "not set"."""
    if value is None or kind not in _ATTR_WORDS:
        return True
    if kind == "int":
        return isinstance(value, (int, np.integer))
    if kind == "float":
        return isinstance(value, (int, float, np.integer, np.floating))
    if kind == "string":
        return isinstance(value, (str, bytes))
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, np.ndarray)):
        return False
    if kind == "strings":
        return all(isinstance(v, (str, bytes)) for v in value)
    arr = np.asarray(value)
    if arr.ndim != 1 and arr.size:
        return False
    return arr.size == 0 or arr.dtype.kind in ("iub" if kind == "ints" else "iubf")


@dataclasses.dataclass(frozen=True, slots=True)
class AttrSpec:
    """One attribute of an op: name, type (one of ATTR_TYPES) and default."""

    name: str
    type: str
    default: Any = REQUIRED

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclasses.dataclass(frozen=True, slots=True)
class TensorInfo:
    """What inference knows about a tensor: dtype, shape (None = unknown dim), value."""

    dtype: np.dtype | None
    shape: tuple[int | None, ...] | None
    value: np.ndarray | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class OpDef:
    """Everything onegraph knows about one operator.

    Input names ending in ``?`` are optional; a final name ending in ``*`` is variadic.
    ``dtypes`` lists the numpy dtype names the float kernel accepts for its first
    input (empty = any). ``stateful`` ops are never constant-folded or pruned away
    when they are targets. ``check_attrs``, when given, takes the resolved attributes
    and returns what is wrong with them together (one value attribute of several,
    a tensor that must hold one element), or None.
    """

    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    kernel: Callable[..., tuple] | None
    attrs: tuple[AttrSpec, ...] = ()
    infer: Callable[..., list] | None = None
    gradient: Callable[..., list] | None = None
    domain: str = ""
    dtypes: tuple[str, ...] = ()
    stateful: bool = False
    since_version: int = 1
    doc: str = ""
    check_attrs: Callable[[Mapping[str, Any]], str | None] | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.domain, self.name)

    def attr_spec(self, name: str) -> AttrSpec | None:
        for spec in self.attrs:
            if spec.name == name:
                return spec
        return None

    def check_arity(self, inputs: Sequence[int], outputs: Sequence[int],
                    where: str = "") -> None:
        """Check a node's input and output lists (tensor indices, -1 for an omitted
        optional one) against the op's: every required input given, no more inputs or
        outputs than the op has (unless its last one is variadic). Kernels index their
        inputs by position, so a node short of one would fail inside the kernel.

        Raises:
            ExecutionError: an input is missing or there are too many inputs/outputs.
        """
        for pos, name in enumerate(self.inputs):
            if name.endswith(("?", "*")):
                continue
            if pos >= len(inputs) or inputs[pos] < 0:
                raise ExecutionError(f"{where}{self.name} needs input {pos} ({name!r}), "
                                     f"which the node does not give")
        for what, given, declared in (("input", inputs, self.inputs),
                                      ("output", outputs, self.outputs)):
            if declared and declared[-1].endswith("*"):
                continue
            if len(given) > len(declared):
                names = ", ".join(d.rstrip("?") for d in declared) or "none"
                raise ExecutionError(f"{where}{self.name} takes at most {len(declared)} "
                                     f"{what}(s) ({names}), the node has {len(given)}")

    def resolve_attrs(self, given: Mapping[str, Any], where: str = "",
                      num_outputs: int | None = None) -> dict[str, Any]:
        """Return the node's attributes with defaults filled in.

        With `num_outputs` (the node's declared output count) the result also holds it
        under the `NUM_OUTPUTS` key.

        Raises:
            OpAttributeError: a required attribute is missing, an unknown one given, or
                the op's `check_attrs` finds them inconsistent.
        """
        out: dict[str, Any] = {}
        known = {spec.name for spec in self.attrs}
        for name in given:
            if name not in known:
                raise OpAttributeError(
                    f"{where}{self.name}: unknown attribute {name!r} "
                    f"(known: {sorted(known) or 'none'})")
        for spec in self.attrs:
            if spec.name in given:
                value = given[spec.name]
                if not _attr_fits(spec.type, value):
                    raise OpAttributeError(
                        f"{where}{self.name}: attribute {spec.name!r} must be "
                        f"{_ATTR_WORDS[spec.type]}, got {type(value).__name__} {value!r:.60}")
                out[spec.name] = value
            elif spec.required:
                raise OpAttributeError(f"{where}{self.name}: missing required attribute "
                                       f"{spec.name!r}")
            else:
                out[spec.name] = spec.default
        problem = self.check_attrs(out) if self.check_attrs is not None else None
        if problem:
            raise OpAttributeError(f"{where}{self.name}: {problem}")
        if num_outputs is not None:
            out[NUM_OUTPUTS] = num_outputs
        return out


def define(name: str, inputs: Sequence[str], outputs: Sequence[str], kernel,
           attrs: Iterable[AttrSpec | tuple] = (), **kwargs) -> OpDef:
    """Build an OpDef; attrs may be AttrSpec or (name, type[, default]) tuples."""
    specs = []
    onnx_domain = kwargs.get("domain", "") != "onegraph"  # ONNX's protobuf attributes
    for a in attrs:
        spec = a if isinstance(a, AttrSpec) else AttrSpec(*a)
        if spec.type not in ATTR_TYPES:
            raise ValueError(f"op {name}: attribute {spec.name} has unknown type {spec.type}")
        if onnx_domain and spec.type == "float" and isinstance(spec.default, float):
            # ONNX FLOAT attributes are 32-bit: a model that states the default gets
            # float32(0.01), so an omitted one must too (visible in float64 models)
            spec = dataclasses.replace(spec, default=float(np.float32(spec.default)))
        specs.append(spec)
    return OpDef(name=name, inputs=tuple(inputs), outputs=tuple(outputs), kernel=kernel,
                 attrs=tuple(specs), **kwargs)


class KernelContext:
    """Services a kernel may need from the executor running it.

    The base class serves pure graphs; executors subclass it.
    """

    def run_graph(self, graph, inputs: Sequence[Any]) -> list:
        """Run a subgraph (If/Loop/Scan body) with the given inputs, returning outputs."""
        raise UnsupportedOpError("this executor cannot run subgraphs")

    def outer_value(self, name: str):
        """The value an enclosing graph gives `name` (what a subgraph reads from outer
        scope), or None where there is none or the executor does not say. Never
        raises."""
        return None

    @property
    def rng(self) -> np.random.Generator:
        return np.random.default_rng()


class Registry:
    """Maps (domain, op_type) to OpDef; built once from the op family modules."""

    def __init__(self) -> None:
        self._ops: dict[tuple[str, str], OpDef] = {}

    def add(self, op: OpDef) -> None:
        if op.key in self._ops:
            raise ValueError(f"op {op.domain or 'ai.onnx'}::{op.name} registered twice")
        self._ops[op.key] = op

    def replace(self, op: OpDef) -> None:
        """Swap in a new definition of an already registered op (e.g. with a gradient)."""
        if op.key not in self._ops:
            raise ValueError(f"op {op.domain or 'ai.onnx'}::{op.name} is not registered")
        self._ops[op.key] = op

    def get(self, op_type: str, domain: str = "", where: str = "") -> OpDef:
        """Return the definition of an op.

        Raises:
            UnsupportedOpError: no such op; the message names the node (``where``).
        """
        op = self._ops.get((_norm_domain(domain), op_type))
        if op is None:
            raise UnsupportedOpError(
                f"{where}unsupported op {(domain + '::') if domain else ''}{op_type}")
        return op

    def has(self, op_type: str, domain: str = "") -> bool:
        return (_norm_domain(domain), op_type) in self._ops

    def __iter__(self):
        return iter(sorted(self._ops.values(), key=lambda o: (o.domain, o.name)))

    def __len__(self) -> int:
        return len(self._ops)


def _norm_domain(domain: str) -> str:
    return "" if domain in ("", "ai.onnx") else domain


class VariableRef:
    """The state of one mutable variable, shared by the ops that read and update it.

    `value` is replaced (not mutated) by updates, so a reader holding the old array is
    never disturbed mid-step; `lock` serialises read-modify-write updates.
    """

    __slots__ = ("name", "_value", "lock")

    def __init__(self, name: str, value: np.ndarray | None) -> None:
        import threading

        self.name = name
        self.value = value
        self.lock = threading.Lock()

    @property
    def value(self):
        """The current value (None before initialisation), a read-only array."""
        return self._value

    @value.setter
    def value(self, value) -> None:
        # Stored read-only: the array reaches fetches and kernels, and none of them may
        # write into the variable's state (a fetch gets a copy, see Session.run).
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
        self._value = value

    def read(self) -> np.ndarray:
        """The current value.

        Raises:
            FailedPreconditionError: the variable was never initialised (an
                ExecutionError; TF1's error for it).
        """
        if self.value is None:
            from ..errors import FailedPreconditionError

            raise FailedPreconditionError(
                f"Attempting to use uninitialized value {self.name}: variable "
                f"{self.name!r} is used before it is initialised (run the initializer "
                "first)")
        return self.value
