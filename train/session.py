"""The Session: runs a graph step by step, the paper's `run(fetches, feeds)`.

A step prunes the graph to the nodes the fetches and targets need (stopping at fed
tensors), orders them once, and caches that plan per (feeds, fetches, targets). Running
a plan is a flat loop over precomputed (kernel, attributes, input slots, output slots)
entries that frees each value after its last use, so per-op overhead stays at a few
microseconds. State (variables, queues) lives in the Session and persists across
steps; several threads may call `run` at once (each run has its own value slots).

Subgraphs of ONNX If/Loop/Scan run through `KernelContext.run_graph`, with outer-scope
values resolved by name as ONNX specifies (this is the "equivalent machinery" to the
paper's Switch/Merge frames; dead-value control flow runs in the same loop).
"""

from __future__ import annotations

import collections
import contextlib
import os
import threading
import time
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import (CancelledError, ExecutionError, OneGraphError, ResourceExhaustedError,
                      ShapeError)
from ..format import Container, DType, Graph, Model, TensorKind
from ..ops import REGISTRY, KernelContext


# The dead value of dataflow control flow (the untaken side of a Switch) is defined
# with the Switch/Merge kernels, which produce it.
from ..ops.dataflow import DEAD  # noqa: E402
from ..ops.registry import NODE_KEY, VariableRef, mark_plan_constant  # noqa: E402
from ..ops.elementwise import fp_errors_quiet, quiet_fp_errors  # noqa: E402
from ..ops.scratch import begin_kernel  # noqa: E402
from ..ops.common import kernel_failure  # noqa: E402
from .optimize import optimize_plan  # noqa: E402
from . import frames  # noqa: E402
from .heap import keep_freed_memory  # noqa: E402
from .profiling import RunMetadata, output_info  # noqa: E402
from .graph import output_named, remove_innermost  # noqa: E402

# Compiled plans a Session keeps (one per set of feeds, fetches and targets); past it
# the least recently used is dropped (a train step run every step stays while an
# evaluation loop goes through ever new fetch sets): each holds its fused weights (BN
# folded into a Conv, GEMM-ready and Winograd forms), so a loop over ever new fetch sets
# would otherwise grow without bound. TF1 programs use a handful (train step, loss,
# evaluation).
MAX_PLANS = 32

# What `run` says on a closed session (TF1: "Attempted to use a closed Session").
_CLOSED = ("Session.run: the session is closed (close() freed its variables and queues); "
           "make a new og.Session")

# Ops that receive dead inputs instead of being skipped by dead-value propagation.
_DEAD_AWARE = frozenset({"Merge"})
# Control inputs whose dead output makes the dependent node dead: the pivots of
# og.cond branches and loop bodies (Identity nodes), see train/control_flow.py.
_PIVOTS = frozenset({"Identity"})


class NodeTarget:
    """A fetch that names a node of the Session's graph by index, to run as a target
    (its result is None), for graphs that have no `Operation` handles (a Model's
    signature targets, saver nodes)."""

    __slots__ = ("node_index",)

    def __init__(self, node_index: int):
        self.node_index = int(node_index)

    def __repr__(self) -> str:
        return f"NodeTarget({self.node_index})"


class _Step:
    __slots__ = ("kernel", "attrs", "inputs", "outputs", "node", "free", "dead_aware", "ctrl")

    def __init__(self, kernel, attrs, inputs, outputs, node, free, dead_aware, ctrl=()):
        self.kernel, self.attrs, self.inputs, self.outputs = kernel, attrs, inputs, outputs
        self.node, self.free, self.dead_aware = node, free, dead_aware
        # outputs of control inputs: the step is dead when one of them is (cond pivots)
        self.ctrl = ctrl


class _Plan:
    """One compiled step: the slots template and the ordered kernel calls."""

    __slots__ = ("steps", "template", "free_tensors", "uses_dead")

    def __init__(self, steps, template, free_tensors, uses_dead):
        self.steps = steps
        self.template = template
        self.free_tensors = free_tensors
        self.uses_dead = uses_dead


# What `_Frame._own` returns for a name the frame has no value for: None cannot say it,
# None is a value (an empty optional) that an outer-scope read must see as it is.
_ABSENT = object()


class _Frame:
    """Values of one graph activation; subgraph frames look up free names in parents."""

    __slots__ = ("graph", "values", "parent")

    def __init__(self, graph: Graph, values: list, parent: "_Frame | None"):
        self.graph, self.values, self.parent = graph, values, parent

    def lookup(self, name: str):
        """The value of `name` in the innermost frame that has one (ONNX outer scope);
        None when that is an empty optional.

        Raises:
            ExecutionError: no enclosing frame has a value for `name`.
        """
        frame = self
        while frame is not None:
            value = frame._own(name)
            if value is not _ABSENT:
                return value
            frame = frame.parent
        raise ExecutionError(f"subgraph refers to {name!r}, which no enclosing graph defines")

    def _own(self, name: str):
        """This frame's value of `name`, or `_ABSENT`. Never raises.

        A slot holding None is a value, an empty optional, only for a tensor that can
        hold one (declared optional, or untyped) and that this graph defines (an input
        or a node's output). Otherwise None means the slot was never filled here (a
        graph input not fed, a copy of an outer name a nested subgraph reads) and the
        name belongs to an enclosing frame.
        """
        i = self.graph.find_tensor(name)
        if i is None:
            return _ABSENT
        value = self.values[i]
        if value is not None:
            return value
        t = self.graph.tensors[i]
        if t.containers:
            can_be_empty = t.containers[0] is Container.OPTIONAL
        else:
            can_be_empty = t.dtype is DType.UNDEFINED and t.shape is None
        if can_be_empty and (i in self.graph.inputs
                             or any(i in node.outputs for node in self.graph.nodes)):
            return None
        return _ABSENT


class RunContext(KernelContext):
    """What kernels see of the Session: subgraph execution, state and randomness."""

    def __init__(self, session: "Session", frame: _Frame):
        self.session = session
        self.frame = frame

    def run_graph(self, graph: Graph, inputs: Sequence[Any]) -> list:
        return self.session._run_subgraph(graph, list(inputs), self.frame)

    def outer_value(self, name: str):
        """The value of `name` in the frames enclosing the running kernel, or None."""
        try:
            return self.frame.lookup(name)
        except ExecutionError:
            return None

    @property
    def rng(self) -> np.random.Generator:
        return self.session.rng

    @property
    def state(self) -> dict:
        """Per-session resources (variables, queues), keyed by the op that owns them.

        Raises:
            CancelledError: the session was closed during this step (a queue made
                afresh now would wait forever).
        """
        if self.session._closed:
            raise CancelledError("its Session was closed during the step")
        return self.session.state

    @property
    def session_closed(self) -> bool:
        """Whether the session has been closed (a kernel that stored a resource in
        `state` just now checks it: close() may have missed it)."""
        return self.session._closed


class _DefaultSessions(threading.local):
    def __init__(self):
        self.stack: list = []


_default_sessions = _DefaultSessions()


def get_default_session() -> "Session | None":
    """The innermost Session of a `with sess:` or `with sess.as_default():` block on
    this thread, or None (TF1's tf.get_default_session). Never raises."""
    stack = _default_sessions.stack
    return stack[-1] if stack else None


def _leave_default(session: "Session") -> None:
    """Drop the innermost entry of `session` from this thread's default stack."""
    remove_innermost(_default_sessions.stack, session)


