"""onegraph.info with bad input: a TypeError for what is not a model (or not a
describe() result), and verify_report worded as og.load and the CLI word a file that
cannot be opened (audit /tmp/hunt_api findings 3 and 9)."""

import numpy as np
import pytest

import onegraph as og
from onegraph.format import Graph, Model
from onegraph.info import describe, format_text, verify_report


def _model():
    g = Graph("main")
    x = g.add_input("x", "float32", [2])
    w = g.add_constant("w", np.ones(2, np.float32))
    (y,) = g.add_node("Add", [x, w], ["y"])
    g.outputs = [y]
    return Model(graphs=[g], opset_imports={"": 21})


@pytest.mark.parametrize("bad", [None, Graph(), {}, "m.og"])
def test_describe_refuses_what_is_not_a_model(bad):
    with pytest.raises(TypeError, match=r"describe: expected a onegraph Model, got .*"
                                        r"\(load a .og file with og.load\)"):
        describe(bad)


def test_format_text_refuses_what_describe_did_not_return():
    with pytest.raises(TypeError, match="format_text: expected the dict describe"):
        format_text(_model())
    with pytest.raises(ValueError, match=r"format_text: .* it lacks \['path', "):
        format_text({})
    assert "parameters: 2" in format_text(describe(_model()))


def test_verify_report_words_a_missing_file_as_og_load_does(tmp_path):
    path = str(tmp_path / "nope.og")
    with pytest.raises(FileNotFoundError) as info:
        og.load(path)
    report = verify_report(path)
    assert report == {"path": path, "ok": False, "error_type": "FileNotFoundError",
                      "error": f"cannot read {path!r}: No such file or directory"}
    assert report["error"] == str(info.value)
    report = verify_report(str(tmp_path))
    assert report["error_type"] == "IsADirectoryError"
    assert report["error"] == f"cannot read {str(tmp_path)!r}: Is a directory"


def test_verify_report_of_a_good_file(tmp_path):
    og.save(_model(), tmp_path / "m.og")
    assert verify_report(str(tmp_path / "m.og"))["ok"] is True
