"""The exception hierarchy: every error onegraph raises on bad input is one of these.

It is TF1's `tf.errors` too: `OneGraphError` is TF's `OpError` (every class here takes
TF's `(node_def, op, message)` arguments as well as a message alone, and has TF's
`message`, `op`, `node_def` and `error_code`), TF's classes are here under TF's names
with TF's codes, and so are the code constants and the two code <-> class lookups.
"""

# TF's error codes (tensorflow/core/protobuf/error_codes.proto)
OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED = 0, 1, 2, 3, 4
NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED, RESOURCE_EXHAUSTED = 5, 6, 7, 8
FAILED_PRECONDITION, ABORTED, OUT_OF_RANGE, UNIMPLEMENTED, INTERNAL = 9, 10, 11, 12, 13
UNAVAILABLE, DATA_LOSS, UNAUTHENTICATED = 14, 15, 16


class OneGraphError(Exception):
    """Base class of every error onegraph raises deliberately (TF1's OpError).

    Takes a message, or TF's (node_def, op, message[, error_code]) arguments; node_def
    and op are kept as given (og's messages name the node instead)."""

    error_code = UNKNOWN

    def __init__(self, *args):
        self.node_def = self.op = None
        if len(args) >= 3 and isinstance(args[2], str) and not isinstance(args[0], str):
            self.node_def, self.op = args[0], args[1]
            if len(args) >= 4 and isinstance(args[3], int) and type(self) is OneGraphError:
                self.error_code = args[3]   # OpError(node_def, op, message, error_code)
            args = (args[2],)
        super().__init__(*args)

    @property
    def message(self) -> str:
        """The message (TF's OpError.message)."""
        return str(self)


OpError = OneGraphError


class FormatError(OneGraphError):
    """A `.og` file (or an in-memory model about to be written) is malformed."""


class DataLossError(FormatError):
    """Stored bytes do not match their checksum, or a file is truncated."""

    error_code = DATA_LOSS


class ShapeError(OneGraphError):
    """Tensor shapes or dtypes are inconsistent with an operator's definition."""

    error_code = INVALID_ARGUMENT


class UnsupportedOpError(OneGraphError):
    """An operator (or op version or dtype) has no definition or kernel here."""

    error_code = UNIMPLEMENTED


class OpAttributeError(OneGraphError):
    """A node has a missing, unknown or wrongly typed attribute."""

    error_code = INVALID_ARGUMENT


class ExecutionError(OneGraphError):
    """A kernel failed while running a node; the message names the node and op."""


class ResourceExhaustedError(ExecutionError):
    """A kernel ran out of memory (TF1's ResourceExhaustedError); the message names the
    node, its op and input shapes, and how much was asked for."""

    error_code = RESOURCE_EXHAUSTED


class CancelledError(ExecutionError):
    """An op was waiting (on a queue) when its Session was closed (TF1's CancelledError)."""

    error_code = CANCELLED


class GradientNotDefinedError(OneGraphError):
    """An op on the path from a loss to a variable has no gradient rule."""


class ConversionError(OneGraphError):
    """A model cannot be converted to or from another format (ONNX, TFLite)."""


class QuantizationError(OneGraphError):
    """A model cannot be quantized as asked."""


class PlacementError(OneGraphError):
    """Ops cannot be placed on devices as the constraints ask."""


class NotFoundError(OneGraphError):
    """What was asked for (a checkpoint, a variable in one) is not there (TF1's
    NotFoundError); the message names the path."""

    error_code = NOT_FOUND


class OutOfRangeError(OneGraphError):
    """A closed queue is exhausted (the input pipeline has ended)."""

    error_code = OUT_OF_RANGE


class InvalidArgumentError(ExecutionError, ValueError):
    """An op was given a value it cannot work with (TF1's InvalidArgumentError)."""

    error_code = INVALID_ARGUMENT


class FailedPreconditionError(ExecutionError):
    """The system is not in the state an op needs: an uninitialized table, a file that
    is a directory (TF1's FailedPreconditionError)."""

    error_code = FAILED_PRECONDITION


class AlreadyExistsError(OneGraphError):
    """What was to be created exists already (TF1's AlreadyExistsError)."""

    error_code = ALREADY_EXISTS


class PermissionDeniedError(OneGraphError):
    """An operation is not allowed: writing a file opened for reading (TF1's
    PermissionDeniedError)."""

    error_code = PERMISSION_DENIED


class UnimplementedError(UnsupportedOpError):
    """An operation is not implemented here, such as a cloud file system (TF1's
    UnimplementedError)."""

    error_code = UNIMPLEMENTED


class AbortedError(OneGraphError):
    """An operation was aborted, typically by a concurrent one (TF1's AbortedError)."""

    error_code = ABORTED


class DeadlineExceededError(OneGraphError):
    """A deadline passed before an operation finished (TF1's DeadlineExceededError)."""

    error_code = DEADLINE_EXCEEDED


class InternalError(OneGraphError):
    """An internal invariant broke (TF1's InternalError)."""

    error_code = INTERNAL


class UnavailableError(OneGraphError):
    """A service is not available now (TF1's UnavailableError)."""

    error_code = UNAVAILABLE


class UnauthenticatedError(OneGraphError):
    """A request lacks valid credentials (TF1's UnauthenticatedError)."""

    error_code = UNAUTHENTICATED


class UnknownError(OneGraphError):
    """An error of no other kind (TF1's UnknownError)."""


_CLASS_OF_CODE = {CANCELLED: CancelledError, UNKNOWN: UnknownError,
                  INVALID_ARGUMENT: InvalidArgumentError,
                  DEADLINE_EXCEEDED: DeadlineExceededError, NOT_FOUND: NotFoundError,
                  ALREADY_EXISTS: AlreadyExistsError, PERMISSION_DENIED: PermissionDeniedError,
                  UNAUTHENTICATED: UnauthenticatedError,
                  RESOURCE_EXHAUSTED: ResourceExhaustedError,
                  FAILED_PRECONDITION: FailedPreconditionError, ABORTED: AbortedError,
                  OUT_OF_RANGE: OutOfRangeError, UNIMPLEMENTED: UnimplementedError,
                  INTERNAL: InternalError, UNAVAILABLE: UnavailableError,
                  DATA_LOSS: DataLossError}


def exception_type_from_error_code(error_code: int) -> type:
    """TF's error class for a code (TF1's tf.errors.exception_type_from_error_code).

    Raises:
        KeyError: the code is OK or no TF error code (as TF).
    """
    return _CLASS_OF_CODE[error_code]


def error_code_from_exception_type(cls: type) -> int:
    """The error code of an error class: its `error_code` (og's own classes give the
    code of the TF class they stand nearest to, UNKNOWN for the rest); UNKNOWN for a
    class that is not one of these (TF returns an UnknownError there, with a warning).
    Never raises."""
    code = getattr(cls, "error_code", None) if isinstance(cls, type) else None
    return code if isinstance(code, int) and issubclass(cls, OneGraphError) else UNKNOWN
