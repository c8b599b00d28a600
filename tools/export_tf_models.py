"""Export small TensorFlow/Keras models to ONNX, as tf2onnx really writes them.

A test-corpus generator for onegraph's ONNX importer. Users arrive with models that
tf2onnx converted from TensorFlow/Keras, and tf2onnx writes graphs unlike PyTorch's
exporters: NHWC layouts wrapped in Transposes, Keras RNNs rewritten to ONNX
LSTM/GRU (or left as Loops), SAME padding spelled out, TF resize modes mapped onto
Resize attributes, tf.while_loop / tf.cond as Loop / If, shapes computed at run time
with Shape/Slice/Concat. This script defines small models (narrow widths, seeded
weights, randomised BatchNorm statistics and biases) with tf_keras (Keras 2, what
tf2onnx 1.17 is written for), a Keras 3 one, and plain tf.functions (a
CNN with BatchNorm, MobileNet- and ResNet-like blocks, Conv1D, a Conv2DTranspose
decoder, LSTM/GRU/bidirectional and masked RNNs, a transformer block and causal
attention, an Embedding text model, preprocessing and activation layers, op
collections for math, layout, resizing, scatter/segment, image and detection ops,
an STFT, run-time shapes, tf.while_loop / tf.cond), converts each with
`tf2onnx.convert.from_keras` / `from_function` at several opsets, some with a
dynamic batch (and sequence) dimension, and saves the inputs and TensorFlow's own
outputs on them, the independent oracle the tests compare against:

    OUT/<model>__tf2onnx_op<opset>[_dyn].onnx
    OUT/<model>__tf2onnx_op<opset>[_dyn].in<k>.npy        inputs (np.save, no pickle)
    OUT/<model>__tf2onnx_op<opset>[_dyn].out<k>.npy       TensorFlow's outputs on them
    OUT/<model>__tf2onnx_op<opset>[_dyn].in<k>.alt.npy    a second input set: another
    OUT/<model>__tf2onnx_op<opset>[_dyn].out<k>.alt.npy   batch/sequence size (dynamic
                                                            models) or the other branch
                                                            / trip count (control flow)
    OUT/index.json   {"generator": versions, "models": {file: entry}, "failures": [...]}
                     an entry gives name, converter, opset, dynamic, ONNX input and
                     output names (in graph order), input/output files, and when
                     onnxruntime was importable here its max abs difference from TF;
                     a failure gives name, opset, dynamic and the converter's error
                     (or, with onnxruntime, that the converted model disagrees with
                     TF: such files are not kept).

Outputs are stored in the ONNX graph's output order, matched to TensorFlow's by name
(Keras output layer names, or the keys of the dict a tf.function returns).

It needs tensorflow-cpu, tf_keras, tf2onnx, onnx and numpy; onnxruntime is optional
but the corpus was written with it: each conversion is then run, and one whose outputs
disagree with TF's (a tf2onnx conversion error) is recorded as a failure instead of
kept. It is not run by onegraph's tests. Versions that work together (tf2onnx 1.17's
from_keras fails on Keras 3 Sequential models, so the Keras models here use tf_keras;
tf2onnx refuses opsets above 18):

    python3 -m venv /tmp/tf2venv
    /tmp/tf2venv/bin/pip install tensorflow-cpu==2.21.* tf-keras==2.21.* tf2onnx==1.17.0 \\
        onnx numpy [onnxruntime]
    TF_CPP_MIN_LOG_LEVEL=3 /tmp/tf2venv/bin/python tools/export_tf_models.py OUT_DIR \\
        [--only NAME ...] [--opsets 13 17 18]

The corpus in tests/convert/data/tf2onnx_exported/ was written this way.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")   # tf.keras -> tf_keras (Keras 2)
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # plain kernels: reproducible oracle
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf2onnx  # noqa: E402
import tf_keras as keras  # noqa: E402

L = keras.layers
OPSETS = (13, 17, 18)   # 18 is the newest opset tf2onnx 1.17 knows (OPSET_TO_IR_VERSION)
DYN_OPSETS = (17, 18)   # models with a dynamic batch: these opsets get the None batch
PROBE_OPSET = 19        # tried on the first model only: tf2onnx 1.17 refuses it
# With onnxruntime importable, a conversion whose onnxruntime outputs differ from TF's
# by more than this is a tf2onnx conversion error: recorded as a failure, not saved.
# (TF's bicubic resize differs from ONNX's exact cubic by 1.5e-3; see tf_resize.)
ORT_AGREES = 1e-2


# ----------------------------------------------------------------------------------
# Keras models (functional API, tf_keras)
# ----------------------------------------------------------------------------------

def cnn_bn():
    """A small image classifier: Conv2D/BatchNorm/ReLU/MaxPool twice (SAME and VALID,
    stride 2), a SAME max pool with stride 1, Flatten of the NHWC map (so the layout
    Transposes matter), Dense logits and a Softmax."""
    x = keras.Input((16, 16, 3), name="image")
    y = L.Conv2D(8, 3, padding="same", use_bias=False)(x)
    y = L.ReLU()(L.BatchNormalization()(y))
    y = L.MaxPool2D(2)(y)
    y = L.Conv2D(12, 3, strides=2, padding="valid")(y)
    y = L.Activation("relu")(L.BatchNormalization(epsilon=1e-3)(y))
    y = L.MaxPool2D(3, strides=1, padding="same")(y)
    logits = L.Dense(10, name="logits")(L.Flatten()(y))
    probs = L.Softmax(name="probs")(logits)
    return keras.Model(x, [logits, probs])


def mobilenet_block():
    """MobileNetV2-like: strided stem with ReLU6, an inverted residual (1x1 expand,
    DepthwiseConv2D, 1x1 project, Add), ZeroPadding2D + strided VALID depthwise with
    depth_multiplier 2 (as keras.applications pads), SeparableConv2D, tf.nn.relu6,
    global average pooling, Dropout (inference no-op), softmax Dense."""
    x = keras.Input((16, 16, 3), name="image")
    y = L.Conv2D(8, 3, strides=2, padding="same", use_bias=False)(x)
    y = L.ReLU(6.0)(L.BatchNormalization()(y))
    h = L.ReLU(6.0)(L.BatchNormalization()(L.Conv2D(16, 1, use_bias=False)(y)))
    h = L.ReLU(6.0)(L.BatchNormalization()(
        L.DepthwiseConv2D(3, padding="same", use_bias=False)(h)))
    h = L.BatchNormalization()(L.Conv2D(8, 1, use_bias=False)(h))
    y = L.Add()([y, h])
    y = L.ZeroPadding2D(((0, 1), (0, 1)))(y)
    y = L.DepthwiseConv2D(3, strides=2, padding="valid", depth_multiplier=2)(y)
    y = L.ReLU(6.0)(L.BatchNormalization()(y))
    y = L.SeparableConv2D(12, 3, padding="same")(y)
    y = L.Activation(tf.nn.relu6)(y)
    y = L.Dropout(0.2)(L.GlobalAveragePooling2D()(y))
    return keras.Model(x, L.Dense(5, activation="softmax", name="probs")(y))


def resnet_block():
    """ResNet-like: stem, an identity block and a strided block with a 1x1 projection
    shortcut (SAME padding with stride 2: TF pads more at the end), Add, ReLU,
    AveragePooling2D, GlobalMaxPooling2D, Dense."""
    def block(t, c, stride):
        h = L.Conv2D(c, 3, strides=stride, padding="same", use_bias=False)(t)
        h = L.ReLU()(L.BatchNormalization()(h))
        h = L.BatchNormalization()(L.Conv2D(c, 3, padding="same", use_bias=False)(h))
        s = t
        if stride != 1 or t.shape[-1] != c:
            s = L.BatchNormalization()(L.Conv2D(c, 1, strides=stride, use_bias=False)(t))
        return L.ReLU()(L.Add()([h, s]))

    x = keras.Input((12, 12, 4), name="image")
    y = L.ReLU()(L.BatchNormalization()(L.Conv2D(8, 3, padding="same")(x)))
    y = block(y, 8, 1)
    y = block(y, 16, 2)
    y = L.GlobalMaxPooling2D()(L.AveragePooling2D(2)(y))
    return keras.Model(x, L.Dense(4, name="logits")(y))


def conv1d_net():
    """A 1-D conv net over (N, T, C): causal dilated Conv1D (tf2onnx writes a Pad),
    BatchNorm, ReLU, MaxPool1D, strided SAME Conv1D with elu, AveragePooling1D SAME,
    VALID Conv1D with swish, GlobalAveragePooling1D, Dense."""
    x = keras.Input((32, 2), name="wave")
    y = L.Conv1D(8, 5, padding="causal", dilation_rate=2)(x)
    y = L.ReLU()(L.BatchNormalization()(y))
    y = L.MaxPool1D(2)(y)
    y = L.Conv1D(8, 3, strides=2, padding="same", activation="elu")(y)
    y = L.AveragePooling1D(2, padding="same")(y)
    y = L.Conv1D(6, 3, padding="valid", activation="swish")(y)
    y = L.GlobalAveragePooling1D()(y)
    return keras.Model(x, L.Dense(3, name="logits")(y))


def decoder():
    """A tiny image decoder: Dense, Reshape to NHWC, Conv2DTranspose stride 2 SAME,
    UpSampling2D nearest, Conv2DTranspose VALID, UpSampling2D bilinear, Conv2D with a
    sigmoid."""
    z = keras.Input((6,), name="z")
    y = L.Reshape((4, 4, 8))(L.Dense(4 * 4 * 8, activation="relu")(z))
    y = L.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu")(y)  # 8x8
    y = L.UpSampling2D(2)(y)                                                      # 16
    y = L.Conv2DTranspose(6, 3, strides=1, padding="valid")(y)                    # 18
    y = L.Conv2DTranspose(6, 2, strides=2, padding="valid")(L.LeakyReLU(0.2)(y))  # 36
    y = L.UpSampling2D(2, interpolation="bilinear")(L.MaxPool2D(4)(y))            # 18
    return keras.Model(z, L.Conv2D(3, 3, padding="same", activation="sigmoid",
                                   name="image")(y))


def lstm_net():
    """Keras LSTM (return_sequences) feeding a second LSTM with return_state; a Dense
    on every step; outputs the per-step logits and the final h and c."""
    x = keras.Input((7, 5), name="seq")
    y = L.LSTM(8, return_sequences=True)(x)
    y, h, c = L.LSTM(6, return_sequences=True, return_state=True)(y)
    logits = L.Dense(3, name="logits")(y)
    return keras.Model(x, [logits, L.Activation("linear", name="h")(h),
                           L.Activation("linear", name="c")(c)])


def gru_net():
    """Keras GRU with reset_after=True (ONNX linear_before_reset=1) and returning
    sequences, then a GRU with reset_after=False and go_backwards, Dense head."""
    x = keras.Input((7, 5), name="seq")
    y = L.GRU(8, return_sequences=True)(x)
    y = L.GRU(6, reset_after=False, go_backwards=True)(y)
    return keras.Model(x, L.Dense(3, name="logits")(y))


def bilstm_net():
    """Bidirectional LSTM (merge concat, sequences) then a Bidirectional GRU (merge
    sum, last state), Dense."""
    x = keras.Input((6, 4), name="seq")
    y = L.Bidirectional(L.LSTM(6, return_sequences=True))(x)
    y = L.Bidirectional(L.GRU(4), merge_mode="sum")(y)
    return keras.Model(x, L.Dense(3, name="logits")(y))


def _gelu_erf(t):
    """Exact gelu, 0.5 x (1 + erf(x / sqrt(2)))."""
    return 0.5 * t * (1.0 + tf.math.erf(t * 0.7071067811865476))


def keras_gelu():
    """Dense with keras' "gelu" activation (tf.nn.gelu, exact): tf.nn.gelu is
    written with Erfc, which tf2onnx 1.17 leaves as an unknown op, so the conversion
    fails; kept so index.json records it."""
    x = keras.Input((4,), name="x")
    return keras.Model(x, L.Dense(3, activation="gelu", name="y")(x))


def transformer():
    """A post-norm transformer encoder block: keras MultiHeadAttention (2 heads),
    residual Add, LayerNormalization, a Dense/gelu MLP, another residual and
    LayerNormalization, mean pooling, Dense; outputs the sequence and the logits.
    The gelu is the exact one written with tf.math.erf, as BERT's TF code writes it:
    keras' own "gelu" (tf.nn.gelu) uses Erfc, which tf2onnx 1.17 cannot convert
    (see keras_gelu)."""
    x = keras.Input((6, 16), name="tokens")
    a = L.MultiHeadAttention(num_heads=2, key_dim=8)(x, x)
    h = L.LayerNormalization(epsilon=1e-6)(L.Add()([x, a]))
    f = L.Dense(16)(L.Dense(32, activation=_gelu_erf)(h))
    out = L.LayerNormalization(epsilon=1e-6, name="encoded")(L.Add()([h, f]))
    logits = L.Dense(4, name="logits")(L.GlobalAveragePooling1D()(out))
    return keras.Model(x, [out, logits])


def causal_attention():
    """keras MultiHeadAttention with use_causal_mask=True (the mask is built at run
    time from the sequence length with band_part), gelu(approximate=True), a
    LayerNormalization over the last axis."""
    x = keras.Input((5, 8), name="tokens")
    a = L.MultiHeadAttention(num_heads=2, key_dim=4, value_dim=6)(x, x,
                                                                  use_causal_mask=True)
    y = L.LayerNormalization()(L.Add()([x, a]))
    y = L.Dense(8, activation=lambda t: tf.nn.gelu(t, approximate=True))(y)
    return keras.Model(x, L.Activation("linear", name="y")(y))


def text_net():
    """A text classifier on int32 token ids: Embedding with mask_zero feeding a
    mask-aware GlobalAveragePooling1D, a second Embedding with Conv1D and
    GlobalMaxPooling1D, Concatenate, Dense sigmoid."""
    ids = keras.Input((10,), dtype="int32", name="ids")
    a = L.GlobalAveragePooling1D()(L.Embedding(50, 8, mask_zero=True)(ids))
    c = L.Conv1D(8, 3, padding="same", activation="relu")(L.Embedding(50, 6)(ids))
    p = L.Concatenate()([a, L.GlobalMaxPooling1D()(c)])
    return keras.Model(ids, L.Dense(2, activation="sigmoid", name="probs")(p))


def keras_layers():
    """Less common Keras layers: preprocessing (Rescaling, Normalization with
    adapted statistics, Resizing, CenterCrop), a standalone BatchNormalization on a
    2-D and on a 4-D tensor, a dilated Conv2D, Cropping2D,
    SpatialDropout2D (inference no-op), PReLU, LeakyReLU, ELU, ThresholdedReLU,
    selu, softsign, hard_sigmoid, exponential, mish written by hand, GlobalAveragePooling2D
    with keepdims, and LayerNormalization over the (H, W, C) axes."""
    x = keras.Input((12, 12, 4), name="image")
    norm = L.Normalization(axis=-1)
    norm.adapt(np.random.default_rng(5).uniform(-2, 3, (16, 12, 12, 4)).astype(np.float32))
    y = norm(L.Rescaling(1 / 4.0, offset=-0.5)(x))
    y = L.Resizing(10, 10)(y)                                              # bilinear
    y = L.CenterCrop(8, 8)(y)
    y = L.Conv2D(8, 3, padding="same", dilation_rate=2)(y)
    y = L.BatchNormalization()(y)
    y = L.SpatialDropout2D(0.3)(L.PReLU(shared_axes=[1, 2])(y))
    y = L.Cropping2D(((1, 0), (0, 2)))(y)                                  # 7x6
    y = L.LayerNormalization(axis=[1, 2, 3])(y)
    p = L.GlobalAveragePooling2D(keepdims=True)(y)
    v = L.BatchNormalization()(L.Flatten()(p))
    acts = [L.LeakyReLU(0.3)(v), L.ELU(0.7)(v), L.ThresholdedReLU(0.2)(v),
            L.Activation("selu")(v), L.Activation("softsign")(v),
            L.Activation("hard_sigmoid")(v), L.Activation("exponential")(v),
            L.Activation(lambda t: t * tf.tanh(tf.nn.softplus(t)))(v)]
    return keras.Model(x, [L.Concatenate(name="acts")(acts),
                           L.Activation("linear", name="map")(y)])


def keras_grouped_conv():
    """Conv2D with groups=2: tf_keras runs grouped convolutions through a nested
    jit-compiled tf.function, which tf2onnx 1.17 leaves as a PartitionedCall, so the
    conversion fails; kept so index.json records it."""
    x = keras.Input((6, 6, 4), name="image")
    return keras.Model(x, L.Conv2D(4, 3, groups=2, name="y")(x))


def masked_rnn():
    """A text RNN as Keras users write it: Embedding(mask_zero=True) feeding an LSTM
    (the padding mask becomes per-row sequence lengths), and a SimpleRNN branch."""
    ids = keras.Input((8,), dtype="int32", name="ids")
    e = L.Embedding(30, 6, mask_zero=True)(ids)
    a = L.LSTM(5)(e)
    b = L.SimpleRNN(4, return_sequences=True)(L.Embedding(30, 3)(ids))
    b = L.GlobalAveragePooling1D()(b)
    return keras.Model(ids, L.Dense(2, name="logits")(L.Concatenate()([a, b])))


def keras3_sequential():
    """A Keras 3 Sequential model given to from_keras: tf2onnx 1.17 fails on it
    (KeyError 'keras_tensor_N'; it handles Keras 3 functional models); kept so
    index.json records it. Keras 3 users go through from_function (keras3_cnn)."""
    import keras as keras3  # Keras 3, not tf_keras

    keras3.utils.set_random_seed(0)
    return keras3.Sequential([keras3.Input((6,), name="x"), keras3.layers.Dense(3)])


def keras3_cnn():
    """A Keras 3 model (the `keras` package TF 2.16+ installs by default): Conv2D,
    BatchNormalization, ReLU, DepthwiseConv2D, GlobalAveragePooling2D, Dense. It is
    converted the way that works for every Keras 3 model, tf2onnx's from_function on a
    tf.function calling the model (from_keras fails on Keras 3 Sequential models, see
    keras3_sequential)."""
    import keras as keras3  # Keras 3, not tf_keras

    keras3.utils.set_random_seed(0)
    x = keras3.Input((10, 10, 3), name="image")
    y = keras3.layers.Conv2D(6, 3, padding="same")(x)
    y = keras3.layers.ReLU()(keras3.layers.BatchNormalization()(y))
    y = keras3.layers.DepthwiseConv2D(3, strides=2, padding="same")(y)
    y = keras3.layers.GlobalAveragePooling2D()(keras3.layers.ReLU(6.0)(y))
    model = keras3.Model(x, keras3.layers.Dense(4)(y))
    _perturb(model)

    @tf.function
    def f(image):
        return {"logits": model(image, training=False)}
    f.keras3_model = model  # keep the variables alive with the function
    return f


# ----------------------------------------------------------------------------------
# tf.function models
# ----------------------------------------------------------------------------------

def _const(seed, *shape, scale=0.3):
    """A seeded float32 numpy array: used inside a tf.function it becomes a Const
    node (an eager tf.constant captured from outside would become an extra graph
    input in tf2onnx's from_function)."""
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def tf_math():
    """Elementwise, reduction and selection ops as tf.functions write them:
    tf.where, reduce_sum/max/mean/prod/min/logsumexp, reduce_std, exp/log/sqrt/
    rsqrt/erf/softplus/floormod/floordiv/pow/sign/round/square, squared_difference,
    cumsum (exclusive, reverse), argmax, top_k, softmax/log_softmax, a batched
    matmul with transpose_b, einsum, clip_by_value, a float->int->float cast."""
    w = _const(1, 8, 4)

    @tf.function
    def f(x):
        ax = tf.abs(x)
        vals, idx = tf.math.top_k(x, 3)
        return {
            "where": tf.where(x > 0, x, 0.1 * x),
            "rsum": tf.reduce_sum(x, axis=1),
            "rmax": tf.reduce_max(x, axis=[1, 2], keepdims=True),
            "rmean": tf.reduce_mean(x, axis=-1),
            "rprod": tf.reduce_prod(tf.tanh(x), axis=2),
            "rmin": tf.reduce_min(x, axis=0),
            "lse": tf.math.reduce_logsumexp(x, axis=2),
            "std": tf.math.reduce_std(x, axis=1),
            "unary": tf.exp(-ax) + tf.math.log(ax + 1.0) + tf.sqrt(ax)
            + tf.math.rsqrt(ax + 1.0) + tf.math.erf(x) + tf.nn.softplus(x)
            + tf.sign(x) * tf.round(x * 2.0),
            "mod": tf.math.floormod(x, 0.7) + tf.math.floordiv(x, 0.6),
            "pow": tf.pow(ax + 0.5, 1.5) + tf.square(x)
            - tf.math.squared_difference(x, 0.3),
            "cumsum": tf.math.cumsum(x, axis=2, exclusive=True, reverse=True),
            "argmax": tf.argmax(x, axis=2),
            "topv": vals,
            "topi": idx,
            "softmax": tf.nn.softmax(x, axis=1) + tf.nn.log_softmax(x),
            "matmul": tf.matmul(x, x, transpose_b=True),
            "einsum": tf.einsum("bij,jk->bik", tf.transpose(x, [0, 2, 1]), _const(2, 6, 3)),
            "dense": tf.nn.sigmoid(tf.tensordot(x, w, axes=1)),
            "clip": tf.clip_by_value(x, -0.5, 0.8) + tf.cast(tf.cast(x * 3, tf.int32),
                                                             tf.float32),
        }
    return f


def tf_shapes():
    """Layout and indexing ops: gather (axis 1, batch_dims 1), gather_nd, strided
    slices (step 2, negative step, shrink axis, new axis, ellipsis, negative
    begin), concat, tile, pad (CONSTANT with a value, REFLECT, SYMMETRIC), split,
    unstack/stack, transpose, reshape, expand_dims/squeeze, reverse, one_hot."""
    @tf.function
    def f(x, ids):
        parts = tf.split(x, [3, 5], axis=2)
        rows = tf.unstack(x, axis=1)
        return {
            "gather": tf.gather(x, [3, 0, 2], axis=1),
            "gather_b": tf.gather(x, ids, axis=1, batch_dims=1),
            "gather_nd": tf.gather_nd(x, [[0, 1], [1, 5], [1, 0]]),
            "slice_a": x[:, 1:5:2, ::-1, 0],
            "slice_b": x[..., tf.newaxis, 1:],
            "slice_c": x[:, -3:, 2:-1],
            "concat": tf.concat([x, x * 2.0], axis=-1),
            "tile": tf.tile(x[:, :2], [1, 2, 1, 1]),
            "pad_c": tf.pad(x, [[0, 0], [1, 2], [2, 1], [0, 0]], constant_values=1.5),
            "pad_r": tf.pad(x, [[0, 0], [2, 1], [1, 1], [0, 0]], mode="REFLECT"),
            "pad_s": tf.pad(x, [[0, 0], [1, 0], [0, 2], [0, 0]], mode="SYMMETRIC"),
            "split": parts[1] - tf.reduce_mean(parts[0], axis=2, keepdims=True),
            "stack": tf.stack(rows[::-1][:3], axis=-1),
            "transpose": tf.reshape(tf.transpose(x, [0, 3, 1, 2]), [2, 3, -1]),
            "squeeze": tf.squeeze(tf.expand_dims(x[:, :, :1], 0), [0, 3]),
            "reverse": tf.reverse(x, axis=[1, 3]),
            "one_hot": tf.one_hot(ids, 6, on_value=2.0, off_value=-1.0),
        }
    return f


def tf_detect():
    """Ops from detection and dense-prediction code: non_max_suppression (padded to a
    fixed count), sort/argsort, boolean_mask, unsorted_segment_sum, depth_to_space /
    space_to_depth, a dilated tf.nn.conv2d, tf.nn.l2_normalize, tf.nn.moments,
    local_response_normalization."""
    k = _const(6, 3, 3, 4, 4)

    @tf.function
    def f(boxes, scores, fmap):
        keep = tf.image.non_max_suppression(boxes, scores, 4, iou_threshold=0.4,
                                            score_threshold=0.05)
        keep = tf.pad(keep, [[0, 4 - tf.shape(keep)[0]]], constant_values=-1)
        seg = tf.math.unsorted_segment_sum(scores, tf.cast(scores * 3.0, tf.int32) % 3, 3)
        mean, var = tf.nn.moments(fmap, axes=[1, 2])
        return {
            "nms": keep,
            "sorted": tf.sort(scores, direction="DESCENDING"),
            "argsort": tf.argsort(scores),
            "masked": tf.reduce_sum(tf.boolean_mask(scores, scores > 0.5)),
            "segsum": seg,
            "d2s": tf.nn.depth_to_space(fmap, 2),
            "s2d": tf.nn.space_to_depth(fmap, 2),
            "dilated": tf.nn.conv2d(fmap, k, 1, "SAME", dilations=2),
            "l2n": tf.math.l2_normalize(fmap, axis=-1),
            "moments": mean + var,
            "lrn": tf.nn.local_response_normalization(fmap, 2, 1.0, 0.5, 0.75),
        }
    return f


def tf_signal():
    """Audio front end ops: tf.signal.stft (frames, a Hann window, an RFFT) and its
    magnitude, log-mel-like matmul."""
    mel = np.abs(_const(7, 9, 5))

    @tf.function
    def f(wave):
        spec = tf.abs(tf.signal.stft(wave, frame_length=16, frame_step=8, fft_length=16))
        return {"spec": spec, "logmel": tf.math.log(tf.matmul(spec, mel) + 1e-6)}
    return f


def tf_scatter():
    """Scatter, segment and sequence ops: tensor_scatter_nd_update and scatter_nd
    (ScatterND), single-argument tf.where (NonZero: a data-dependent shape),
    tf.unique, tf.roll, exclusive cumprod (a Loop), linalg.band_part, segment_max,
    reverse_sequence, linspace, a SparseTensor made dense, softmax cross-entropy."""
    @tf.function
    def f(v, x):
        return {
            "scatter_upd": tf.tensor_scatter_nd_update(v, [[0, 3], [1, 7]], [5.0, -5.0]),
            "scatter_nd": tf.scatter_nd([[1], [3]], v[:, :4], [5, 4]),
            "nonzero": tf.where(v > 0.3),
            "unique": tf.unique(tf.cast(tf.abs(v[0]) * 2.0, tf.int32))[0],
            "roll": tf.roll(v, 3, axis=1),
            "cumprod": tf.math.cumprod(v, axis=1, exclusive=True),
            "band": tf.linalg.band_part(x, 1, 0),
            "segmax": tf.math.segment_max(v[0], [0, 0, 1, 1, 1, 2, 2, 3, 3, 3]),
            "revseq": tf.reverse_sequence(v, [3, 7], seq_axis=1, batch_axis=0),
            "linspace": tf.linspace(0.0, v[0, 0], 5),
            "dense": tf.sparse.to_dense(tf.sparse.SparseTensor([[0, 1], [1, 2]], [1.0, 2.0],
                                                               [2, 4])) + v[:, :4],
            "xent": tf.nn.softmax_cross_entropy_with_logits(tf.nn.softmax(v * 2.0), v),
        }
    return f


def tf_image_ops():
    """Image ops with NHWC subtleties: rgb_to_grayscale, avg_pool2d SAME (TF leaves
    the padding out of the average), max_pool_with_argmax (NHWC-flattened int64
    indices), conv3d, extract_patches, a fused batch norm on NHWC, tf.linalg.diag,
    tf.map_fn (a Loop)."""
    k3 = _const(8, 1, 2, 2, 3, 2)

    @tf.function
    def f(img, v):
        return {
            "gray": tf.image.rgb_to_grayscale(img),
            "avgpool": tf.nn.avg_pool2d(img, 3, 2, "SAME"),
            "argmax": tf.nn.max_pool_with_argmax(img, 2, 2, "SAME")[1],
            "conv3d": tf.nn.conv3d(img[:, None], k3, [1, 1, 1, 1, 1], "VALID"),
            "patches": tf.image.extract_patches(img, [1, 2, 2, 1], [1, 2, 2, 1],
                                                [1, 1, 1, 1], "VALID"),
            "fused_bn": tf.compat.v1.nn.fused_batch_norm(
                img, [1.0, 0.5, 2.0], [0.1, 0.0, -0.1], mean=[0.1, 0.2, 0.3],
                variance=[2.0, 1.0, 0.5], is_training=False)[0],
            "diag": tf.linalg.diag(v[:, :3]),
            "map_fn": tf.map_fn(lambda r: tf.reduce_sum(r * r) + r, v),
        }
    return f


def tf_crop_resize():
    """tf.image.crop_and_resize (ROI crops as detection heads take them), which
    tf2onnx writes as a Loop over the boxes whose body declares the iteration number
    int64[1] and slices with it, each crop a Resize in tf_crop_and_resize mode."""
    @tf.function
    def f(img, boxes, box_ind):
        return {"crops": tf.image.crop_and_resize(img, boxes, box_ind, (4, 5))}
    return f


def tf_crop_nearest():
    """crop_and_resize with method="nearest": tf2onnx 1.17 converts it, but to a
    graph whose outputs differ from TF's (by 4.1 on these inputs, in onnxruntime), so
    it is recorded as a failure (see ORT_AGREES)."""
    @tf.function
    def f(img, boxes, box_ind):
        return {"crops": tf.image.crop_and_resize(img, boxes, box_ind, (3, 3),
                                                  method="nearest")}
    return f


def tf_searchsorted():
    """tf.searchsorted, which tf2onnx 1.17 leaves as an unknown op (LowerBound), so
    the conversion fails; kept so index.json records it."""
    @tf.function
    def f(x):
        return {"y": tf.searchsorted(tf.sort(x), x * 0.5)}
    return f


def tf_log1p():
    """tf.math.log1p, which tf2onnx 1.17 leaves as an unknown op (the conversion
    fails); kept so index.json records it."""
    @tf.function
    def f(x):
        return {"y": tf.math.log1p(tf.abs(x))}
    return f


def tf_resize():
    """Image resizing as TF2 writes it (tf.image.resize, half-pixel centres):
    bilinear up and down, nearest up and down, bicubic, and the TF1-style
    resize_bilinear / resize_nearest_neighbor with align_corners=True."""
    v1 = tf.compat.v1.image

    @tf.function
    def f(x):
        return {
            "bilinear_up": tf.image.resize(x, (10, 9), "bilinear"),
            "bilinear_down": tf.image.resize(x, (3, 4), "bilinear"),
            "nearest_up": tf.image.resize(x, (12, 7), "nearest"),
            "nearest_down": tf.image.resize(x, (4, 3), "nearest"),
            "bicubic": tf.image.resize(x, (9, 11), "bicubic"),
            "bilinear_ac": v1.resize_bilinear(x, (9, 11), align_corners=True),
            "nearest_ac": v1.resize_nearest_neighbor(x, (10, 13), align_corners=True),
        }
    return f


def dynamic_shapes():
    """Both batch and sequence length unknown (None, None, 6): tf.shape, tf.range
    positions, reshape to a run-time shape, tf.fill, ones of a run-time shape, a
    run-time sequence mask, einsum with a constant weight, reduce over the flattened
    tensor."""
    w = _const(3, 6, 4)

    @tf.function
    def f(x):
        n, t = tf.shape(x)[0], tf.shape(x)[1]
        pos = tf.cast(tf.range(t), tf.float32)[tf.newaxis, :, tf.newaxis]
        y = x + pos * 0.1
        flat = tf.reshape(y, [n, -1])
        m = tf.reduce_mean(flat, axis=1, keepdims=True)
        mask = tf.cast(tf.sequence_mask(tf.fill([n], t - 1), t), tf.float32)
        z = tf.einsum("btc,cd->btd", y - m[:, :, tf.newaxis], w) * mask[:, :, tf.newaxis]
        ones = tf.ones(tf.shape(x)[:2]) * tf.cast(t, tf.float32)
        return {"z": z, "flat": flat * 0.5, "ones": ones,
                "last": tf.gather(y, t - 1, axis=1)}
    return f


def control_flow():
    """tf.while_loop with a trip count fed at run time (ONNX Loop), a tf.cond on the
    data (ONNX If), and a tf.while_loop that stops on a data condition. The weight
    is a tf.Variable, which tf2onnx freezes into an initializer."""
    w = tf.Variable(_const(4, 5, 5, scale=0.4))

    @tf.function
    def f(x, n):
        def body(i, acc):
            return i + 1, acc * 0.9 + tf.tanh(tf.matmul(acc, w))
        _, y = tf.while_loop(lambda i, acc: i < n, body, [tf.constant(0), x])
        z = tf.cond(tf.reduce_sum(x) > 0.0, lambda: y * 2.0, lambda: y - 1.0)

        def halve(k, v):
            return k + 1, v * 0.5
        k, v = tf.while_loop(lambda k, v: tf.reduce_max(tf.abs(v)) > 0.1, halve,
                             [tf.constant(0), x])
        return {"y": y, "z": z, "halvings": k, "v": v}
    return f


# ----------------------------------------------------------------------------------
# Catalogue and export
# ----------------------------------------------------------------------------------

def _f32(rng, *shape, scale=1.0):
    """Seeded normal float32 values."""
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _ids(rng, n, length):
    """int32 token ids in [1, 50) with trailing zero padding varying per row."""
    ids = rng.integers(1, 50, (n, length)).astype(np.int32)
    for i in range(n):
        ids[i, length - (i % 3) * 2:] = 0
    return ids


def _boxes(rng, n):
    """`n` boxes (y1, x1, y2, x2) in the unit square, some overlapping."""
    c = rng.uniform(0.2, 0.8, (n, 2))
    hw = rng.uniform(0.1, 0.4, (n, 2))
    return np.concatenate([c - hw / 2, c + hw / 2], 1).astype(np.float32)


def _cf_inputs(rng, n, l):
    """control_flow's inputs: x and a scalar trip count; the default set has a
    positive sum (the cond's true branch), the alternative a negative one."""
    x = _f32(rng, 2, 5)
    x = np.abs(x) if n == 2 else -np.abs(x)
    return [x, np.array(3 if n == 2 else 1, dtype=np.int32)]


def catalogue():
    """The models: a list of dicts with name, kind ('keras' for tf_keras or 'keras3',
    both converted by from_keras; 'function', by from_function), make, input specs
    (name, shape with None for the dynamic batch/sequence, dtype), inputs (a function
    of (rng, batch, seq) giving numpy arrays), dyn (the specs' None dimensions may be
    left dynamic), alt (the second (batch, seq) size, or for a model without dynamic
    dimensions the argument giving its second input set)."""
    f32, i32 = tf.float32, tf.int32
    img = lambda *s: (lambda r, n, l: [_f32(r, n, *s)])  # noqa: E731
    return [
        dict(name="cnn_bn", kind="keras", make=cnn_bn,
             specs=[("image", (None, 16, 16, 3), f32)], inputs=img(16, 16, 3), dyn=True,
             alt=(3, None)),
        dict(name="mobilenet_block", kind="keras", make=mobilenet_block,
             specs=[("image", (None, 16, 16, 3), f32)], inputs=img(16, 16, 3), dyn=True,
             alt=(1, None)),
        dict(name="resnet_block", kind="keras", make=resnet_block,
             specs=[("image", (None, 12, 12, 4), f32)], inputs=img(12, 12, 4), dyn=True,
             alt=(3, None)),
        dict(name="conv1d", kind="keras", make=conv1d_net,
             specs=[("wave", (None, 32, 2), f32)], inputs=img(32, 2), dyn=True,
             alt=(3, None)),
        dict(name="decoder", kind="keras", make=decoder, specs=[("z", (None, 6), f32)],
             inputs=img(6), dyn=True, alt=(1, None)),
        dict(name="lstm", kind="keras", make=lstm_net, specs=[("seq", (None, 7, 5), f32)],
             inputs=img(7, 5), dyn=True, alt=(3, None)),
        dict(name="gru", kind="keras", make=gru_net, specs=[("seq", (None, 7, 5), f32)],
             inputs=img(7, 5), dyn=True, alt=(3, None)),
        dict(name="bilstm", kind="keras", make=bilstm_net,
             specs=[("seq", (None, 6, 4), f32)], inputs=img(6, 4), dyn=True, alt=(1, None)),
        dict(name="transformer", kind="keras", make=transformer,
             specs=[("tokens", (None, 6, 16), f32)], inputs=img(6, 16), dyn=True,
             alt=(3, None)),
        dict(name="causal_attention", kind="keras", make=causal_attention,
             specs=[("tokens", (None, 5, 8), f32)], inputs=img(5, 8), dyn=True,
             alt=(3, None)),
        dict(name="keras_gelu", kind="keras", make=keras_gelu,
             specs=[("x", (None, 4), f32)], inputs=img(4), dyn=True, alt=(3, None)),
        dict(name="text", kind="keras", make=text_net, specs=[("ids", (None, 10), i32)],
             inputs=lambda r, n, l: [_ids(r, n, 10)], dyn=True, alt=(3, None)),
        dict(name="keras_layers", kind="keras", make=keras_layers,
             specs=[("image", (None, 12, 12, 4), f32)],
             inputs=lambda r, n, l: [r.uniform(0, 4, (n, 12, 12, 4)).astype(np.float32)],
             dyn=True, alt=(3, None)),
        dict(name="keras_grouped_conv", kind="keras", make=keras_grouped_conv,
             specs=[("image", (None, 6, 6, 4), f32)], inputs=img(6, 6, 4), dyn=True,
             alt=(3, None)),
        dict(name="masked_rnn", kind="keras", make=masked_rnn,
             specs=[("ids", (None, 8), i32)],
             inputs=lambda r, n, l: [_ids(r, n, 8) % 30], dyn=True, alt=(3, None)),
        dict(name="keras3_sequential", kind="keras3", make=keras3_sequential,
             specs=[("x", (None, 6), f32)], inputs=img(6), dyn=True, alt=(3, None)),
        dict(name="keras3_cnn", kind="function", make=keras3_cnn,
             specs=[("image", (None, 10, 10, 3), f32)], inputs=img(10, 10, 3), dyn=True,
             alt=(3, None)),
        dict(name="tf_math", kind="function", make=tf_math,
             specs=[("x", (2, 6, 8), f32)], inputs=lambda r, n, l: [_f32(r, 2, 6, 8)],
             dyn=False),
        dict(name="tf_shapes", kind="function", make=tf_shapes,
             specs=[("x", (2, 6, 8, 3), f32), ("ids", (2, 4), i32)],
             inputs=lambda r, n, l: [_f32(r, 2, 6, 8, 3),
                                     r.integers(0, 6, (2, 4)).astype(np.int32)],
             dyn=False),
        dict(name="tf_detect", kind="function", make=tf_detect,
             specs=[("boxes", (10, 4), f32), ("scores", (10,), f32),
                    ("fmap", (2, 6, 6, 4), f32)],
             inputs=lambda r, n, l: [_boxes(r, 10), r.uniform(0, 1, 10).astype(np.float32),
                                     _f32(r, 2, 6, 6, 4)], dyn=False),
        dict(name="tf_signal", kind="function", make=tf_signal,
             specs=[("wave", (2, 64), f32)], inputs=lambda r, n, l: [_f32(r, 2, 64)],
             dyn=False),
        dict(name="tf_scatter", kind="function", make=tf_scatter,
             specs=[("v", (2, 10), f32), ("x", (2, 6, 7), f32)],
             inputs=lambda r, n, l: [_f32(r, 2, 10), _f32(r, 2, 6, 7)], dyn=False),
        dict(name="tf_image_ops", kind="function", make=tf_image_ops,
             specs=[("img", (2, 6, 7, 3), f32), ("v", (2, 10), f32)],
             inputs=lambda r, n, l: [_f32(r, 2, 6, 7, 3), _f32(r, 2, 10)], dyn=False),
        dict(name="tf_crop_resize", kind="function", make=tf_crop_resize,
             specs=[("img", (2, 6, 7, 3), f32), ("boxes", (3, 4), f32),
                    ("box_ind", (3,), i32)],
             inputs=lambda r, n, l: [_f32(r, 2, 6, 7, 3),
                                     np.array([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 0.5],
                                               [0.3, -0.1, 1.2, 0.6]], np.float32),
                                     np.array([1, 0, 1], np.int32)], dyn=False),
        dict(name="tf_crop_nearest", kind="function", make=tf_crop_nearest,
             specs=[("img", (2, 6, 7, 3), f32), ("boxes", (2, 4), f32),
                    ("box_ind", (2,), i32)],
             inputs=lambda r, n, l: [_f32(r, 2, 6, 7, 3),
                                     np.array([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 0.5]],
                                              np.float32), np.array([1, 0], np.int32)],
             dyn=False),
        dict(name="tf_searchsorted", kind="function", make=tf_searchsorted,
             specs=[("x", (2, 6), f32)], inputs=lambda r, n, l: [_f32(r, 2, 6)], dyn=False),
        dict(name="tf_log1p", kind="function", make=tf_log1p,
             specs=[("x", (2, 3), f32)], inputs=lambda r, n, l: [_f32(r, 2, 3)], dyn=False),
        dict(name="tf_resize", kind="function", make=tf_resize,
             specs=[("x", (2, 5, 6, 3), f32)], inputs=lambda r, n, l: [_f32(r, 2, 5, 6, 3)],
             dyn=False),
        dict(name="dynamic_shapes", kind="function", make=dynamic_shapes,
             specs=[("x", (None, None, 6), f32)],
             inputs=lambda r, n, l: [_f32(r, n, l or 5, 6)], dyn=True, alt=(3, 8)),
        dict(name="control_flow", kind="function", make=control_flow,
             specs=[("x", (2, 5), f32), ("n", (), i32)], inputs=_cf_inputs, dyn=False,
             alt=(1, None)),
    ]


