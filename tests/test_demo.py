"""`make demo` as a test: examples/demo.py runs end to end and its own checks hold
(Session and export against onnxruntime on random weights, the MLP's test accuracy)."""

import os
import subprocess
import sys

DEMO = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    "examples", "demo.py")


def test_demo_runs_and_its_checks_pass():
    done = subprocess.run([sys.executable, DEMO], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = done.stdout
    assert "Session vs onnxruntime, softmaxout_1" in out
    assert "onnxruntime on the export vs on the original" in out
    assert "demo finished" in out
