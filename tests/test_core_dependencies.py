"""The device-side packages run with numpy and flatbuffers alone (ARCHITECTURE.md).

A fresh interpreter is started with an import hook that makes onnx, onnxruntime,
mpi4py, matplotlib, tqdm, ml_dtypes and numba unimportable, as on a Raspberry Pi that only
ran `pip install onegraph`; it must still import the core packages and load, inspect
and run a model.
"""

import subprocess
import sys
import textwrap

import numpy as np

import onegraph as og
from onegraph.format import Graph, Model

_BLOCKED = ("onnx", "onnxruntime", "mpi4py", "matplotlib", "tqdm", "ml_dtypes", "torch",
            "hypothesis", "psutil", "numba", "llvmlite")


def test_core_runs_without_optional_packages(tmp_path):
    """import onegraph.format/ops/mobile/quantize/convert, load + info + Session, no
    extras; to_onnx then says which extra it needs."""
    g = Graph("main")
    x = g.add_input("x", "float32", [2])
    w = g.add_constant("w", np.array([1.5, -2.0], np.float32))
    (y,) = g.add_node("Mul", [x, w], ["y"])
    g.outputs = [y]
    path = tmp_path / "tiny.og"
    og.save(Model(graphs=[g]), path)
    script = textwrap.dedent(f"""
        import sys

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {_BLOCKED!r}:
                    raise ImportError("blocked for this test: " + name)
                return None

        sys.meta_path.insert(0, Block())
        import numpy as np
        import onegraph, onegraph.format, onegraph.ops, onegraph.mobile, onegraph.quantize
        from onegraph.cli import main
        assert main(["info", {str(path)!r}]) == 0
        assert main(["verify", {str(path)!r}]) == 0
        sess = onegraph.Session(onegraph.load({str(path)!r}))
        (out,) = sess.run(["y"], {{"x": np.array([2.0, 3.0], np.float32)}})
        assert out.tolist() == [3.0, -6.0], out
        # the conversion package imports without onnx and says what to install
        import inspect
        from onegraph.convert import from_onnx, to_onnx
        assert "check" in inspect.signature(to_onnx).parameters
        try:
            to_onnx(onegraph.load({str(path)!r}))
        except onegraph.ConversionError as e:
            assert "pip install onegraph[onnx]" in str(e), e
        else:
            raise AssertionError("to_onnx ran without onnx")
        print("CORE-OK")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "CORE-OK" in result.stdout
