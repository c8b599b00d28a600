"""The .og file format: schema, in-memory IR, dtypes, save/load and the verifier."""

from .dtypes import DType
from .ir import (SCHEMA_VERSION, AttrType, Container, Graph, Model, Node, Quantization,
                 Signature, Tensor, TensorKind, TypedList)
from .reader import load_model, parse
from .writer import save_model, serialize

__all__ = ["DType", "SCHEMA_VERSION", "AttrType", "Container", "Graph", "Model", "Node",
           "Quantization", "Signature", "Tensor", "TensorKind", "TypedList", "load_model", "parse",
           "save_model", "serialize"]
