"""The model cases that ONNX's backend test data holds beside the node tests.

The onnx wheel ships, under onnx/backend/test/data/, 140 small models with inputs and
reference outputs that `onnx.backend.test.BackendTest` runs as well as the node tests:

* simple (23): hand-written graphs: StringNormalizer, sequence ops, Expand, Shrink,
  Sign, Relu, and two graphs with ai.onnx.preview.training's Gradient;
* pytorch-converted (82): PyTorch modules exported at opset 6 (Conv*, BatchNorm*,
  pooling, PReLU, GLU, PixelShuffle, Embedding, ...), with PyTorch's outputs;
* pytorch-operator (35): PyTorch functions exported at opsets 6-9 (add with broadcast,
  chunk, clip, concat, index, max/min, pad, repeat, reduce, selu, sqrt, symbolic
  override, ...), with PyTorch's outputs.

Each model must import (the old opsets through ONNX's version converter and the importer's
legacy rewrites), run in the Session to the stored outputs at the runner's tolerances (rtol
1e-3, atol 1e-7, as `onnx.backend.test.loader` gives model cases), and come back from
to_onnx as a model that passes the full ONNX checker and gives the stored outputs in
onnxruntime (skipped where onnxruntime does not run the original either: StringNormalizer's
case changes need an en_US.UTF-8 locale). The reference outputs come from PyTorch or from
the case's author, so this checks the importer's reading of the old opsets too: the
PReLU_*d_multiparam cases (opset 6, a slope per channel) failed before the legacy PRelu
rewrite, and the two Gradient cases before the importer built ai.onnx.preview.training's
Gradient.
"""

import glob
import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from onegraph.convert import from_onnx, to_onnx

from .backend import OnegraphBackend, compare

ort = pytest.importorskip("onnxruntime")

DATA = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
KINDS = ("simple", "pytorch-converted", "pytorch-operator")
# onnx.backend.test.loader's tolerances for model cases
RTOL, ATOL = 1e-3, 1e-7


def _case_dirs() -> list:
    found = []
    for kind in KINDS:
        found += sorted(d for d in glob.glob(os.path.join(DATA, kind, "test_*"))
                        if os.path.isfile(os.path.join(d, "model.onnx")))
    return found


CASES = _case_dirs()


def _case_id(case_dir: str) -> str:
    return f"{os.path.basename(os.path.dirname(case_dir))}/{os.path.basename(case_dir)}"


def _numbered(folder: str, prefix: str) -> list:
    """The arrays stored as <prefix>_<k>.pb in `folder`, in order of k."""
    paths = glob.glob(os.path.join(folder, f"{prefix}_*.pb"))
    paths.sort(key=lambda p: int(os.path.basename(p)[len(prefix) + 1:-3]))
    return [numpy_helper.to_array(onnx.load_tensor(p)) for p in paths]


def _data_sets(case_dir: str) -> list:
    """[(inputs, outputs)] of each test_data_set_* folder of a case."""
    sets = sorted(glob.glob(os.path.join(case_dir, "test_data_set_*")))
    return [(_numbered(s, "input"), _numbered(s, "output")) for s in sets]


def _feeds(proto, inputs: list) -> dict:
    """Inputs by the name of the graph input each stands for (initializers skipped)."""
    weights = {t.name for t in proto.graph.initializer}
    names = [i.name for i in proto.graph.input if i.name not in weights]
    return dict(zip(names, inputs))


def test_the_wheel_ships_the_model_cases():
    counts = {kind: sum(1 for c in CASES if _case_id(c).startswith(kind + "/"))
              for kind in KINDS}
    assert counts["simple"] >= 20 and counts["pytorch-converted"] >= 80 \
        and counts["pytorch-operator"] >= 30, counts


@pytest.mark.parametrize("case_dir", CASES, ids=[_case_id(c) for c in CASES])
def test_runs_to_the_stored_outputs(case_dir):
    proto = onnx.load(os.path.join(case_dir, "model.onnx"))
    rep = OnegraphBackend.prepare(proto)
    sets = _data_sets(case_dir)
    assert sets, case_dir
    for inputs, outputs in sets:
        got = rep.run(_feeds(proto, inputs))
        compare(outputs, list(got), RTOL, ATOL, _case_id(case_dir))


def _ort_outputs(proto, inputs: list) -> list:
    """onnxruntime's outputs for `proto` (one thread, quiet)."""
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    feeds = {k: np.asarray(v) for k, v in _feeds(proto, inputs).items()}
    return sess.run([o.name for o in proto.graph.output], feeds)


@pytest.mark.parametrize("case_dir", CASES, ids=[_case_id(c) for c in CASES])
def test_exports_to_a_model_onnxruntime_runs_to_the_stored_outputs(case_dir):
    proto = onnx.load(os.path.join(case_dir, "model.onnx"))
    exported = to_onnx(from_onnx(proto))
    onnx.checker.check_model(exported, full_check=True)
    for inputs, outputs in _data_sets(case_dir):
        try:
            got = _ort_outputs(exported, inputs)
        except Exception as e:  # noqa: BLE001 - onnxruntime raises its own kinds
            try:
                _ort_outputs(proto, inputs)
            except Exception as original:  # noqa: BLE001
                # e.g. StringNormalizer's case change needs the en_US.UTF-8 locale
                pytest.skip("onnxruntime does not run the original either: "
                            + str(original).splitlines()[0][:300])
            raise AssertionError(f"onnxruntime runs the original but not the export: "
                                 f"{e}") from e
        compare(outputs, got, RTOL, ATOL, _case_id(case_dir))
