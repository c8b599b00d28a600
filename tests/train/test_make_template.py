"""make_template (onegraph.train.template) against TensorFlow's tf.make_template.

tools/record_tf_make_template.py ran its scenarios under tf.compat.v1 and stored the
variables made and shared, the op names of each call, the values in a Session, the
template's properties and its errors in data/tf1_make_template_reference.json. The same
scenarios run here with onegraph in place of tf and must give the same record (TF's
messages say "tf." where onegraph's say "og.").
"""

from __future__ import annotations

import importlib.util
import json
import os

import numpy as np
import pytest

import onegraph as og
from onegraph.train.template import Template, make_template

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "tf1_make_template_reference.json")) as _f:
    REFERENCE = json.load(_f)

_spec = importlib.util.spec_from_file_location(
    "record_tf_make_template",
    os.path.join(HERE, "..", "..", "tools", "record_tf_make_template.py"))
_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_tool)


class _OG:
    """onegraph under the names the scenarios use for tf.compat.v1."""

    make_template = staticmethod(make_template)

    def __getattr__(self, name):
        return getattr(og, name)


def _run(name: str) -> dict:
    with og.Graph().as_default():
        return getattr(_tool.Scenarios(_OG()), name)()


def _as_tf(text):
    """An og message in TF's words, for comparing with a recorded one."""
    return text.replace("og.", "tf.")


def _same(mine, theirs, where: str = "") -> None:
    if isinstance(theirs, dict):
        assert isinstance(mine, dict) and sorted(mine) == sorted(theirs), where
        for key in theirs:
            _same(mine[key], theirs[key], f"{where}.{key}")
    elif where.endswith(".values"):
        np.testing.assert_allclose(np.asarray(mine), np.asarray(theirs), rtol=1e-6,
                                   err_msg=where)
    else:
        assert mine == theirs, where


SAME = ["repeat", "two_templates", "create_scope_now", "kwargs", "non_trainable_variable",
        "nested", "nested_made_inside", "in_scope", "collections", "retry_after_error"]


@pytest.mark.parametrize("scenario", SAME)
def test_scenario_matches_tf(scenario):
    _same(_run(scenario), REFERENCE[scenario], scenario)


def test_reference_covers_every_scenario():
    names = {n for n in vars(_tool.Scenarios) if not n.startswith("_")}
    assert names == set(REFERENCE)
    assert names == set(SAME) | {"unique_name", "new_trainable_error", "bad_arguments"}


def test_unique_name_and_its_clash():
    mine, theirs = _run("unique_name"), REFERENCE["unique_name"]
    mine_error, their_error = mine.pop("twin_error"), theirs["twin_error"]
    _same(mine, {k: v for k, v in theirs.items() if k != "twin_error"}, "unique_name")
    assert mine_error["type"] == their_error["type"] == "ValueError"
    assert mine_error["annotated"] and their_error["annotated"]
    # og's message goes on where TF's first line ends
    assert _as_tf(mine_error["first_line"]).startswith(their_error["first_line"])


def test_new_trainable_variable_on_second_call():
    mine, theirs = _run("new_trainable_error"), REFERENCE["new_trainable_error"]
    for key in ("after_first", "global", "local", "trainable"):
        assert mine[key] == theirs[key], key
    assert mine["error"]["type"] == theirs["error"]["type"] == "ValueError"
    assert mine["error"]["annotated"] and theirs["error"]["annotated"]
    want = theirs["error"]["first_line"].replace(":0'", "'")
    assert _as_tf(mine["error"]["first_line"]) == want


def test_bad_arguments_raise_tf_types():
    """TF raises for a non-str name_ or a non-callable func_ only when called; og says
    so when the template is made, with the same type."""
    mine, theirs = _run("bad_arguments"), REFERENCE["bad_arguments"]
    assert mine["name_none"] == theirs["name_none"]
    for label in ("name_int", "func_int"):
        assert mine[label]["at"] == "make" and theirs[label]["at"] == "call", label
        assert mine[label]["type"] == theirs[label]["type"] == "TypeError", label


@pytest.mark.parametrize("kwargs, error, words", [
    ({"name_": ""}, ValueError, "name_ must not be empty"),
    ({"name_": "a", "unique_name_": ""}, ValueError, "unique_name_ must not be empty"),
    ({"name_": "a", "unique_name_": 3}, TypeError, "unique_name_ must be a str"),
    ({"name_": "a", "create_scope_now_": "yes"}, TypeError, "create_scope_now_"),
    ({"name_": "a", "custom_getter_": lambda getter, *a, **k: getter(*a, **k)},
     NotImplementedError, "custom_getter_ is not supported"),
])
def test_refused_arguments(kwargs, error, words):
    with og.Graph().as_default():
        with pytest.raises(error, match=words):
            make_template(func_=lambda x: x, **kwargs)


def test_error_names_where_the_template_was_made():
    def fails(x):
        raise KeyError("no such thing")

    with og.Graph().as_default():
        t = make_template("boom", fails)
        with pytest.raises(KeyError) as info:
            t(og.constant(1.0))
    message = info.value.args[0]
    assert message.startswith("no such thing\n\noriginally defined at:\n")
    assert "test_make_template.py" in message and 't = make_template("boom"' in message


def test_template_is_a_template_with_aliases():
    with og.Graph().as_default():
        t = make_template("s", lambda x: x * og.get_variable(
            "w", [], initializer=og.constant_initializer(2.0)))
        assert isinstance(t, Template) and t.variable_scope is None
        t(og.constant(1.0))
        with pytest.warns(DeprecationWarning, match="variable_scope"):
            assert t.var_scope is t.variable_scope
        assert [v.name for v in t.weights] == ["s/w"]
        assert t.trainable_weights == t.trainable_variables
        assert t.non_trainable_weights == []


def test_variables_are_those_of_the_first_calls_graph():
    g = og.Graph()
    with g.as_default():
        t = make_template("s", lambda x: x * og.get_variable("w", []))
        t(og.constant(1.0))
    # read outside `with g.as_default()`: still g's variables
    assert [v.name for v in t.variables] == ["s/w"]