def _perturb(model, seed=1):
    """Give a Keras model's BatchNorm statistics, scales and all biases seeded
    random values (the initialisers' zeros and ones would hide folding and
    broadcasting mistakes)."""
    rng = np.random.default_rng(seed)
    for w in model.weights:
        base = w.name.split("/")[-1].split(":")[0]
        shape = tuple(w.shape)
        if base == "moving_variance" or base == "gamma":
            w.assign(rng.uniform(0.5, 1.5, shape).astype(np.float32))
        elif base in ("moving_mean", "beta", "bias"):
            w.assign((rng.standard_normal(shape) * 0.2).astype(np.float32))


def _build(entry):
    """The entry's model (a Keras Model or a tf.function) with seeded weights."""
    keras.utils.set_random_seed(0)
    m = entry["make"]()
    if entry["kind"] in ("keras", "keras3"):
        _perturb(m)
    return m


def _tf_outputs(entry, model, arrays) -> dict:
    """TensorFlow's outputs on `arrays`, by output name."""
    if entry["kind"] in ("keras", "keras3"):
        res = model([tf.constant(a) for a in arrays], training=False)
        res = res if isinstance(res, (list, tuple)) else [res]
        return {n: r.numpy() for n, r in zip(model.output_names, res)}
    return {k: v.numpy() for k, v in model(*[tf.constant(a) for a in arrays]).items()}


