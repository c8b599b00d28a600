"""Every module of the package imports on its own, first thing in a fresh process.

Some modules of `train/` re-export their satellites (nn.py the nn_* modules, metrics.py
metrics_at_k/metrics_more), and the satellites import helpers back from them; a test
run that happens to import the hub first hides a cycle that a user importing the
satellite first (`import onegraph.train.nn_more`) hits as an ImportError.
"""

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Generated flatbuffers accessors, scripts and the tests themselves are not modules a
# user imports from the package.
_NOT_MODULES = ("tests", "tools", "benchmarks", "examples", "format/fb")


def _package_modules():
    names = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(_NOT_MODULES) or "/." in "/" + rel or rel.startswith(".venv"):
            continue
        parts = rel[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(["onegraph"] + parts))
    return names


MODULES = _package_modules()


def test_the_walk_finds_the_package():
    assert "onegraph.train.nn_more" in MODULES and "onegraph.convert.onnx_import" in MODULES


# The modules that re-exporting hubs left in a cycle (nn.py: nn_ops, nn_extra, nn_more,
# nn_sampled, rnn, rnn_static and, through nn_ops, api_linalg_more/_solve; metrics.py:
# metrics_at_k, metrics_more): checked in every run; the whole package in `make
# test-slow` (a fresh interpreter per module, about a second each).
SATELLITES = ["onegraph.train." + name for name in (
    "api_linalg_more", "api_linalg_solve", "metrics_at_k", "metrics_more", "nn_extra",
    "nn_more", "nn_ops", "nn_sampled", "rnn", "rnn_static")]


def _failing_first_imports(names):
    """The modules of `names` that fail to import as the first thing a fresh
    interpreter does, each with the last line of its error."""
    # a parent process with nothing of onegraph imported starts one child per module
    script = (
        "import subprocess, sys\n"
        "bad = []\n"
        "for name in sys.argv[1:]:\n"
        "    r = subprocess.run([sys.executable, '-c', 'import ' + name],\n"
        "                       capture_output=True, text=True, timeout=120)\n"
        "    if r.returncode:\n"
        "        bad.append(name + ': ' + (r.stderr.strip().splitlines() or ['?'])[-1])\n"
        "print('\\n'.join(bad))\n")
    result = subprocess.run([sys.executable, "-c", script] + list(names), capture_output=True,
                            text=True, timeout=1800, cwd=ROOT.parent)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_satellite_modules_import_first_in_a_fresh_process():
    assert set(SATELLITES) <= set(MODULES)
    bad = _failing_first_imports(SATELLITES)
    assert not bad, "modules that fail to import first:\n" + bad


@pytest.mark.slow
def test_every_module_imports_first_in_a_fresh_process():
    bad = _failing_first_imports(MODULES)
    assert not bad, "modules that fail to import first:\n" + bad