def _graph_of(obj) -> tuple[Graph, Model | None]:
    if isinstance(obj, Model):
        return obj.graph, obj
    if isinstance(obj, Graph):
        return obj, None
    ir = getattr(obj, "ir_graph", None)
    if ir is not None:
        return ir() if callable(ir) else ir, getattr(obj, "model", None)
    hint = ""
    if isinstance(obj, (str, bytes, os.PathLike)):
        # onnxruntime's InferenceSession takes a path: say how to load one here
        hint = ("; load the file first: og.Session(og.load(path)) for a .og file, "
                "og.Session(onegraph.convert.from_onnx(path)) for an .onnx file")
    elif type(obj).__name__ == "ModelProto" and type(obj).__module__.startswith("onnx"):
        hint = "; convert it first: og.Session(onegraph.convert.from_onnx(proto))"
    raise TypeError(f"Session needs a Model or Graph, got {type(obj).__name__}{hint}")


def _graph_argument(target, graph, config):
    """The graph a Session was given, by TF1's order (target, graph, config) or by
    onegraph's (graph first).

    Raises:
        TypeError: a graph given first and as graph= too, or config not a ConfigProto.
        ValueError: a distributed target (a str with "://"). Another str is taken as
            the graph, which `_graph_of` refuses naming the loaders (a model path).
    """
    from .session_config import ConfigProto

    if config is not None and not isinstance(config, ConfigProto):
        raise TypeError(f"Session: config must be an og.ConfigProto or None, got "
                        f"{type(config).__name__}")
    if isinstance(target, str) and "://" in target:
        raise ValueError(
            f"Session: target {target!r:.80} is not supported: onegraph runs in-process "
            "only, target must be '' or 'local' (distributed targets such as grpc://... "
            "are not supported here)")
    if target is None or (isinstance(target, str) and target in ("", "local")):
        return graph
    if graph is not None:
        raise TypeError(f"Session: got a graph first ({type(target).__name__}) and "
                        "graph= too; give one (TF1's order is target, graph, config)")
    return target


def _feeds_or_options(options, feeds):
    """`feeds` for `Session.run`: its third positional argument is TF1's options (a
    RunOptions, checked, otherwise unused) or, as before, a mapping of feeds.

    Raises:
        TypeError: options is neither a RunOptions nor a mapping, or a mapping given
            both third and as feeds=.
    """
    from .session_config import RunOptions

    if options is None or isinstance(options, RunOptions):
        return feeds
    if isinstance(options, Mapping):
        if feeds is not None:
            raise TypeError("Session.run: feeds given both third and as feeds=")
        return options
    raise TypeError(f"Session.run: options must be an og.RunOptions, got "
                    f"{type(options).__name__}")