def _specs(entry, dynamic, arrays):
    """The input signature: the entry's specs, with the None dimensions replaced by
    the arrays' sizes unless `dynamic`."""
    out = []
    for (name, shape, dtype), a in zip(entry["specs"], arrays):
        shape = shape if dynamic else a.shape
        out.append(tf.TensorSpec(shape, dtype, name=name))
    return out


def _ort_check(path, arrays, in_names, out_names, want) -> float | None:
    """Max abs difference between onnxruntime and TF, or None without onnxruntime."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(out_names, dict(zip(in_names, arrays)))
    err = 0.0
    for g, w in zip(got, want):
        if g.shape != w.shape:
            return float("inf")
        if w.size:
            err = max(err, float(np.max(np.abs(g.astype(np.float64) - w))))
    return err


def _save(out_dir, stem, tag, arrays) -> list:
    """np.save each array as <stem>.<tag><k>.npy (tag like 'in' or 'out.alt');
    the file names."""
    files = []
    kind, _, alt = tag.partition(".")
    for k, a in enumerate(arrays):
        f = f"{stem}.{kind}{k}{'.alt' if alt else ''}.npy"
        np.save(os.path.join(out_dir, f), np.asarray(a), allow_pickle=False)
        files.append(f)
    return files


def export_entry(entry, out_dir, opset, dynamic):
    """Convert one model at `opset` (dynamic batch/sequence when `dynamic`), save
    its inputs and TF's outputs; return (file, index entry) or (None, failure)."""
    stem = f"{entry['name']}__tf2onnx_op{opset}{'_dyn' if dynamic else ''}"
    path = os.path.join(out_dir, stem + ".onnx")
    conv = "from_keras" if entry["kind"] in ("keras", "keras3") else "from_function"
    fail = dict(name=entry["name"], file=stem + ".onnx", converter=conv, opset=opset,
                dynamic=dynamic)
    model = _build(entry)
    arrays = entry["inputs"](np.random.default_rng(123), 2, None)
    sig = _specs(entry, dynamic, arrays)
    try:
        if conv == "from_keras":
            proto, _ = tf2onnx.convert.from_keras(model, input_signature=sig, opset=opset)
        else:
            proto, _ = tf2onnx.convert.from_function(model, input_signature=sig,
                                                     opset=opset)
        onnx.checker.check_model(proto)
    except Exception as e:  # recorded, not fatal: a failed conversion is data too
        msg = str(e).splitlines()[0][:300] if str(e) else ""
        return None, dict(fail, error=f"{type(e).__name__}: {msg}")
    in_names = [i.name for i in proto.graph.input]
    out_names = [o.name for o in proto.graph.output]
    if in_names != [s.name for s in sig]:
        return None, dict(fail, error=f"input names {in_names} != {[s.name for s in sig]}")
    onnx.save(proto, path)
    rec = dict(name=entry["name"], converter=conv, opset=opset, dynamic=dynamic,
               inputs=in_names, outputs=out_names, size=os.path.getsize(path))
    sets = [("", arrays)]
    if entry.get("alt") and (dynamic or not entry["dyn"]):  # resized / other branch
        b, length = entry["alt"]
        sets.append((".alt", entry["inputs"](np.random.default_rng(7), b, length)))
    errs = []
    for tag, arr in sets:
        got = _tf_outputs(entry, model, arr)
        want = [got[n] for n in out_names]
        key = "alt_" if tag else ""
        rec[key + "input_files"] = _save(out_dir, stem, "in" + tag, arr)
        rec[key + "output_files"] = _save(out_dir, stem, "out" + tag, want)
        errs.append(_ort_check(path, arr, in_names, out_names, want))
    if errs[0] is not None:
        rec["ort_max_abs_err"] = max(errs)
        if max(errs) > ORT_AGREES:
            for f in [stem + ".onnx"] + [f for k, v in rec.items() if k.endswith("_files")
                                         for f in v]:
                os.remove(os.path.join(out_dir, f))
            return None, dict(fail, error=f"converted, but onnxruntime's outputs differ "
                                          f"from TF's by {max(errs):.3g}")
    return stem + ".onnx", rec


