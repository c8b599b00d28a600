"""An ONNX backend (`onnx.backend.base.Backend`) that runs models with onegraph.

`prepare` imports the model with `from_onnx` and wraps a Session; `run` feeds inputs by
graph input name (in declaration order, skipping initializer defaults) and returns the
outputs in graph output order. Shared by the backend, round-trip and coverage code.
"""

from __future__ import annotations

import numpy as np
from onnx.backend.base import Backend, BackendRep

from onegraph import ops
from onegraph.convert import from_onnx
from onegraph.convert.coverage import all_node_cases, as_numpy, lookup_reason  # noqa: F401
from onegraph.format import TensorKind
from onegraph.ops import REGISTRY


class OnegraphRep(BackendRep):
    """A prepared model: the imported Model and its Session."""

    def __init__(self, model):
        from onegraph.train.session import Session

        self.model = model
        self.session = Session(model)
        g = model.graph
        self.input_names = [g.tensors[i].name for i in g.inputs
                            if g.tensors[i].kind is not TensorKind.CONSTANT]
        self.output_names = [g.tensors[i].name for i in g.outputs]

    def run(self, inputs, **kwargs):
        """Run with inputs as a list (graph input order) or a dict by name."""
        if isinstance(inputs, dict):
            feeds = dict(inputs)
        else:
            if not isinstance(inputs, (list, tuple)):
                inputs = [inputs]
            feeds = dict(zip(self.input_names, inputs))
        return tuple(self.session.run(list(self.output_names), feeds))


class OnegraphBackend(Backend):
    """ONNX backend interface over `from_onnx` + Session (CPU only)."""

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        """Import `model` (ModelProto) and return an OnegraphRep.

        Raises:
            ConversionError: the model cannot be imported.
        """
        return OnegraphRep(from_onnx(model))

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device).run(inputs)

    @classmethod
    def supports_device(cls, device):
        return device in ("CPU", "cpu")


def model_ops(graph):
    """Set of (domain, op_type) used by a GraphProto including its subgraphs."""
    found = set()
    for node in graph.node:
        found.add(("" if node.domain in ("", "ai.onnx") else node.domain, node.op_type))
        for a in node.attribute:
            if a.HasField("g"):
                found |= model_ops(a.g)
            for sub in a.graphs:
                found |= model_ops(sub)
    return found


def model_all_ops(model):
    """(domain, op_type) of a model's graph and its local functions' bodies."""
    found = model_ops(model.graph)
    local = {(f.domain, f.name) for f in model.functions}
    for f in model.functions:
        for node in f.node:
            found.add(("" if node.domain in ("", "ai.onnx") else node.domain, node.op_type))
    return found - local


def unsupported(model):
    """Sorted op names of a ModelProto that the registry lacks."""
    return sorted(f"{d}::{o}" if d else o for d, o in model_all_ops(model)
                  if not REGISTRY.has(o, d))


def unsupported_element_types(model):
    """Names of ONNX element types used by a model that onegraph has no dtype for."""
    from onnx import TensorProto

    from onegraph.convert.onnx_import import dtype_from_onnx
    from onegraph.errors import ConversionError

    found = set()

    def check(elem_type):
        try:
            dtype_from_onnx(elem_type)
        except ConversionError:
            found.add(TensorProto.DataType.Name(elem_type))

    def walk_type(tp):
        kind = tp.WhichOneof("value")
        if kind == "tensor_type":
            check(tp.tensor_type.elem_type)
        elif kind == "sequence_type":
            walk_type(tp.sequence_type.elem_type)
        elif kind == "optional_type":
            walk_type(tp.optional_type.elem_type)

    def walk(graph):
        for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
            walk_type(vi.type)
        for t in graph.initializer:
            check(t.data_type)
        for node in graph.node:
            for a in node.attribute:
                if a.HasField("t"):
                    check(a.t.data_type)
                if a.name in ("to", "output_dtype") and a.type == a.INT:
                    check(a.i)
                if a.HasField("g"):
                    walk(a.g)
                for sub in a.graphs:
                    walk(sub)

    walk(model.graph)
    return sorted(found)


def family_known_failures():
    """The KNOWN_FAILURES dicts of every op family module, merged."""
    out = {}
    for family in ops._FAMILIES:
        out.update(getattr(family, "KNOWN_FAILURES", {}))
    return out


def compare(expected, actual, rtol, atol, name):
    """Assert outputs match: count, shape, dtype and values (NaN-aware); sequences too."""
    assert len(actual) >= len(expected), f"{name}: {len(actual)} outputs, want {len(expected)}"
    for k, (want, got) in enumerate(zip(expected, actual)):
        _compare_one(want, got, rtol, atol, f"{name} output {k}")


def assert_draw_independent(expected, actual, name, case=None):
    """What a random op's output must share with a reference drawn elsewhere: output
    count, shapes and dtypes; values are 0 or 1 (the only random cases with a reference
    draw among the node tests are Bernoulli's and their expansions)."""
    assert len(actual) == len(expected), f"{name}: {len(actual)} outputs, want {len(expected)}"
    for k, (want, got) in enumerate(zip(expected, actual)):
        want, got = np.asarray(want), np.asarray(got)
        assert got.shape == want.shape, f"{name} output {k}: shape {got.shape} != {want.shape}"
        assert got.dtype == want.dtype, f"{name} output {k}: dtype {got.dtype} != {want.dtype}"
        assert np.isin(got.astype(np.float64), [0.0, 1.0]).all(), \
            f"{name} output {k}: values other than 0 and 1: {np.unique(got)}"


def _compare_one(want, got, rtol, atol, where):
    if isinstance(want, list):
        assert isinstance(got, list), f"{where}: want a sequence, got {type(got).__name__}"
        assert len(got) == len(want), f"{where}: sequence length {len(got)} != {len(want)}"
        for i, (w, g) in enumerate(zip(want, got)):
            _compare_one(w, g, rtol, atol, f"{where}[{i}]")
        return
    if want is None:
        assert got is None, f"{where}: want None (empty optional)"
        return
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"{where}: shape {got.shape} != {want.shape}"
    if want.dtype == object or want.dtype.kind in "USO":
        assert [str(v) for v in got.reshape(-1).tolist()] == \
            [v.decode() if isinstance(v, bytes) else str(v)
             for v in want.reshape(-1).tolist()], where
        return
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=where)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