class Session:
    """Runs steps of a graph: `run(fetches, feed_dict)`.

    Args:
        graph: a `onegraph.format.Model` (its main graph), a `onegraph.format.Graph`,
            or a training graph (`onegraph.Graph`); default: the default graph (TF1's
            `tf.Session()` inside `with g.as_default():`).
        target: '' or 'local' (TF1's in-process target), or the graph itself.
        config: an `og.ConfigProto`; kept as `session.config`. Its device, thread,
            GPU and timeout fields have no effect on onegraph's in-process CPU runtime.
        seed: seed of the random generator used by random ops: None (fresh entropy)
            or an int >= 0 (numpy integers too).
        memory_arena: keep freed heap memory mapped for the next run instead of
            returning it to the operating system (default True, like onnxruntime's
            `enable_cpu_mem_arena`). Without it, every run's intermediates are fresh
            pages again, and faulting them in cost 8-11% of a ShuffleNet or
            DenseNet-121 run. On glibc this sets malloc's thresholds for the whole
            process, once (`train/heap.py`); elsewhere, or when the environment
            already tunes malloc, it does nothing.

    TF1's order, `Session(target='', graph=None, config=None)`, is taken too: a Model or
    Graph given first is the graph (`og.Session(g)`), a str first is the target.

    Raises:
        TypeError: graph is not a Model or Graph, a graph is given both first and as
            graph=, config is not an og.ConfigProto, or seed is not None or an int.
        ValueError: seed is negative, or target is a distributed one ("grpc://...";
            everything runs in-process). A str target other than '', 'local' or such
            a URL is a TypeError naming the loaders (it is taken for a model path).

    Example::

        sess = og.Session(og.load("model.og"))
        (y,) = sess.run(["y"], {"x": np.ones((1, 4), np.float32)})

        with og.Session(graph) as sess:   # the default session inside (Tensor.eval),
            loss.eval(feed)               # closed at the end (variables freed)
    """

    # plan-time graph optimisations (train/optimize.py); False, set on a session at any
    # time, runs its graph as written from the next run on (plans are cached per value)
    optimize = True

    def __init__(self, target="", graph=None, config=None, seed: int | None = None,
                 memory_arena: bool = True):
        graph = _graph_argument(target, graph, config)
        if graph is None:
            from .graph import get_default_graph

            graph = get_default_graph()
        if seed is not None and (isinstance(seed, (bool, np.bool_)) or not isinstance(
                seed, (int, np.integer))):
            raise TypeError(f"Session: seed must be None or an int >= 0, got "
                            f"{type(seed).__name__} {seed!r:.60}")
        if seed is not None and seed < 0:
            raise ValueError(f"Session: seed must be >= 0, got {seed}")
        if memory_arena:
            keep_freed_memory()
        self._source = graph
        self.ir_graph, self.model = _graph_of(graph)
        self._seed = seed
        self.config = config
        self.sess_str = target if isinstance(target, str) else ""
        self.rng = np.random.default_rng(seed)
        # signatures of the model's other graphs run in a Session of their own
        self._signature_sessions: dict[int, Session] = {}
        self.state: dict = {}
        self._plans: collections.OrderedDict = collections.OrderedDict()
        self._sub_plans: dict = {}
        # constants folded once, shared by every plan: node id -> (node, inputs, values)
        self._folded: dict = {}
        self._views: dict = {}  # id(constant's array) -> (array, its read-only view)
        # reentrant: compiling may run a subgraph (constant folding), which compiles
        self._lock = threading.RLock()
        # an og.Graph still being built: compiling reads its node and tensor lists
        # several times, so it holds the lock that adding an op takes
        self._build_lock = getattr(graph, "_lock", None) or contextlib.nullcontext()
        self._node_names: dict[str, int] = {}
        self._node_names_count = -1  # graph.nodes length the name map was built for
        self._closed = False
        self._entered: list = []  # per `with` nesting: the graph context it entered

    # -- lifetime (TF1: with og.Session(g) as sess: ..., sess.close()) --------------

    def close(self) -> None:
        """Free what the session holds: variable values, queues, compiled plans (TF1's
        Session.close). An op of this session waiting on one of its queues in another
        thread raises og.CancelledError; `run` afterwards raises RuntimeError. Closing
        a closed session does nothing. Never raises."""
        from ..ops.queue import Queue

        with self._lock:
            if self._closed:
                return
            self._closed = True
            state, self.state = self.state, {}
            self._plans, self._sub_plans, self._folded, self._views = (
                collections.OrderedDict(), {}, {}, {})
            others, self._signature_sessions = self._signature_sessions, {}
        for other in others.values():
            other.close()
        # a snapshot: a step racing this close may still store into `state` (it then
        # abandons what it stored itself; see the queue kernel)
        for value in list(state.values()):
            if isinstance(value, Queue):
                value.abandon("its Session was closed")

    @property
    def graph(self):
        """The graph this session runs, as TF1's `Session.graph`: the `og.Graph` it was
        made with (or the default graph it took), so `sess.graph.get_tensor_by_name`
        and `with sess.graph.as_default():` work; for a session of a Model or of a
        `onegraph.format.Graph`, that format graph (the model's main graph). The
        format graph is `ir_graph` either way. Never raises."""
        ir_of_source = getattr(self._source, "ir_graph", None)
        return self._source if ir_of_source is self.ir_graph else self.ir_graph

    @property
    def closed(self) -> bool:
        """Whether `close()` has run."""
        return self._closed

    def variable_values(self) -> dict[int, np.ndarray]:
        """{tensor index: value} of the main graph's variables that hold a value in
        this session (initialized, assigned or restored), as C-ordered copies: what
        `og.save(..., session=)`, `to_model(session=)` and `to_onnx(session=)` store.

        Raises:
            RuntimeError: the session is closed (its values are gone; saving then
                would silently store the initial values).
        """
        if self._closed:
            raise RuntimeError("the session is closed, so its variable values are gone: "
                               "save or export inside the `with og.Session(...)` block, "
                               "or before sess.close()")
        out = {}
        for i, t in enumerate(self.ir_graph.tensors):
            if t.kind is TensorKind.VARIABLE:
                ref = self.state.get(("variable", id(self.ir_graph), i))
                if ref is not None and ref.value is not None:
                    out[i] = np.array(ref.value, order="C")
        return out

    def __enter__(self) -> "Session":
        """`with og.Session(g) as sess:` makes sess the default session (for
        Tensor.eval and Operation.run) and a training graph the default graph inside
        the block, and closes the session at its end, as in TF1.

        Raises:
            RuntimeError: the session is closed.
        """
        if self._closed:
            raise RuntimeError("Session: entering a closed session; make a new og.Session")
        graph_ctx = None
        as_default = getattr(self._source, "as_default", None)
        if as_default is not None:
            from .graph import get_default_graph

            if get_default_graph() is not self._source:
                graph_ctx = as_default()
                graph_ctx.__enter__()
        self._entered.append(graph_ctx)
        _default_sessions.stack.append(self)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        _leave_default(self)
        graph_ctx = self._entered.pop() if self._entered else None
        try:
            if graph_ctx is not None:
                graph_ctx.__exit__(exc_type, exc, tb)
        finally:
            self.close()
        return False

    @contextlib.contextmanager
    def as_default(self):
        """Make this the default session inside a `with` block on this thread, as
        TF1's Session.as_default: Tensor.eval() and Operation.run() use it. Unlike
        `with sess:`, the block's end does not close the session. Never raises."""
        _default_sessions.stack.append(self)
        try:
            yield self
        finally:
            _leave_default(self)

    # -- public API -----------------------------------------------------------------

    def run(self, fetches, feed_dict: Mapping | None = None, options=None,
            run_metadata: RunMetadata | None = None, *, feeds: Mapping | None = None):
        """Run one step and return the fetched values in the structure of `fetches`.

        Fetched arrays are the caller's own: writing into one never changes the graph,
        a variable, a fed array or a later run (as in TF1 and onnxruntime).

        Args:
            fetches: a tensor (handle, name or index), a target op (handle or node
                name; its result is None), or a list/tuple/dict nesting of those. A
                TF1-style name "op:k" not naming a tensor itself means output k of the
                node named op (or, for ":0", the tensor named op).
            feed_dict: maps tensors (handle, name or index) to values; fed tensors
                are not computed. `feeds` is an alias. A value is cast to the tensor's
                dtype, as TF1 feeds are, where that changes no value beyond float
                rounding: integers and bools to integer or float tensors, floats to
                float tensors (float64 to float32; ml_dtypes' bfloat16 and float8 types
                count as floats, int4 and uint4 as integers, so a float32 array feeds a
                bfloat16 tensor); a float fed to an integer tensor,
                or a value outside the tensor dtype's range, is a ShapeError. A
                tensor declared as a scalar also takes a one-element array of any rank
                (as onnxruntime does), fed as that scalar.
            options: an `og.RunOptions` (TF1's third argument). Its trace_level and
                timeout_in_ms have no effect: a run_metadata alone records the trace,
                and onegraph has no run timeout. A mapping here is taken as `feeds`
                (onegraph's former third argument).
            run_metadata: an `og.RunMetadata` that records each step's node, kernel
                time and output shapes (as TF1's `run_metadata`; see
                `train/profiling.py`). Without it runs are not timed at all.

        Raises:
            RuntimeError: the session is closed.
            TypeError: fetches is None, options is not a RunOptions (nor a mapping),
                run_metadata is not a RunMetadata, feed_dict is
                not a mapping, both feed_dict and feeds are given, or a fed value is a
                graph tensor or op (TF1's TypeError), not a value.
            CancelledError: the session was closed while the step waited on a queue.
            ExecutionError: a kernel failed (the message names node and op type), or
                there is no memory for the caller's copy of a fetched read-only value.
            ShapeError: a fed value's dtype or shape contradicts the tensor's, or its
                values do not fit the tensor's dtype.
            OneGraphError: an unknown fetch/feed, a handle of another graph, a tensor
                fed twice, an unsupported op, a fetch computed inside a while loop
                (not one of its results), or a fetch without a value in this run (in
                a cond branch that was not taken).
        """
        if self._closed:
            raise RuntimeError(_CLOSED)
        feeds = _feeds_or_options(options, feeds)
        if run_metadata is not None and not isinstance(run_metadata, RunMetadata):
            raise TypeError(f"run_metadata must be an og.RunMetadata, got "
                            f"{type(run_metadata).__name__}")
        if feed_dict is not None and feeds is not None:
            raise TypeError("Session.run: give feed_dict or feeds, not both")
        feed_dict = feed_dict if feed_dict is not None else (feeds or {})
        if not isinstance(feed_dict, Mapping):
            raise TypeError(f"Session.run: feed_dict must be a mapping (a dict) from "
                            f"tensors to values, got {type(feed_dict).__name__}")
        if fetches is None:
            outputs = [self.ir_graph.tensors[i].name for i in self.ir_graph.outputs]
            raise TypeError("Session.run: fetches is None; give the tensors or ops to "
                            "fetch (a name, a handle, or a list or dict of them)"
                            + (f", e.g. the graph outputs {outputs}" if outputs else "")
                            + " (onnxruntime's run(None, ...) fetches every output)")
        flat, rebuild = _flatten(fetches)
        fetch_tensors, targets, kinds = [], [], []
        for f in flat:
            kind, index = self._resolve(f)
            kinds.append(kind)
            (fetch_tensors if kind == "tensor" else targets).append(index)
        feed_items, fed_variables = self._through_variable_reads(
            [(self._resolve_tensor(k), v) for k, v in _feed_pairs(feed_dict)])
        if len({i for i, _ in feed_items}) != len(feed_items):
            twice = sorted({self.ir_graph.tensors[i].name for i, _ in feed_items
                            if sum(j == i for j, _ in feed_items) > 1})
            raise OneGraphError(f"Session.run: tensor(s) {twice} fed more than once "
                                "(by handle and by name?)")
        # one plan per set of feeds, fetches and targets, whatever their order, and per
        # `optimize` (set to False after a run, the graph runs as written from then on)
        key = (tuple(sorted(i for i, _ in feed_items)), tuple(sorted(set(fetch_tensors))),
               tuple(sorted(set(targets))), bool(self.optimize))
        plan = self._plans.get(key)
        if plan is not None:
            try:
                self._plans.move_to_end(key)  # recently used: dropped last
            except KeyError:  # another thread's new plan pushed it out just now
                pass
        else:
            with self._lock, self._build_lock:
                # close() (which takes the lock) may have run since the check above: a
                # plan made now would make the variables afresh, at their initial values
                if self._closed:
                    raise RuntimeError(_CLOSED)
                plan = self._plans.get(key)
                if plan is None:
                    plan = self._compile(self.ir_graph, list(key[1]), list(key[2]),
                                         set(key[0]))
                    if len(self._plans) >= MAX_PLANS:  # the least recently used
                        self._plans.popitem(last=False)
                    self._plans[key] = plan
        values = plan.template.copy()
        for index, value in feed_items:
            values[index] = self._check_feed(index, value)
        frame = _Frame(self.ir_graph, values, None)
        if run_metadata is None:
            self._execute(plan, frame)
        else:
            records: list = []
            start = time.perf_counter_ns()
            self._execute(plan, frame, records)
            run_metadata._record_run(records, start, time.perf_counter_ns())
        out = []
        it = iter(fetch_tensors)
        fed = [a for i, _ in feed_items for a in _arrays_in(values[i])]
        fed += fed_variables.values()
        given: dict[int, object] = {}  # tensor index -> what this run returns for it
        owners: set[int] = set()  # ids of the memory owners of the arrays given so far
        for kind in kinds:
            if kind == "tensor":
                index = next(it)
                v = fed_variables[index] if index in fed_variables else values[index]
                if v is DEAD:
                    raise OneGraphError(
                        f"fetched tensor {self.ir_graph.tensors[index].name!r} has no value "
                        "in this run: it is computed in a cond branch that was not taken")
                try:
                    if index not in given:
                        given[index] = _private(v, fed, owners)
                    out.append(given[index])
                except MemoryError:
                    raise ResourceExhaustedError(
                        f"fetched tensor {self.ir_graph.tensors[index].name!r}: no memory for "
                        f"the caller's copy of its {_nbytes(v):,} bytes") from None
            else:
                out.append(None)
        return rebuild(out)

    def make_callable(self, fetches, feed_list=None):
        """A function taking one value per entry of `feed_list` (positionally) that
        runs `fetches` with them, as TF1's Session.make_callable. The fetches and feeds
        are checked here, so a mistake shows when the callable is made, not at its
        first call; feeds are kept as tensor indices.

        Raises:
            TypeError: fetches is None, or feed_list is not a list/tuple of tensors.
            OneGraphError: an unknown fetch or feed, or a tensor listed twice in
                feed_list (as `run` reports them).
            The callable raises what `run` raises, and TypeError when it gets another
            number of values than feed_list has entries.
        """
        if feed_list is None:
            feed_list = []
        if not isinstance(feed_list, (list, tuple)):
            raise TypeError(f"make_callable: feed_list must be a list of tensors, got "
                            f"{type(feed_list).__name__}")
        if fetches is None:
            raise TypeError("make_callable: fetches is None; give the tensors or ops to "
                            "fetch")
        feeds = [self._resolve_tensor(f) for f in feed_list]
        if len(set(feeds)) != len(feeds):
            twice = sorted({self.ir_graph.tensors[i].name for i in feeds
                            if feeds.count(i) > 1})
            raise OneGraphError(f"make_callable: tensor(s) {twice} listed twice in "
                                "feed_list")
        self._flatten_and_resolve(fetches)  # unknown fetches are reported now

        def call(*values):
            if len(values) != len(feeds):
                raise TypeError(f"this callable takes {len(feeds)} value(s), one per "
                                f"feed_list entry, got {len(values)}")
            return self.run(fetches, dict(zip(feeds, values)))
        return call

    def _flatten_and_resolve(self, fetches) -> None:
        """Resolve every fetch of a nesting (raising as `run` would for a bad one)."""
        flat, _ = _flatten(fetches)
        for f in flat:
            self._resolve(f)

    def run_signature(self, name: str, /, **inputs) -> dict:
        """Run a named signature of the model: keyword inputs by key, returns outputs by key.
        A graph input with a default value (an ONNX initializer listed as a graph input)
        may be given by its name as well.

        A signature of another graph of the model than the Session's runs in a Session
        of that graph, made on first use and closed with this one (its own variable
        values and queues).

        Raises:
            RuntimeError: the session is closed.
            TypeError: name is not a str.
            OneGraphError: no such signature, or a missing/unknown input key.
            ShapeError: an input's value does not fit its tensor (the message names
                the key and the tensor).
            And what `run` raises for the step itself (ExecutionError, ...).
        """
        session, keys, fetches, feed_dict = self._signature_call(name, inputs)
        results = session.run(fetches, feed_dict)
        return dict(zip(keys, results[:len(keys)]))

    def _signature_session(self, sig) -> "Session":
        """The Session that runs `sig`: this one for a signature of its own graph, else
        one (made once, closed with this one) on the model's graph the signature
        names: its tensor indices mean tensors of that graph, not of this one."""
        target = self.model.graphs[sig.graph]
        if target is self.ir_graph:
            return self
        with self._lock:
            if self._closed:
                raise RuntimeError("Session: run on a closed session; make a new og.Session")
            other = self._signature_sessions.get(sig.graph)
            if other is None or other.ir_graph is not target:
                other = Session(target, seed=self._seed, memory_arena=False)
                self._signature_sessions[sig.graph] = other
            other.optimize = self.optimize  # as set on this one, now or later
            return other

    def _signature_call(self, name: str, inputs: Mapping
                        ) -> tuple["Session", list, list, dict]:
        """(session, output keys, fetches, feed_dict) that run signature `name` on
        `inputs` (by key) in `session` (this one, or one on the signature's graph when
        that is another graph of the model): the outputs' tensors in key order, then
        the signature's targets.

        Raises:
            TypeError: name is not a str.
            OneGraphError: no such signature, or a missing/unknown input key.
            ShapeError: an input's value does not fit its tensor (the message names
                the key and the tensor).
        """
        if not isinstance(name, str):
            raise TypeError(f"signature name must be a str, got {type(name).__name__}")
        if self.model is None or name not in self.model.signatures:
            known = sorted(self.model.signatures) if self.model else []
            raise OneGraphError(f"no signature {name!r} (available: {known})")
        sig = self.model.signatures[name]
        # graph inputs with a default value (an ONNX initializer listed as an input) may
        # be fed by their names too, as Session.run, `onegraph run` and onnxruntime allow
        g = self.model.graphs[sig.graph]
        taken = set(sig.inputs.values())
        defaults = {g.tensors[i].name: i for i in g.inputs
                    if g.tensors[i].data is not None and i not in taken
                    and g.tensors[i].name not in sig.inputs}
        problem = input_mismatch(f"signature {name!r}", set(sig.inputs) | set(defaults),
                                 set(sig.inputs), inputs)
        if problem:
            raise OneGraphError(problem)
        session = self._signature_session(sig)
        keys = sorted(sig.outputs)
        fetches = [sig.outputs[k] for k in keys] + [NodeTarget(n) for n in sig.targets]
        feed_dict = {}
        for k, v in inputs.items():
            index = sig.inputs[k] if k in sig.inputs else defaults[k]
            try:  # checked here to name the key the caller used, not only the tensor
                feed_dict[index] = session._check_feed(index, v)
            except ShapeError as e:
                raise ShapeError(f"signature {name!r} input {k!r}: {e}") from None
        return session, keys, fetches, feed_dict

    # -- resolution -----------------------------------------------------------------

    def _check_owner(self, f) -> None:
        """Handles of another graph would resolve to whatever sits at their index
        here (TF1: "not an element of this graph")."""
        owner = getattr(f, "graph", None)
        if owner is None or owner is self.ir_graph:
            return
        ir = getattr(owner, "ir_graph", owner)
        if ir is not self.ir_graph:
            raise OneGraphError(f"{f!r} belongs to another graph, not to this Session's "
                                f"graph {self.ir_graph.name!r} (TF1: not an element of this "
                                "graph)")

    def _resolve(self, f) -> tuple[str, int]:
        node_index = getattr(f, "node_index", None)
        if node_index is not None and getattr(f, "tensor_index", None) is None:
            self._check_owner(f)
            if not 0 <= node_index < len(self.ir_graph.nodes):
                raise OneGraphError(f"node index {node_index} out of range")
            return "node", int(node_index)
        if isinstance(f, str) and self.ir_graph.find_tensor(f) is None:
            names = self._node_name_map()
            if f in names:
                return "node", names[f]
        return "tensor", self._resolve_tensor(f)

    def _resolve_tensor(self, f) -> int:
        index = getattr(f, "tensor_index", None)
        if index is not None:
            self._check_owner(f)
        else:
            if isinstance(f, str):
                index = self.ir_graph.find_tensor(f)
                if index is not None and self.ir_graph.name_is_repeated(f):
                    twins = [i for i, t in enumerate(self.ir_graph.tensors) if t.name == f]
                    raise OneGraphError(f"graph {self.ir_graph.name!r} has {len(twins)} "
                                        f"tensors named {f!r} (indices {twins}); feed or "
                                        "fetch one by its index")
                if index is None:
                    index = self._tf_output_name(f)
                if index is None:
                    raise OneGraphError(f"graph {self.ir_graph.name!r} has no tensor named {f!r}")
            elif isinstance(f, (int, np.integer)) and not isinstance(f, (bool, np.bool_)):
                index = int(f)
            else:
                raise OneGraphError(f"cannot fetch or feed a {type(f).__name__}")
        if not 0 <= index < len(self.ir_graph.tensors):
            raise OneGraphError(f"tensor index {index} out of range")
        return index

    def _through_variable_reads(self, feed_items: list) -> tuple[list, dict]:
        """(feed_items, {variable tensor: fed value}): feeds of a variable's own tensor
        (fed by name: "v", "v:0") become feeds of every ReadVariable of it, so reads see
        the fed value in this run, as feeding the Variable handle (its shared read)
        does and TF1's feed of a variable does; fetching the variable gives the fed
        value too. The variable itself keeps its value, and ops that change or save it
        act on it.

        Raises:
            ShapeError: the value does not fit the variable.
            OneGraphError: a node passes the variable on (into a while_loop or cond,
                through Enter, Switch or Identity), where the fed value would not reach.
        """
        tensors = self.ir_graph.tensors
        if all(tensors[i].kind is not TensorKind.VARIABLE for i, _ in feed_items):
            return feed_items, {}
        out, variables = [], {}
        for i, value in feed_items:
            if tensors[i].kind is not TensorKind.VARIABLE:
                out.append((i, value))
                continue
            variables[i] = value = _check_tensor_feed(tensors[i], value)
            for node in self.ir_graph.nodes:
                if i not in node.inputs:
                    continue
                if node.op_type == "ReadVariable" and node.domain == "onegraph" \
                        and tuple(node.inputs[:1]) == (i,) and node.outputs:
                    out.append((node.outputs[0], value))
                elif not (REGISTRY.has(node.op_type, node.domain)
                          and REGISTRY.get(node.op_type, node.domain).stateful):
                    raise OneGraphError(
                        f"variable {tensors[i].name!r} is fed by name, but node "
                        f"{node.name!r} ({node.op_type}) passes the variable itself on "
                        "(into a while_loop or cond), where the fed value cannot reach; "
                        "feed the value read inside instead")
        return out, variables

    def _tf_output_name(self, name: str) -> int | None:
        """The tensor a TF1-style "op:k" name means (output k of the node named op; a
        tensor's own name with ":0"), or None. Only asked when no tensor has `name`."""
        return output_named(self.ir_graph, name, self._node_name_map().get)

    def _node_name_map(self) -> dict[str, int]:
        # Training graphs keep growing after the Session exists: rebuild on change.
        if self._node_names_count != len(self.ir_graph.nodes):
            self._node_names = {n.name: i for i, n in enumerate(self.ir_graph.nodes)}
            self._node_names_count = len(self.ir_graph.nodes)
        return self._node_names

    def _check_feed(self, index: int, value):
        t = self.ir_graph.tensors[index]
        if t.containers:
            return _check_container_feed(t, value, t.containers)
        if t.dtype is DType.UNDEFINED and t.shape is None and (
                value is None or isinstance(value, (list, tuple))):
            # An untyped input may hold an ONNX sequence (a list of tensors) or an
            # empty optional (None); both pass through as they are.
            return None if value is None else [np.asarray(v) for v in value]
        return _check_tensor_feed(t, value)

    # -- planning -------------------------------------------------------------------

    def _compile(self, graph: Graph, fetches: list[int], targets: list[int],
                 fed: set[int], graph_inputs: Sequence[int] = ()) -> _Plan:
        producers = graph.producers()
        # Values a node's subgraphs read from this graph by name (ONNX outer scope)
        # are its implicit inputs: they must be computed first and kept alive.
        implicit = _implicit_inputs(graph)
        needed_nodes: set[int] = set()
        stack_t = [t for t in fetches if t not in fed]
        stack_n = list(targets)
        seen_t: set[int] = set()
        while stack_t or stack_n:
            if stack_t:
                t = stack_t.pop()
                if t in seen_t or t in fed:
                    continue
                seen_t.add(t)
                n = producers.get(t)
                if n is not None:
                    stack_n.append(n)
                continue
            n = stack_n.pop()
            if n in needed_nodes:
                continue
            needed_nodes.add(n)
            node = graph.nodes[n]
            stack_t.extend(i for i in node.inputs if i >= 0)
            stack_t.extend(implicit.get(n, ()))
            stack_n.extend(node.control_inputs)
        order = [n for n in _order_with_implicit(graph, implicit) if n in needed_nodes]
        if frames.has_frames(graph, needed_nodes):
            # while-loop frames run whole, as one macro step each (train/frames.py)
            grown = frames.frame_closure(graph, needed_nodes)
            if grown != needed_nodes:  # plan again with the whole frames as targets
                return self._compile(graph, fetches, sorted(set(targets) | grown), fed,
                                     graph_inputs)
            order = frames.contract(graph, order)
            _check_frame_fetches(graph, order, fetches, fed, producers)

        template: list = [None] * len(graph.tensors)
        for i, t in enumerate(graph.tensors):
            if t.kind is TensorKind.VARIABLE:
                template[i] = self._variable(graph, i)
            elif t.data is not None:
                template[i] = self._constant_view(t.data)
        keep = set(fetches) | fed | {i for i, v in enumerate(template) if v is not None}
        keep.update(graph_inputs)
        last_use: dict[int, int] = {}
        for pos, n in enumerate(order):
            for i in (graph.nodes[n].inputs if isinstance(n, int) else n.inputs):
                if i >= 0:
                    last_use[i] = pos
            if isinstance(n, int):
                for c in graph.nodes[n].control_inputs:
                    for i in graph.nodes[c].outputs[:1]:
                        last_use[i] = max(last_use.get(i, pos), pos)
                # (pivots reached through NoOp relays are read as ctrl too)
                for i in frames.control_outputs(graph, n, lambda c: True):
                    last_use[i] = max(last_use.get(i, pos), pos)
            for i in implicit.get(n, ()):
                last_use[i] = pos
        steps = []
        uses_dead = False
        free_tensors = set()
        for pos, n in enumerate(order):
            if not isinstance(n, int):  # a loop frame (train/frames.py)
                n.kernel = frames.FrameRunner(self, graph, n, template,
                                              graph.topological_order())
                free = tuple(i for i in set(n.inputs) if last_use.get(i) == pos
                             and i not in keep)
                steps.append(_Step(n.kernel, {}, tuple(n.inputs), tuple(n.outputs), n.node,
                                   free, False))
                for i in n.inputs:
                    if producers.get(i) is None and template[i] is None and i not in fed \
                            and i not in graph_inputs:
                        free_tensors.add(i)
                continue
            node = graph.nodes[n]
            where = f"node {node.name!r} ({node.op_type}): "
            op = REGISTRY.get(node.op_type, node.domain, where)
            if op.kernel is None:
                raise OneGraphError(f"{where}op has no kernel")
            op.check_arity(node.inputs, node.outputs, where)
            attrs = op.resolve_attrs(node.attributes, where, len(node.outputs))
            attrs[NODE_KEY] = (id(graph), n)
            free = tuple(i for i in set(node.inputs) if i >= 0 and last_use.get(i) == pos
                         and i not in keep)
            dead_aware = node.op_type in _DEAD_AWARE
            uses_dead = uses_dead or node.op_type in ("Switch", "Merge")
            ctrl = frames.control_outputs(graph, n, lambda c: graph.nodes[c].op_type in _PIVOTS)
            steps.append(_Step(op.kernel, attrs, tuple(node.inputs), tuple(node.outputs),
                               node, free, dead_aware, ctrl))
            for i in node.inputs:
                if i >= 0 and producers.get(i) is None and template[i] is None \
                        and i not in fed and i not in graph_inputs:
                    free_tensors.add(i)
        for t in fetches:
            if t not in fed and producers.get(t) is None and template[t] is None \
                    and t not in graph_inputs:
                free_tensors.add(t)
        # A node run for one output while another is fed (`a` of `a, b = og.split(x)`):
        # the fed value must stand, so the node's own value for it goes to a spare slot
        if any(o in fed for step in steps for o in step.outputs):
            sink = len(template)
            template.append(None)
            for step in steps:
                if any(o in fed for o in step.outputs):
                    step.outputs = tuple(sink if o in fed else o for o in step.outputs)
        # -- plan-time optimisations (constant folding, Conv/BN/Relu fusion): see
        # train/optimize.py. Set Session.optimize = False to run the graph as written.
        if self.optimize and not uses_dead and all(isinstance(n, int) for n in order):
            steps = optimize_plan(graph, steps, template, keep, fed, graph_inputs,
                                  self._folded)
        return _Plan(steps, template, sorted(free_tensors), uses_dead)

    def _constant_view(self, data):
        """The read-only view of a constant's array the plans share (`_read_only`): one
        per array, so a folded value is known to come from the same inputs."""
        held = self._views.get(id(data))
        if held is None or held[0] is not data:
            held = self._views[id(data)] = (data, _read_only(data))
            if type(held[1]) is np.ndarray and not held[1].flags.writeable:
                mark_plan_constant(held[1])
        return held[1]

    def _variable(self, graph: Graph, index: int):
        """The Session's state slot for a VARIABLE tensor (initialised from its data)."""
        key = ("variable", id(graph), index)
        ref = self.state.get(key)
        if ref is None:
            t = graph.tensors[index]
            ref = VariableRef(t.name, None if t.data is None else np.array(t.data))
            # two threads may get here at once: both must end up with the same slot
            ref = self.state.setdefault(key, ref)
        return ref

    # -- execution ------------------------------------------------------------------

    def _execute(self, plan: _Plan, frame: _Frame, trace: list | None = None) -> None:
        """Run a plan's steps on frame.values. With `trace`, append (step index, node,
        start ns, end ns, output info) per executed step."""
        if not fp_errors_quiet():
            # numpy fp warnings off once per run, not once per kernel (a context
            # variable, so it is per thread): kernels then skip their own errstate
            with quiet_fp_errors():
                return self._execute(plan, frame, trace)
        values = frame.values
        if plan.free_tensors:
            for i in plan.free_tensors:
                if values[i] is None:
                    if frame.parent is None:
                        t = frame.graph.tensors[i]
                        raise OneGraphError(f"tensor {t.name!r} must be fed: it is a graph "
                                            "input or has no producer")
                    values[i] = frame.parent.lookup(frame.graph.tensors[i].name)
        ctx = RunContext(self, frame)
        step = None
        running = [None]  # the dead-aware loop's current step, for the error message
        try:
            if plan.uses_dead or trace is not None:
                # the timed loop is this one too: the plain loop below stays lean
                self._execute_with_dead(plan, values, ctx, trace, running)
                return
            for step in plan.steps:
                begin_kernel()
                outs = step.kernel([values[i] if i >= 0 else None for i in step.inputs],
                                   step.attrs, ctx)
                for i, v in zip(step.outputs, outs):
                    values[i] = v
                for i in step.free:
                    values[i] = None
        except OneGraphError as e:
            step = step if step is not None else running[0]
            if step is None or str(e).startswith("node "):
                raise
            raise type(e)(f"node {step.node.name!r} ({step.node.op_type}): {e}") from e
        except Exception as e:
            step = step if step is not None else running[0]
            if step is None:
                raise
            args = [values[i] if i >= 0 else None for i in step.inputs]
            raise kernel_failure(e, f"node {step.node.name!r} ({step.node.op_type})",
                                 args) from e

    def _execute_with_dead(self, plan: _Plan, values: list, ctx,
                           trace: list | None = None, running: list | None = None) -> None:
        """The step loop with dead-value propagation (a dead input makes a step's
        outputs dead unless the op takes dead inputs), optionally timed into `trace`;
        running[0] is kept at the step being run."""
        running = running if running is not None else [None]
        for index, step in enumerate(plan.steps):
            running[0] = step
            args = [values[i] if i >= 0 else None for i in step.inputs]
            if plan.uses_dead and (
                    not step.dead_aware and any(a is DEAD for a in args)
                    or step.ctrl and any(values[i] is DEAD for i in step.ctrl)):
                outs = (DEAD,) * len(step.outputs)
            elif trace is None:
                begin_kernel()
                outs = step.kernel(args, step.attrs, ctx)
            else:
                begin_kernel()
                t0 = time.perf_counter_ns()
                outs = step.kernel(args, step.attrs, ctx)
                t1 = time.perf_counter_ns()
                trace.append((index, step.node, t0, t1, output_info(outs)))
            for i, v in zip(step.outputs, outs):
                values[i] = v
            for i in step.free:
                values[i] = None

    def _run_subgraph(self, graph: Graph, inputs: list, parent: _Frame) -> list:
        key = (id(graph), bool(self.optimize))
        plan = self._sub_plans.get(key)
        if plan is None or plan[0] is not graph:
            with self._lock, self._build_lock:
                plan = self._sub_plans.get(key)
                if plan is None or plan[0] is not graph:
                    compiled = self._compile(graph, list(graph.outputs), [],
                                             set(graph.inputs), graph_inputs=graph.inputs)
                    plan = (graph, compiled)
                    self._sub_plans[key] = plan
        compiled = plan[1]
        if len(inputs) != len(graph.inputs):
            raise ExecutionError(f"subgraph {graph.name!r} takes {len(graph.inputs)} inputs, "
                                 f"got {len(inputs)}")
        values = compiled.template.copy()
        for i, v in zip(graph.inputs, inputs):
            values[i] = v
        self._execute(compiled, _Frame(graph, values, parent))
        return [values[i] for i in graph.outputs]


