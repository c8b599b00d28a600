"""Record TF1's error classes and codes (tf.errors) for tests/test_errors.py.

Run by hand with the scratch TensorFlow venv:
    /tmp/s51/tfvenv/bin/python tools/record_tf_errors.py
Writes tests/data/tf1_errors_reference.json: per class its error_code, the class
exception_type_from_error_code gives for that code, str() of an instance made with TF's
(node_def, op, message) arguments, and its message/op/node_def attributes; and the
module's code constants.
"""

from __future__ import annotations

import pathlib

import tensorflow.compat.v1 as tf
from tf_recording import write_reference

CLASSES = ("CancelledError", "UnknownError", "InvalidArgumentError", "DeadlineExceededError",
           "NotFoundError", "AlreadyExistsError", "PermissionDeniedError",
           "UnauthenticatedError", "ResourceExhaustedError", "FailedPreconditionError",
           "AbortedError", "OutOfRangeError", "UnimplementedError", "InternalError",
           "UnavailableError", "DataLossError")
CODES = ("OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
         "ALREADY_EXISTS", "PERMISSION_DENIED", "UNAUTHENTICATED", "RESOURCE_EXHAUSTED",
         "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
         "UNAVAILABLE", "DATA_LOSS")


def main():
    classes = {}
    for name in CLASSES:
        cls = getattr(tf.errors, name)
        e = cls(None, None, "went wrong")
        classes[name] = {
            "error_code": e.error_code,
            "from_code": tf.errors.exception_type_from_error_code(e.error_code).__name__,
            "code_of_type": tf.errors.error_code_from_exception_type(cls),
            "str": str(e), "message": e.message, "op": e.op, "node_def": e.node_def,
            "is_op_error": isinstance(e, tf.errors.OpError)}
    codes = {name: getattr(tf.errors, name) for name in CODES}
    root = pathlib.Path(__file__).resolve().parent.parent
    write_reference(root / "tests" / "data" / "tf1_errors_reference.json",
                    {"classes": classes, "codes": codes})


if __name__ == "__main__":
    main()
