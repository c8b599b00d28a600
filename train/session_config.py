"""TF1's session configuration messages: ConfigProto, GPUOptions, GraphOptions,
OptimizerOptions and RunOptions, as small attribute containers.

TF1 code builds these and hands them to `og.Session(config=...)` and
`Session.run(options=...)`. onegraph runs its graphs on the CPU with numpy, in-process,
so the device, thread and GPU-memory fields have no effect; they are kept (readable,
settable) so that such code runs unchanged. Unknown field names and values of the
wrong type are refused, as TF's protocol buffers refuse them.
"""

from __future__ import annotations

import copy

import numpy as np

__all__ = ["ConfigProto", "GPUOptions", "GraphOptions", "OptimizerOptions", "RunOptions"]


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check(message: str, name: str, kind, value):
    """`value` checked against a field's kind (bool, int, float, str, dict of str->int,
    or a message class); a copy of a message or dict, so later edits stay local.

    Raises:
        TypeError: the value is not of the field's kind.
    """
    def wrong():
        return TypeError(f"{message}: field {name!r} takes {getattr(kind, '__name__', kind)}"
                         f", got {type(value).__name__} {value!r:.60}")
    if kind is bool:
        if not isinstance(value, (bool, np.bool_)):
            raise wrong()
        return bool(value)
    if kind is int:
        if not _is_int(value):
            raise wrong()
        return int(value)
    if kind is float:
        if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (int, float, np.integer, np.floating)):
            raise wrong()
        return float(value)
    if kind is str:
        if not isinstance(value, str):
            raise wrong()
        return value
    if kind == "map":
        if not isinstance(value, dict) or not all(
                isinstance(k, str) and _is_int(v) for k, v in value.items()):
            raise wrong()
        return {k: int(v) for k, v in value.items()}
    if not isinstance(value, kind):
        raise wrong()
    return copy.deepcopy(value)


class _Message:
    """Fields given by `_FIELDS` (name -> (kind, default)); keyword construction and
    attribute assignment both check the field name and the value's kind."""

    _FIELDS: dict = {}

    def __init__(self, **fields):
        for name, (kind, default) in self._FIELDS.items():
            value = kind() if isinstance(kind, type) and issubclass(kind, _Message) else (
                copy.copy(default))
            object.__setattr__(self, name, value)
        for name, value in fields.items():
            setattr(self, name, value)

    def __setattr__(self, name, value):
        kind = self._FIELDS.get(name, (None,))[0]
        if kind is None:
            raise TypeError(f"{type(self).__name__}: no field named {name!r} (its fields: "
                            f"{', '.join(sorted(self._FIELDS))})")
        object.__setattr__(self, name, _check(type(self).__name__, name, kind, value))

    def __eq__(self, other):
        return type(other) is type(self) and vars(other) == vars(self)

    __hash__ = None  # mutable, as TF's messages

    def __repr__(self):
        changed = [f"{n}={getattr(self, n)!r}" for n, (k, d) in self._FIELDS.items()
                   if getattr(self, n) != (k() if isinstance(k, type)
                                           and issubclass(k, _Message) else d)]
        return f"{type(self).__name__}({', '.join(changed)})"


class GPUOptions(_Message):
    """TF1's GPUOptions. No effect: onegraph has no GPU runtime.

    Raises:
        TypeError: an unknown field name, or a value of the wrong type.
    """

    _FIELDS = {"allow_growth": (bool, False), "per_process_gpu_memory_fraction": (float, 0.0),
               "visible_device_list": (str, ""), "allocator_type": (str, ""),
               "deferred_deletion_bytes": (int, 0), "polling_active_delay_usecs": (int, 0),
               "force_gpu_compatible": (bool, False)}


class OptimizerOptions(_Message):
    """TF1's OptimizerOptions (graph optimisation levels). Accepted, no effect: onegraph
    plans its own optimisations (`Session.optimize`).

    Raises:
        TypeError: an unknown field name, or a value of the wrong type.
    """

    L1, L0 = 0, -1  # TF's opt_level values
    DEFAULT, OFF, ON_1, ON_2 = 0, -1, 1, 2  # TF's global_jit_level values
    _FIELDS = {"opt_level": (int, 0), "do_common_subexpression_elimination": (bool, False),
               "do_constant_folding": (bool, False), "do_function_inlining": (bool, False),
               "global_jit_level": (int, 0), "max_folded_constant_in_bytes": (int, 0)}


class GraphOptions(_Message):
    """TF1's GraphOptions. Accepted, no effect.

    Raises:
        TypeError: an unknown field name, or a value of the wrong type.
    """

    _FIELDS = {"optimizer_options": (OptimizerOptions, None), "build_cost_model": (int, 0),
               "infer_shapes": (bool, False), "place_pruned_graph": (bool, False),
               "enable_bfloat16_sendrecv": (bool, False), "timeline_step": (int, 0),
               "build_cost_model_after": (int, 0),
               "enable_recv_scheduling": (bool, False)}


class ConfigProto(_Message):
    """TF1's session ConfigProto, for `og.Session(config=...)`.

    onegraph's sessions run in-process on the CPU with numpy: device_count, the thread
    pool sizes, gpu_options, graph_options, allow_soft_placement, log_device_placement
    and operation_timeout_in_ms are accepted and kept but have no effect (onegraph has
    no per-operation timeout; a queue op waits until it is fed or its session closes).

    Raises:
        TypeError: an unknown field name, or a value of the wrong type (TF raises
            ValueError for the name, TypeError for the value).
    """

    _FIELDS = {"allow_soft_placement": (bool, False), "log_device_placement": (bool, False),
               "gpu_options": (GPUOptions, None), "graph_options": (GraphOptions, None),
               "intra_op_parallelism_threads": (int, 0),
               "inter_op_parallelism_threads": (int, 0),
               "use_per_session_threads": (bool, False), "device_count": ("map", {}),
               "device_filters": (list, []), "operation_timeout_in_ms": (int, 0),
               "isolate_session_state": (bool, False),
               "share_cluster_devices_in_session": (bool, False)}


class RunOptions(_Message):
    """TF1's RunOptions, for `Session.run(options=...)`. A trace_level other than
    NO_TRACE with a `run_metadata` records what `og.RunMetadata` records (each node's
    time and output shapes) - which the run_metadata alone already does. timeout_in_ms
    and the other fields are accepted, no effect (onegraph has no run timeout).

    Raises:
        TypeError: an unknown field name, or a value of the wrong type.
    """

    NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE = 0, 1, 2, 3  # TF's values
    _FIELDS = {"trace_level": (int, 0), "timeout_in_ms": (int, 0),
               "inter_op_thread_pool": (int, 0),
               "output_partition_graphs": (bool, False),
               "report_tensor_allocations_upon_oom": (bool, False)}