class InteractiveSession(Session):
    """A Session that makes itself the default session, and a training graph the
    default graph, from the moment it is made until `close()` (on the thread that made
    it): for shells and notebooks, where `Tensor.eval()` should just work, as TF1's
    InteractiveSession.

    Args:
        graph: what `Session` takes; default: the default graph.
        seed, memory_arena: as for `Session`.

    Raises:
        as `Session`.
    """

    def __init__(self, target="", graph=None, config=None, seed: int | None = None,
                 memory_arena: bool = True):
        graph = _graph_argument(target, graph, config)
        if graph is None:
            from .graph import get_default_graph

            graph = get_default_graph()
        super().__init__("", graph, config, seed, memory_arena)
        from . import graph as _graph_module

        # the creating thread's stacks themselves, so that a close() from any thread
        # takes these entries out of them
        self._installed = [(_default_sessions.stack, self)]
        if hasattr(graph, "as_default"):
            self._installed.append((_graph_module._scopes.graphs, graph))
        for stack, entry in self._installed:
            stack.append(entry)

    def close(self) -> None:
        """`Session.close`, and this session and its graph stop being the defaults.
        Never raises."""
        super().close()
        installed, self._installed = self._installed, []
        for stack, entry in installed:
            remove_innermost(stack, entry)


