"""ml_dtypes (about half a second to import) loads on first use of its types, not with
`import onegraph`; every way of reaching those types still finds them."""

import subprocess
import sys

import pytest

pytest.importorskip("ml_dtypes")


def _fresh(code: str) -> str:
    """stdout of `code` run in a fresh interpreter (nothing imported before it)."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_import_onegraph_leaves_ml_dtypes_unloaded():
    assert _fresh("import sys, onegraph\n"
                  "print('ml_dtypes' in sys.modules)") == "False"


@pytest.mark.parametrize("first_use, expected", [
    # the DType's numpy type: ml_dtypes' own, not the raw storage
    ("print(og.DType.BFLOAT16.numpy == ml_dtypes.bfloat16, "
     "og.DType.FLOAT8E4M3FN.raw_storage)", "True False"),
    # an array made by the caller's own ml_dtypes import maps back
    ("print(og.DType.from_numpy(np.zeros(2, ml_dtypes.float8_e5m2).dtype).name)",
     "FLOAT8E5M2"),
    # ml_dtypes' registered names
    ("print(og.DType.from_numpy('bfloat16').name)", "BFLOAT16"),
    # a plain uint8 array is never taken for one of the one-byte types
    ("print(og.DType.from_numpy(np.uint8).name, og.DType.INT4.itemsize)", "UINT8 1"),
])
def test_ml_dtypes_types_reached_first_in_a_fresh_process(first_use, expected):
    prefix = "import numpy as np\nimport onegraph as og\n"
    if "ml_dtypes." in first_use:
        prefix = "import ml_dtypes\n" + prefix
    assert _fresh(prefix + first_use) == expected


def test_unknown_dtype_name_is_still_refused_by_name():
    out = _fresh("import onegraph as og\n"
                 "try:\n"
                 "    og.DType.from_numpy('float33')\n"
                 "except og.FormatError as e:\n"
                 "    print(e)\n")
    assert out == "unknown dtype 'float33'"


def test_a_bfloat16_tensor_round_trips_through_a_file(tmp_path):
    # a file read before anything touched ml_dtypes still gives ml_dtypes' arrays
    import ml_dtypes
    import numpy as np

    import onegraph as og
    from onegraph.format import save_model

    values = np.array([1.5, -2.0, 3.25], dtype=ml_dtypes.bfloat16)
    g = og.Graph()
    with g.as_default():
        x = og.constant(values, name="c")
        og.identity(x, name="y")
    path = str(tmp_path / "m.og")
    save_model(g.to_model(), path)
    out = _fresh("import onegraph as og\n"
                 f"m = og.format.load_model({path!r})\n"
                 "s = og.Session(m)\n"
                 "y = s.run('y:0', {})\n"
                 "print(y.dtype, y.tolist())")
    assert out == f"bfloat16 {values.astype(np.float32).tolist()}"