def main(argv=None):
    """Convert the catalogue (or `--only` names) into the output folder and write
    index.json there."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--opsets", nargs="*", type=int, default=list(OPSETS))
    ap.add_argument("--probe-opset", type=int, default=PROBE_OPSET,
                    help="also try the first model at this opset (0: don't), so "
                         "index.json records whether tf2onnx supports it")
    a = ap.parse_args(argv)
    os.makedirs(a.out_dir, exist_ok=True)
    index_path = os.path.join(a.out_dir, "index.json")
    models, failures = {}, []
    if a.only and os.path.exists(index_path):  # keep the other models' records
        with open(index_path, encoding="utf-8") as f:
            old = json.load(f)
        models = {k: v for k, v in old["models"].items() if v["name"] not in a.only}
        failures = [r for r in old["failures"] if r["name"] not in a.only]
    catalogue_ = catalogue()
    for entry in catalogue_:
        if a.only and entry["name"] not in a.only:
            continue
        opsets = list(a.opsets)
        if a.probe_opset and entry is catalogue_[0] and a.probe_opset not in opsets:
            opsets.append(a.probe_opset)
        for opset in opsets:
            dynamic = entry["dyn"] and opset in DYN_OPSETS
            file, rec = export_entry(entry, a.out_dir, opset, dynamic)
            if file is None:
                failures.append(rec)
                print(f"{rec['file']:<45} FAILED {rec['error']}", flush=True)
                continue
            models[file] = rec
            err = rec.get("ort_max_abs_err")
            print(f"{file:<45} {rec['size']:>7,} bytes"
                  + ("" if err is None else f"  ort-vs-tf {err:.2e}"), flush=True)
    index = dict(generator=dict(tensorflow=tf.__version__, tf_keras=keras.__version__,
                                tf2onnx=tf2onnx.__version__, onnx=onnx.__version__,
                                numpy=np.__version__),
                 models=dict(sorted(models.items())),
                 failures=sorted(failures, key=lambda r: r["file"]))
    with open(index_path, "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1, sort_keys=False)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