def _check_frame_fetches(graph: Graph, order: list, fetches: list[int], fed: set,
                         producers: dict) -> None:
    """Refuse fetching a tensor computed inside a while-loop frame (not its Exit)."""
    units = [it for it in order if not isinstance(it, int)]
    for t in fetches:
        if t in fed:
            continue
        for unit in units:
            if t not in unit.outputs and producers.get(t) in unit.nodes:
                raise OneGraphError(
                    f"cannot fetch {graph.tensors[t].name!r}: it is computed inside while "
                    f"loop {unit.name!r} and has no value outside it; fetch a result of "
                    "the loop instead")


def _free_names(graph: Graph, memo: dict) -> frozenset[str]:
    """Names a (sub)graph reads from enclosing scopes, including its nested subgraphs'.

    `memo` (id -> result) lives for one plan compilation only: graphs may still be
    edited between compilations, and a global cache would also keep them alive.
    """
    cached = memo.get(id(graph))
    if cached is not None:
        return cached
    produced = {t for node in graph.nodes for t in node.outputs}
    defined = {graph.tensors[i].name for i in set(graph.inputs) | produced}
    defined.update(t.name for t in graph.tensors
                   if t.data is not None or t.kind is TensorKind.VARIABLE)
    free = set()
    for node in graph.nodes:
        for i in node.inputs:
            if i >= 0 and graph.tensors[i].name not in defined:
                free.add(graph.tensors[i].name)
        for sub in node.subgraphs():
            free.update(_free_names(sub, memo) - defined)
    result = frozenset(free)
    memo[id(graph)] = result
    return result


