"""TF1's SavedModel vocabulary over onegraph graphs: the tag and signature constants,
TensorInfo / SignatureDef / MetaGraphDef records, and the signature_def_utils and utils
helpers (og.saved_model.*). These are plain Python records, not TF's protobufs: a
SavedModel here is one `.og` file (train/saved_model.py writes and reads it).
"""

from __future__ import annotations

from typing import Mapping

from ..format import DType
from .graph import Graph, Tensor, convert_to_tensor, get_default_graph
from .tensor_shape import TensorShape

# tf.saved_model.tag_constants (TF's values)
SERVING, TRAINING, GPU, TPU = "serve", "train", "gpu", "tpu"

# tf.saved_model.signature_constants (TF's values)
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
PREDICT_METHOD_NAME = "tensorflow/serving/predict"
PREDICT_INPUTS, PREDICT_OUTPUTS = "inputs", "outputs"
CLASSIFY_METHOD_NAME = "tensorflow/serving/classify"
CLASSIFY_INPUTS = "inputs"
CLASSIFY_OUTPUT_CLASSES, CLASSIFY_OUTPUT_SCORES = "classes", "scores"
REGRESS_METHOD_NAME = "tensorflow/serving/regress"
REGRESS_INPUTS, REGRESS_OUTPUTS = "inputs", "outputs"


class TensorInfo:
    """What a signature says of one tensor (TF's TensorInfo): its `name` in the graph,
    its `dtype` (an og dtype) and `tensor_shape` (an og.TensorShape)."""

    __slots__ = ("name", "dtype", "tensor_shape")

    def __init__(self, name: str, dtype, tensor_shape=None):
        self.name, self.dtype = name, dtype
        self.tensor_shape = tensor_shape if isinstance(tensor_shape, TensorShape) \
            else TensorShape(tensor_shape)

    def __eq__(self, other):
        if not isinstance(other, TensorInfo):
            return NotImplemented
        return (self.name, self.dtype, tuple(self.tensor_shape)) == (
            other.name, other.dtype, tuple(other.tensor_shape))

    def __repr__(self) -> str:
        return (f"TensorInfo(name={self.name!r}, dtype={self.dtype.short_name}, "
                f"tensor_shape={self.tensor_shape})")


class SignatureDef:
    """A named entry point (TF's SignatureDef): `inputs` and `outputs` map keys to
    `TensorInfo`s; `method_name` says how a server calls it (PREDICT_METHOD_NAME, ...)."""

    def __init__(self, inputs: Mapping | None = None, outputs: Mapping | None = None,
                 method_name: str = ""):
        self.inputs = dict(inputs or {})
        self.outputs = dict(outputs or {})
        self.method_name = method_name

    def __repr__(self) -> str:
        return (f"SignatureDef(inputs={self.inputs}, outputs={self.outputs}, "
                f"method_name={self.method_name!r})")


class MetaInfoDef:
    """TF's MetaGraphDef.MetaInfoDef, as far as loading needs: the graph's `tags`."""

    def __init__(self, tags):
        self.tags = list(tags)


class MetaGraphDef:
    """What `og.saved_model.loader.load` returns (TF's MetaGraphDef): `signature_def`
    (key -> SignatureDef) and `meta_info_def.tags`."""

    def __init__(self, tags, signature_def: Mapping):
        self.meta_info_def = MetaInfoDef(tags)
        self.signature_def = dict(signature_def)


def build_tensor_info(tensor) -> TensorInfo:
    """The TensorInfo of an og tensor (or a Variable): its name, dtype and static shape.

    Raises:
        TypeError: tensor is not a tensor of an og.Graph (nor converts to one).
    """
    if not isinstance(tensor, Tensor) and not hasattr(tensor, "_as_graph_tensor"):
        raise TypeError(f"build_tensor_info: expected an og tensor, got "
                        f"{type(tensor).__name__}")
    t = convert_to_tensor(tensor)
    return TensorInfo(t.name, t.dtype, t.shape)


def get_tensor_from_tensor_info(tensor_info, graph: Graph | None = None,
                                import_scope: str | None = None) -> Tensor:
    """The tensor a TensorInfo names in `graph` (default: the default graph); with
    `import_scope`, the name is taken under that scope ("scope/name").

    Raises:
        TypeError: tensor_info is not a TensorInfo, or graph is not an og.Graph.
        KeyError: the graph has no tensor of that name (as TF).
    """
    if not isinstance(tensor_info, TensorInfo):
        raise TypeError(f"get_tensor_from_tensor_info: expected a TensorInfo, got "
                        f"{type(tensor_info).__name__}")
    graph = get_default_graph() if graph is None else graph
    if not isinstance(graph, Graph):
        raise TypeError(f"get_tensor_from_tensor_info: graph must be an og.Graph, got "
                        f"{type(graph).__name__}")
    name = tensor_info.name
    if import_scope:
        name = f"{import_scope.rstrip('/')}/{name}"
    return graph.get_tensor_by_name(name)


def _infos(mapping, what: str) -> dict:
    """{key: TensorInfo} of a mapping of str keys to TensorInfos or tensors.

    Raises:
        TypeError: mapping is not a dict, or a key is not a str or a value is neither.
    """
    if not isinstance(mapping, Mapping):
        raise TypeError(f"{what} must be a dict {{key: tensor}}, got "
                        f"{type(mapping).__name__}")
    out = {}
    for key, value in mapping.items():
        if not isinstance(key, str):
            raise TypeError(f"{what} keys must be str, got {key!r}")
        out[key] = value if isinstance(value, TensorInfo) else build_tensor_info(value)
    return out


