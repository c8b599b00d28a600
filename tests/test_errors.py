"""onegraph.errors as TF1's tf.errors: the classes, their codes and TF's constructor
arguments, against TF 2.21's recorded values (tools/record_tf_errors.py writes
tests/data/tf1_errors_reference.json)."""

from __future__ import annotations

import json
import os

import pytest

import onegraph as og
from onegraph import errors

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                  "tf1_errors_reference.json")))


@pytest.mark.parametrize("name", sorted(REF["classes"]))
def test_class_agrees_with_tf(name):
    want = REF["classes"][name]
    cls = getattr(errors, name)
    e = cls(None, None, "went wrong")
    got = {"error_code": e.error_code,
           "from_code": errors.exception_type_from_error_code(e.error_code).__name__,
           "code_of_type": errors.error_code_from_exception_type(cls),
           "str": str(e), "message": e.message, "op": e.op, "node_def": e.node_def,
           "is_op_error": isinstance(e, errors.OpError)}
    assert got == want
    assert og.errors is errors and isinstance(e, errors.OneGraphError)


def test_code_constants_agree_with_tf():
    assert {name: getattr(errors, name) for name in REF["codes"]} == REF["codes"]


def test_og_errors_keep_their_one_argument_form_and_codes():
    e = errors.ShapeError("bad shape")
    assert str(e) == "bad shape" and e.message == "bad shape" and e.op is None
    assert e.error_code == errors.INVALID_ARGUMENT
    assert errors.OneGraphError("x").error_code == errors.UNKNOWN
    assert errors.DataLossError("x").error_code == errors.DATA_LOSS
    # og's own classes map to a code but the code gives TF's class back
    assert errors.error_code_from_exception_type(errors.ConversionError) == errors.UNKNOWN
    with pytest.raises(errors.OpError, match="uninitialized value v"):
        with og.Graph().as_default():
            v = og.Variable(og.zeros([1]) + 1.0, name="v")
            with og.Session() as sess:
                sess.run(v)


def test_unknown_codes_and_types_are_refused():
    with pytest.raises(KeyError, match="99"):
        errors.exception_type_from_error_code(99)
    # (TF returns an UnknownError instance here, with a warning)
    assert errors.error_code_from_exception_type(ValueError) == errors.UNKNOWN