def _implicit_inputs(graph: Graph) -> dict[int, list[int]]:
    """Node index -> tensors of `graph` that the node's subgraphs read by name."""
    out = {}
    memo: dict = {}
    for n, node in enumerate(graph.nodes):
        subs = node.subgraphs()
        if not subs:
            continue
        names = set().union(*(_free_names(s, memo) for s in subs))
        found = [graph.find_tensor(name) for name in sorted(names)]
        out[n] = [i for i in found if i is not None]
    return out


def _order_with_implicit(graph: Graph, implicit: dict[int, list[int]]) -> list[int]:
    """Topological order that also respects implicit (outer-scope) inputs."""
    if not any(implicit.values()):
        return graph.topological_order()
    from ..format.ir import Node, topological_order

    nodes = [Node(node.op_type, list(node.inputs) + implicit.get(n, []), node.outputs,
                  control_inputs=node.control_inputs) for n, node in enumerate(graph.nodes)]
    order = topological_order(len(graph.tensors), nodes)
    if order is None:
        raise OneGraphError(f"graph {graph.name!r}: cycle through subgraph outer-scope reads")
    return order


def _nbytes(value) -> int:
    """The size of a fetched value (0 for what is not an array)."""
    return int(getattr(value, "nbytes", 0))


def _read_only(data):
    """A read-only view of a constant's array (the array itself if it is read-only):
    its runs' results that are the constant or views of it come out read-only, so
    `_private` copies them; the model's array (maybe the caller's) keeps its flags."""
    if type(data) is not np.ndarray or not data.flags.writeable:
        return data
    view = data.view()
    view.flags.writeable = False
    return view