def build_signature_def(inputs=None, outputs=None, method_name=None,
                        defaults=None) -> SignatureDef:
    """A SignatureDef of `inputs` and `outputs` ({key: TensorInfo}, tensors taken too)
    and `method_name`.

    Raises:
        TypeError: inputs or outputs is not a dict of str keys to TensorInfos or
            tensors, or method_name is not a str.
        ValueError: defaults are given (onegraph signatures hold no default values).
    """
    if defaults:
        raise ValueError("build_signature_def: defaults are not supported (onegraph "
                         "signatures hold no default input values)")
    if method_name is not None and not isinstance(method_name, str):
        raise TypeError(f"build_signature_def: method_name must be a str, got "
                        f"{type(method_name).__name__}")
    return SignatureDef(_infos(inputs or {}, "build_signature_def: inputs"),
                        _infos(outputs or {}, "build_signature_def: outputs"),
                        method_name or "")


def predict_signature_def(inputs, outputs) -> SignatureDef:
    """A predict SignatureDef: inputs and outputs are {key: tensor}.

    Raises:
        ValueError: inputs or outputs is None or empty (TF's words).
        TypeError: either is not a dict of str keys to tensors.
    """
    if not inputs:
        raise ValueError("Prediction `inputs` cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction `outputs` cannot be None or empty.")
    return SignatureDef(_infos(inputs, "predict_signature_def: inputs"),
                        _infos(outputs, "predict_signature_def: outputs"),
                        PREDICT_METHOD_NAME)


def _string_tensor(x, what: str) -> TensorInfo:
    """The TensorInfo of a string tensor.

    Raises:
        ValueError: x is None, not a tensor, or not of dtype string (TF's words).
    """
    if x is None:
        raise ValueError(f"{what} cannot be None.")
    if not isinstance(x, Tensor):
        raise ValueError(f"{what} must be a string Tensor. Found {type(x).__name__}.")
    info = build_tensor_info(x)
    if info.dtype != DType.STRING:
        raise ValueError(f"{what} must be a string Tensor. Found tensors of type "
                         f"{info.dtype.short_name}.")
    return info


def _float_tensor(x, what: str) -> TensorInfo:
    """The TensorInfo of a float32 tensor.

    Raises:
        ValueError: x is not a tensor of dtype float32.
        TypeError: x is not a tensor.
    """
    info = build_tensor_info(x)
    if info.dtype != DType.FLOAT32:
        raise ValueError(f"{what} must be a float Tensor. Found tensors of type "
                         f"{info.dtype.short_name}.")
    return info


def regression_signature_def(examples, predictions) -> SignatureDef:
    """A regress SignatureDef: `examples` a string tensor, `predictions` float32.

    Raises:
        ValueError: either is None or of another dtype.
        TypeError: predictions is not a tensor.
    """
    inputs = {REGRESS_INPUTS: _string_tensor(examples, "Regression `examples`")}
    if predictions is None:
        raise ValueError("Regression `predictions` cannot be None.")
    outputs = {REGRESS_OUTPUTS: _float_tensor(predictions, "Regression `predictions`")}
    return SignatureDef(inputs, outputs, REGRESS_METHOD_NAME)


def classification_signature_def(examples, classes, scores) -> SignatureDef:
    """A classify SignatureDef: `examples` a string tensor, `classes` a string tensor
    and/or `scores` a float32 one.

    Raises:
        ValueError: examples is None, classes and scores are both None, or one is of
            another dtype.
        TypeError: classes or scores is not a tensor.
    """
    inputs = {CLASSIFY_INPUTS: _string_tensor(examples, "Classification `examples`")}
    if classes is None and scores is None:
        raise ValueError("Classification `classes` and `scores` cannot both be None.")
    outputs = {}
    if classes is not None:
        outputs[CLASSIFY_OUTPUT_CLASSES] = _string_tensor(classes,
                                                          "Classification `classes`")
    if scores is not None:
        outputs[CLASSIFY_OUTPUT_SCORES] = _float_tensor(scores, "Classification `scores`")
    return SignatureDef(inputs, outputs, CLASSIFY_METHOD_NAME)


def _valid_predict(sig: SignatureDef) -> bool:
    return sig.method_name == PREDICT_METHOD_NAME and bool(sig.inputs) and \
        bool(sig.outputs)


def _valid_regress(sig: SignatureDef) -> bool:
    return (sig.method_name == REGRESS_METHOD_NAME
            and set(sig.inputs) == {REGRESS_INPUTS}
            and sig.inputs[REGRESS_INPUTS].dtype == DType.STRING
            and set(sig.outputs) == {REGRESS_OUTPUTS}
            and sig.outputs[REGRESS_OUTPUTS].dtype == DType.FLOAT32)


def _valid_classify(sig: SignatureDef) -> bool:
    want = {CLASSIFY_OUTPUT_CLASSES: DType.STRING, CLASSIFY_OUTPUT_SCORES: DType.FLOAT32}
    return (sig.method_name == CLASSIFY_METHOD_NAME
            and set(sig.inputs) == {CLASSIFY_INPUTS}
            and sig.inputs[CLASSIFY_INPUTS].dtype == DType.STRING
            and bool(sig.outputs) and not set(sig.outputs) - set(want)
            and all(sig.outputs[k].dtype == want[k] for k in sig.outputs))


def is_valid_signature(signature_def) -> bool:
    """Whether TF Serving could serve the SignatureDef (TF's rules for the predict,
    classify and regress methods); False for None or anything else. Never raises."""
    if not isinstance(signature_def, SignatureDef):
        return False
    return (_valid_classify(signature_def) or _valid_regress(signature_def)
            or _valid_predict(signature_def))
