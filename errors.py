"""The exception hierarchy: every error onegraph raises on bad input is one of these."""


class OneGraphError(Exception):
    """Base class of every error onegraph raises deliberately."""


class FormatError(OneGraphError):
    """A `.og` file (or an in-memory model about to be written) is malformed."""


class DataLossError(FormatError):
    """Stored bytes do not match their checksum, or a file is truncated."""


class ShapeError(OneGraphError):
    """Tensor shapes or dtypes are inconsistent with an operator's definition."""


class UnsupportedOpError(OneGraphError):
    """An operator (or op version or dtype) has no definition or kernel here."""


class OpAttributeError(OneGraphError):
    """A node has a missing, unknown or wrongly typed attribute."""


class ExecutionError(OneGraphError):
    """A kernel failed while running a node; the message names the node and op."""


class ResourceExhaustedError(ExecutionError):
    """A kernel ran out of memory (TF1's ResourceExhaustedError); the message names the
    node, its op and input shapes, and how much was asked for."""


class CancelledError(ExecutionError):
    """An op was waiting (on a queue) when its Session was closed (TF1's CancelledError)."""


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


class OutOfRangeError(OneGraphError):
    """A closed queue is exhausted (the input pipeline has ended)."""


class InvalidArgumentError(ExecutionError, ValueError):
    """An op was given a value it cannot work with (TF1's InvalidArgumentError)."""


class FailedPreconditionError(ExecutionError):
    """The system is not in the state an op needs: an uninitialized table, a file that
    is a directory (TF1's FailedPreconditionError)."""


class AlreadyExistsError(OneGraphError):
    """What was to be created exists already (TF1's AlreadyExistsError)."""


class PermissionDeniedError(OneGraphError):
    """An operation is not allowed: writing a file opened for reading (TF1's
    PermissionDeniedError)."""


class UnimplementedError(UnsupportedOpError):
    """An operation is not implemented here, such as a cloud file system (TF1's
    UnimplementedError)."""