def _arrays_in(value) -> list:
    """The arrays of a value: itself, or the elements of a sequence or map."""
    if type(value) is np.ndarray:
        return [value]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _arrays_in(v)]
    if isinstance(value, dict):
        return [a for v in value.values() for a in _arrays_in(v)]
    return []


def _memory_owner(a: np.ndarray):
    """The object that owns an array's memory: the end of its chain of bases."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a if a.base is None else a.base


def _private(value, fed: list, owners: set | None = None):
    """A fetched value the caller may keep and modify: arrays that are not the run's
    own (a constant, a folded constant, a variable's state, all read-only, or a view
    of an array in `fed`) are copied, as TF1 and onnxruntime return independent
    arrays; so are the arrays inside a sequence or map, and arrays whose memory owner
    is in `owners` (what the run already gave; the given array's owner is added).
    A fetched VARIABLE tensor gives a copy of the variable's current value, as in TF1.

    Raises:
        ExecutionError: a fetched variable was never initialised.
    """
    if type(value) is VariableRef:
        return value.read().copy()
    if isinstance(value, (list, tuple)):  # a sequence (or an optional sequence)
        return type(value)(_private(v, fed, owners) for v in value)
    if isinstance(value, dict):  # a map
        return {k: _private(v, fed, owners) for k, v in value.items()}
    if type(value) is not np.ndarray:
        return value
    # two fetched tensors (a Relu and a Reshape of it) may be one buffer: `owners`
    # holds the memory owners of the arrays already given, so each is the caller's own
    # (as in onnxruntime)
    shared = owners is not None and id(_memory_owner(value)) in owners
    if shared or not value.flags.writeable or any(
            type(f) is np.ndarray and np.may_share_memory(value, f) for f in fed):
        value = value.copy()
    if owners is not None:
        owners.add(id(_memory_owner(value)))
    return value


def _flatten(fetches):
    """Flatten a nesting of lists/tuples (namedtuples too)/dicts; return
    (leaves, rebuild(leaves)). An og.IndexedSlices comes back as an
    og.IndexedSlicesValue (values, indices, dense_shape), as in TF1."""
    if isinstance(fetches, (list, tuple)):
        parts = [_flatten(f) for f in fetches]
        leaves = [leaf for p in parts for leaf in p[0]]
        sizes = [len(p[0]) for p in parts]

        def rebuild(values, parts=parts, sizes=sizes, kind=type(fetches)):
            out, pos = [], 0
            for (_, sub), n in zip(parts, sizes):
                out.append(sub(values[pos:pos + n]))
                pos += n
            if kind is list:
                return out
            if kind is tuple:
                return tuple(out)
            if hasattr(kind, "_fields"):  # a namedtuple
                return kind(*out)
            return kind(out)

        return leaves, rebuild
    if isinstance(fetches, dict):
        keys = list(fetches)
        leaves, sub = _flatten([fetches[k] for k in keys])
        return leaves, lambda values: dict(zip(keys, sub(values)))
    from .gradients import IndexedSlices, IndexedSlicesValue  # (gradients is above us)

    components = getattr(fetches, "_fetch_components", None)
    if components is not None and not isinstance(fetches, type):
        # a composite (og.SparseTensor): its tensors, and how their values make its value
        return components()
    if isinstance(fetches, IndexedSlices):
        # a sparse gradient: its values and indices, and the dense tensor for its shape
        return ([fetches.values, fetches.indices, fetches.like],
                lambda values: IndexedSlicesValue(values[0], values[1],
                                                  np.asarray(values[2].shape, np.int64)))
    return [fetches], lambda values: values[0]


def _feed_pairs(feed_dict) -> list:
    """(key, value) of each feed, a composite key (og.SparseTensor) giving one pair per
    component tensor.

    Raises:
        TypeError: a composite's value does not fit it.
    """
    pairs = []
    for key, value in feed_dict.items():
        components = getattr(key, "_feed_components", None)
        pairs.extend(components(value) if components is not None else [(key, value)])
    return pairs


def input_mismatch(what: str, takes: set, needs: set, given) -> str | None:
    """What is wrong with the input keys `given` for `what` (a signature, a graph),
    which takes the keys `takes` and needs `needs`: "signature 'serving' takes inputs
    ['x']; missing ['x'], unknown ['z']" (an empty list left out), or None."""
    missing, unknown = sorted(needs - set(given)), sorted(set(given) - takes)
    if not missing and not unknown:
        return None
    said = [f"{k} {v}" for k, v in (("missing", missing), ("unknown", unknown)) if v]
    return f"{what} takes inputs {sorted(takes)}; " + ", ".join(said)


def _check_tensor_feed(t, value):
    """The fed value for plain tensor t, cast where the kinds allow it.

    Raises:
        TypeError: the value is a graph tensor or op (a handle), not a value.
        ShapeError: the dtype cannot be cast or the shape does not match t's.
    """
    if type(value) is not np.ndarray and (
            hasattr(value, "tensor_index") or hasattr(value, "node_index")):
        # numpy would make it an object array, refused as "dtype object"
        raise TypeError(f"feed for {t.name!r}: the value is a graph tensor or op "
                        f"({value!r:.80}), not a value; feed arrays or numbers (run it "
                        "first and feed the result), as TF1 requires")
    try:
        if t.dtype is DType.STRING:
            value = _string_feed(t, value)
        else:
            value = np.asarray(value)
    except (ValueError, TypeError, OverflowError) as e:
        raise ShapeError(f"feed for {t.name!r}: not an array ({e})") from None
    if t.dtype not in (DType.UNDEFINED, DType.STRING) and value.dtype != t.dtype.numpy:
        want = t.dtype.numpy
        have_kind, want_kind = _number_kind(value.dtype), _number_kind(want)
        if have_kind in "iub" and want_kind in "iuf" or \
                have_kind == "f" and want_kind == "f":
            value = _cast_feed(t, value, want)
        else:
            raise ShapeError(f"feed for {t.name!r}: dtype {value.dtype} does not match "
                             f"the tensor's {t.dtype.short_name}")
    if t.shape is not None:
        if not t.shape and value.size == 1 and value.ndim:
            # a declared scalar fed one element as [1] or [1, 1] (as onnxruntime's
            # JavaScript users build Silero VAD's sample rate): that element, as a scalar
            value = value.reshape(())
        if value.ndim != len(t.shape) or any(
                d >= 0 and d != v for d, v in zip(t.shape, value.shape)):
            raise ShapeError(f"feed for {t.name!r}: shape {list(value.shape)} does not "
                             f"match the tensor's {list(t.shape)} (-1 = any)")
    return value


def _string_feed(t, value) -> np.ndarray:
    """The value fed to string tensor t as an object array holding the very str and
    bytes objects given (a fixed-width numpy array would drop trailing NULs and pad
    every element to the longest).

    Raises:
        ShapeError: the values are not str or bytes: numbers are not strings
            (onnxruntime refuses them too; str() of each would silently feed '1.5').
    """
    given = getattr(value, "dtype", None)
    if given is not None and given.kind not in "USO":
        raise ShapeError(f"feed for {t.name!r}: dtype {given} does not match the tensor's "
                         "string (feed str or bytes values)")
    value = np.asarray(value, dtype=object)
    if given is None or given.kind == "O":
        odd = next((v for v in value.flat if not isinstance(v, (str, bytes))), None)
        if odd is not None:
            raise ShapeError(f"feed for {t.name!r}: a {type(odd).__name__} value "
                             f"{odd!r:.40} is not a string (feed str or bytes values)")
    return value


def _cast_feed(t, value, want):
    """value cast to dtype `want` for tensor t, refusing casts that change values
    beyond rounding: integers out of an integer type's range (they would wrap) and
    finite floats past a float type's range (they would become inf).

    Raises:
        ShapeError: a value does not fit the tensor's dtype.
    """
    have_kind, want_kind = _number_kind(value.dtype), _number_kind(want)
    if value.size:
        if want_kind in "iu" and have_kind in "iu":
            info = _iinfo(want)
            lo, hi = value.min(), value.max()
            if lo < info.min or hi > info.max:
                raise ShapeError(f"feed for {t.name!r}: values [{lo}, {hi}] do not fit "
                                 f"the tensor's {t.dtype.short_name} "
                                 f"[{info.min}, {info.max}]")
        elif want_kind == "f" and have_kind in "iuf":
            with np.errstate(over="ignore", invalid="ignore"):
                out = value.astype(want)
            # past the range a float becomes inf, or NaN in the float8 types without
            # infinities (float8_e4m3fn, ...)
            lost = ~np.isfinite(out)
            if have_kind == "f":
                lost &= np.isfinite(value)
            if lost.any():
                big = value[lost].flat[0]
                raise ShapeError(f"feed for {t.name!r}: value {big} overflows the "
                                 f"tensor's {t.dtype.short_name} "
                                 f"(max {float(_finfo(want).max):g})")
            return out
    return value.astype(want)


def _number_kind(dtype: np.dtype) -> str:
    """numpy's kind letter of `dtype`, also for ml_dtypes' types, whose own kind is 'V':
    'f' for bfloat16 and the float8/float4 types, 'i'/'u' for int4/uint4/int2/uint2."""
    if dtype.kind != "V" or not dtype.type.__module__.startswith("ml_dtypes"):
        return dtype.kind
    if "float" in dtype.name:
        return "f"
    return "u" if dtype.name.startswith("uint") else "i"


def _iinfo(dtype: np.dtype):
    """np.iinfo, also for ml_dtypes' int4/uint4/int2/uint2."""
    if dtype.kind in "iu":
        return np.iinfo(dtype)
    import ml_dtypes  # the type is one of its own, so it is installed

    return ml_dtypes.iinfo(dtype)


def _finfo(dtype: np.dtype):
    """np.finfo, also for ml_dtypes' bfloat16 and float8/float4 types."""
    if dtype.kind == "f":
        return np.finfo(dtype)
    import ml_dtypes  # the type is one of its own, so it is installed

    return ml_dtypes.finfo(dtype)


def _check_container_feed(t, value, containers):
    """The fed value for a sequence/optional/map tensor t: None for an empty optional,
    a list for a sequence, a dict for a map, each element checked against t's element
    dtype and shape.

    Raises:
        ShapeError: a sequence is fed something other than a list/tuple, a map something
            other than a dict (or keys of the wrong type), or an element does not match.
    """
    if not containers:
        return _check_tensor_feed(t, value)
    if containers[0] is Container.OPTIONAL:
        return None if value is None else _check_container_feed(t, value, containers[1:])
    if containers[0] in (Container.MAP_INT64, Container.MAP_STRING):
        return _check_map_feed(t, value, containers)
    if not isinstance(value, (list, tuple)):
        raise ShapeError(f"feed for {t.name!r}: expects a sequence (a list of arrays), "
                         f"got {type(value).__name__}")
    return [_check_container_feed(t, v, containers[1:]) for v in value]


def _check_map_feed(t, value, containers):
    """A fed map (a dict) for t: keys ints (MAP_INT64) or strs (MAP_STRING), each value
    checked against the next wrapper or t's element (a number becomes a 0-d array).

    Raises:
        ShapeError: not a dict, a key of the wrong type, or a value that does not match.
    """
    if not isinstance(value, dict):
        raise ShapeError(f"feed for {t.name!r}: expects a map (a dict), got "
                         f"{type(value).__name__}")
    int_keys = containers[0] is Container.MAP_INT64
    out = {}
    for key, v in value.items():
        ok = isinstance(key, (int, np.integer)) and not isinstance(key, bool) if int_keys \
            else isinstance(key, str)
        if not ok:
            raise ShapeError(f"feed for {t.name!r}: map key {key!r} is not "
                             f"{'an int' if int_keys else 'a str'}")
        out[int(key) if int_keys else key] = _check_container_feed(t, v, containers[1:])
    return out


def model_with_values(model: Model, session: Session) -> Model:
    """A copy of `model` whose variables hold their current values in `session` (a
    Session of that model), sharing its other arrays: what `og.save(model, path,
    session=sess)` and `to_onnx(model, session=sess)` write.

    Raises:
        OneGraphError: `session` runs another graph than `model`'s main graph.
        RuntimeError: the session is closed.
    """
    import copy

    from ..format import Tensor

    if session.ir_graph is not model.graph:
        raise OneGraphError("the session was made for another model than the one saved "
                            "(make it with og.Session(model) for this model)")
    g = copy.copy(model.graph)
    g.tensors = list(g.tensors)
    for i, value in session.variable_values().items():
        t = g.tensors[i]
        g.tensors[i] = Tensor(t.name, t.dtype, value.shape, t.kind, value, t.quantization)
    out = copy.copy(model)
    out.graphs = [g] + list(model.graphs[1:])
    out.path = None
    out.file_info = None
    return out
