"""onegraph: one portable dataflow graph file from the datacenter to the phone."""

from .errors import (ConversionError, DataLossError, ExecutionError, FormatError,
                     GradientNotDefinedError, OneGraphError, OpAttributeError,
                     OutOfRangeError, PlacementError, QuantizationError, ShapeError,
                     UnsupportedOpError)

__version__ = "0.1.0"
