"""og.flags / og.app against absl's flags as TF1's tf.flags parses, recorded by
tools/record_tf_gfile.py: the same definitions parse the same argument lists to the same
values, remaining words, or error class and message."""

from __future__ import annotations

import json
import os
import sys

import pytest

from onegraph.train import app_flags

F = app_flags.flags_namespace
A = app_flags.app_namespace
DATA = os.path.join(os.path.dirname(__file__), "data", "tf1_gfile_reference.json")
with open(DATA) as _f:
    CASES = json.load(_f)["flags"]

ERRORS = {"Error": F.Error, "IllegalFlagValueError": F.IllegalFlagValueError,
          "UnrecognizedFlagError": F.UnrecognizedFlagError}


def _definitions(required):
    fv = F.FlagValues()
    if required:
        F.DEFINE_string("r", None, "required", flag_values=fv)
        F.DEFINE_integer("k", 1, "an int", flag_values=fv)
        F.mark_flag_as_required("r", flag_values=fv)
        return fv, ("r", "k")
    F.DEFINE_string("s", "dflt", "a string", flag_values=fv)
    F.DEFINE_integer("i", 1, "an int", flag_values=fv)
    F.DEFINE_float("f", 0.5, "a float", flag_values=fv)
    F.DEFINE_boolean("b", False, "a bool", flag_values=fv)
    F.DEFINE_list("l", ["x"], "a list", flag_values=fv)
    F.DEFINE_enum("e", "red", ["red", "green"], "an enum", flag_values=fv)
    F.DEFINE_multi_string("m", [], "strings", flag_values=fv)
    F.DEFINE_multi_integer("mi", None, "ints", flag_values=fv)
    return fv, ("s", "i", "f", "b", "l", "e", "m", "mi")


@pytest.mark.parametrize("case", CASES, ids=[" ".join(c["argv"]) or "-" for c in CASES])
def test_parse_matches_absl(case):
    fv, names = _definitions(case.get("required", False))
    if "error" in case:
        with pytest.raises(ERRORS[case["error"]]) as info:
            fv(["prog"] + case["argv"])
        assert type(info.value) is ERRORS[case["error"]]
        assert str(info.value) == case["message"]
        return
    rest = fv(["prog"] + case["argv"])
    assert rest == case["rest"]
    got = {n: getattr(fv, n) for n in names}
    assert got == case["values"]
    assert all(type(got[n]) is type(case["values"][n]) for n in names)


def test_lazy_parse_of_sys_argv(monkeypatch):
    fv = F.FlagValues()
    F.DEFINE_integer("steps", 10, "steps", flag_values=fv)
    monkeypatch.setattr(sys, "argv", ["prog", "--steps=5"])
    assert not fv.is_parsed()
    assert fv.steps == 5 and fv.is_parsed()
    fv.steps = 7
    assert fv.steps == 7
    with pytest.raises(F.IllegalFlagValueError):
        fv.steps = "many"
    with pytest.raises(AttributeError):
        fv.undefined_flag  # noqa: B018 - reading it is the test
    unknown = F.FlagValues()
    F.DEFINE_integer("steps", 10, "steps", flag_values=unknown)
    monkeypatch.setattr(sys, "argv", ["prog", "--stepz=5"])
    with pytest.raises(F.UnrecognizedFlagError, match="Unknown command line flag 'stepz'"):
        unknown.steps  # noqa: B018


def test_duplicate_and_bad_definitions():
    fv = F.FlagValues()
    F.DEFINE_string("a", "x", "a", flag_values=fv)
    with pytest.raises(F.DuplicateFlagError):
        F.DEFINE_string("a", "y", "again", flag_values=fv)
    with pytest.raises(F.Error):
        F.DEFINE_enum("c", "p", [], "empty enum", flag_values=fv)
    with pytest.raises(F.IllegalFlagValueError):
        F.DEFINE_integer("n", "ten", "bad default", flag_values=fv)
    with pytest.raises(TypeError):
        F.DEFINE_string("z", "x", "z", flag_values=fv, colour="red")
    with pytest.raises(F.IllegalFlagValueError, match="flag --lo=-1: -1 is not >= 0"):
        F.DEFINE_integer("lo", 0, "bounded", lower_bound=0, flag_values=fv)
        fv(["prog", "--lo=-1"])


def test_required_keyword():
    fv = F.FlagValues()
    F.DEFINE_string("model", None, "model", flag_values=fv, required=True)
    with pytest.raises(F.IllegalFlagValueError, match="Flag --model must have a value"):
        fv(["prog"])
    assert fv(["prog", "--model", "m"]) == ["prog"] and fv.model == "m"


def test_help_prints_usage_and_exits(capsys):
    fv, _ = _definitions(False)
    with pytest.raises(SystemExit) as info:
        fv(["prog", "--help"])
    assert info.value.code == 1
    out = capsys.readouterr().out
    assert "--[no]b: a bool" in out and "--i: an int" in out and "--helpfull" in out


def _fresh_global_flags(monkeypatch):
    fv = F.FlagValues()
    monkeypatch.setattr(app_flags, "FLAGS", fv)
    return fv


def test_app_run_passes_unknown_flags_to_main(monkeypatch):
    fv = _fresh_global_flags(monkeypatch)
    F.DEFINE_integer("epochs", 1, "epochs", flag_values=fv)
    seen = []

    def main(argv):
        seen.append((argv, fv.epochs))
        return 3

    with pytest.raises(SystemExit) as info:
        A.run(main, ["prog", "--epochs=4", "--other=1", "pos"])
    assert info.value.code == 3
    assert seen == [(["prog", "--other=1", "pos"], 4)]


def test_app_run_flag_error_exits_1(monkeypatch, capsys):
    fv = _fresh_global_flags(monkeypatch)
    F.DEFINE_integer("epochs", 1, "epochs", flag_values=fv)
    with pytest.raises(SystemExit) as info:
        A.run(lambda argv: 0, ["prog", "--epochs=x"])
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert err == ("FATAL Flags parsing error: flag --epochs=x: invalid literal for int() "
                   "with base 10: 'x'\nPass --helpshort or --helpfull to see help on flags.\n")
    with pytest.raises(TypeError):
        A.run(3, ["prog"])
    assert A.flags is F
