"""Record TF1 frozen GraphDefs and TF's outputs for og.import_graph_def's tests.

Run by hand with the scratch TensorFlow venv:
    /tmp/s51/tfvenv/bin/python tools/record_tf_graph_def.py
Writes tests/train/data/tf_graph_defs/<name>.pb (the GraphDef bytes) and <name>.npz
(the inputs fed as in_<i>, TF's outputs as out_<i>, plus the feed and fetch names as
1-D unicode arrays `feeds` and `fetches`; numeric/unicode only, so no pickle is needed).
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "train",
                   "data", "tf_graph_defs")
RNG = np.random.default_rng(52)


def _w(*shape, scale=0.3):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _save(name, graph, feeds, fetches, variables=False):
    """Freeze `graph`, run the fetches on the feeds and store both."""
    with tf.Session(graph=graph) as sess:
        if variables:
            sess.run(tf.global_variables_initializer())
        outs = sess.run(fetches, {graph.get_tensor_by_name(k): v for k, v in feeds.items()})
        gd = graph.as_graph_def()
        if variables:
            nodes = sorted({f.split(":")[0] for f in fetches})
            gd = tf.graph_util.convert_variables_to_constants(sess, gd, nodes)
    data = gd.SerializeToString()
    with open(os.path.join(OUT, name + ".pb"), "wb") as f:
        f.write(data)
    arrays = {"feeds": np.array(list(feeds)), "fetches": np.array(list(fetches))}
    for i, v in enumerate(feeds.values()):
        arrays[f"in_{i}"] = np.asarray(v)
    for i, v in enumerate(outs):
        arrays[f"out_{i}"] = np.asarray(v)
    np.savez(os.path.join(OUT, name + ".npz"), **arrays)
    print(name, len(data), "bytes,", len(gd.node), "nodes,",
          sorted({n.op for n in gd.node}))


def cnn(fmt):
    """conv/bias/batch-norm/relu/pool/dense/softmax in NHWC (and NCHW where TF CPU can)."""
    g = tf.Graph()
    with g.as_default():
        shape = [2, 8, 8, 3] if fmt == "NHWC" else [2, 3, 8, 8]
        x = tf.placeholder(tf.float32, shape, name="input")
        one = [1, 1, 1, 1]
        st2 = [1, 2, 2, 1] if fmt == "NHWC" else [1, 1, 2, 2]
        w1 = tf.Variable(_w(3, 3, 3, 4), name="w1")
        h = tf.nn.conv2d(x, w1, one, "SAME", data_format=fmt, name="conv1")
        h = tf.nn.bias_add(h, tf.Variable(_w(4), name="b1"), data_format=fmt)
        h, _, _ = tf.nn.fused_batch_norm(
            h, tf.constant(_w(4) + 1), tf.constant(_w(4)), mean=tf.constant(_w(4)),
            variance=tf.constant(np.abs(_w(4)) + 0.5), epsilon=1e-3, data_format=fmt,
            is_training=False, name="bn1")
        h = tf.nn.relu(h)
        if fmt == "NHWC":
            h = tf.nn.max_pool(h, [1, 2, 2, 1], st2, "VALID", data_format=fmt)
        else:
            h = tf.nn.conv2d(h, tf.constant(_w(2, 2, 4, 4)), st2, "VALID", data_format=fmt)
        pads = [[0, 0], [1, 0], [0, 1], [0, 0]] if fmt == "NHWC" else \
            [[0, 0], [0, 0], [1, 0], [0, 1]]
        h = tf.nn.conv2d(h, tf.constant(_w(2, 2, 4, 5)), one, pads, data_format=fmt,
                         dilations=[1, 1, 1, 1], name="conv_explicit")
        h = tf.nn.relu6(h * 3.0)
        if fmt == "NHWC":
            h = tf.nn.conv2d(h, tf.constant(_w(3, 3, 5, 5)), one, "SAME", dilations=[1, 2, 2, 1],
                             name="conv_dilated")
            h = tf.nn.depthwise_conv2d_native(h, tf.constant(_w(3, 3, 5, 2)), one, "SAME",
                                              name="dw")
            h = tf.nn.conv2d_transpose(h, tf.constant(_w(2, 2, 6, 10)), [2, 8, 8, 6],
                                       [1, 2, 2, 1], "SAME", name="deconv")
            h = tf.nn.avg_pool(h, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
            h = tf.pad(h, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
            h = tf.pad(h, [[0, 0], [0, 1], [1, 0], [0, 0]], constant_values=0.5)
            h, _, _ = tf.raw_ops.FusedBatchNorm(
                x=h, scale=_w(6) + 1, offset=_w(6), mean=_w(6), variance=np.abs(_w(6)) + 1,
                epsilon=1e-3, is_training=False)[:3]
        else:
            h, _, _ = tf.nn.fused_batch_norm(
                h, tf.constant(_w(5) + 1), tf.constant(_w(5)), mean=tf.constant(_w(5)),
                variance=tf.constant(np.abs(_w(5)) + 0.5), data_format=fmt,
                is_training=False, name="bn2")
        flat = tf.reshape(h, [2, -1])
        dense = tf.Variable(_w(int(flat.shape[1]), 7), name="dense_w")
        logits = tf.nn.bias_add(tf.matmul(flat, dense), tf.constant(_w(7)), name="logits")
        tf.nn.softmax(logits, name="probs")
        tf.nn.log_softmax(logits, name="log_probs")
    xv = RNG.standard_normal(shape).astype(np.float32)
    _save("cnn_" + fmt.lower(), g, {"input:0": xv}, ["logits:0", "probs:0", "log_probs:0"],
          variables=True)


def mlp():
    """Elementwise math, MatMul variants, BatchMatMul, Einsum, AddN, Div kinds."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        y = tf.placeholder(tf.float32, [None, 4], name="y")
        h = tf.matmul(x, tf.constant(_w(5, 4)), transpose_b=True)
        h = tf.nn.tanh(h) + tf.nn.sigmoid(h) - tf.nn.elu(h)
        h = tf.matmul(tf.constant(_w(5, 3)), h, transpose_a=True, transpose_b=True)
        h = tf.transpose(h, name="h")
        p = tf.abs(x) + 0.5
        outs = [
            tf.raw_ops.Add(x=x, y=y), tf.subtract(x, y), tf.multiply(x, y),
            tf.realdiv(x, p), tf.raw_ops.Div(x=x, y=p), tf.floordiv(x, p),
            tf.maximum(x, y), tf.minimum(x, y), tf.pow(p, y), tf.squared_difference(x, y),
            tf.negative(x), tf.sqrt(p), tf.rsqrt(p), tf.square(x), tf.exp(x), tf.log(p),
            tf.nn.selu(x), tf.nn.leaky_relu(x, 0.1), tf.nn.softplus(x), tf.math.erf(x),
            tf.floor(x * 3), tf.ceil(x * 3), tf.round(x * 3), tf.sign(x),
            tf.add_n([x, y, p]), tf.nn.relu(x), tf.stop_gradient(x),
        ]
        outs = [tf.identity(o, name=f"e{i}") for i, o in enumerate(outs)]
        a = tf.reshape(tf.concat([x, y], 0), [2, -1, 2])
        bm = tf.raw_ops.BatchMatMulV2(x=a, y=tf.constant(_w(1, 2, 3)), adj_y=False)
        bm1 = tf.raw_ops.BatchMatMul(x=a, y=a, adj_x=True)
        ein = tf.einsum("bij,jk->bik", a, tf.constant(_w(2, 3)))
        ints = tf.constant(np.array([7, -7, 9, -3], np.int32))
        idiv = tf.floordiv(ints, tf.constant(np.array([2, 2, -4, 5], np.int32)))
        tf.identity(bm, name="m_bmm2")
        tf.identity(bm1, name="m_bmm1")
        tf.identity(ein, name="m_einsum")
        tf.identity(idiv, name="m_int_floordiv")
    fetches = ["h:0"] + [f"e{i}:0" for i in range(len(outs))] + \
        ["m_bmm2:0", "m_bmm1:0", "m_einsum:0", "m_int_floordiv:0"]
    feeds = {"x:0": RNG.standard_normal((3, 4)).astype(np.float32),
             "y:0": RNG.standard_normal((3, 4)).astype(np.float32)}
    _save("mlp", g, feeds, fetches)


def shapes():
    """Shape, indexing, reductions, comparisons, resizes, splits, top-k, control inputs."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3, 4, 5], name="x")  # None: keeps Shape ops
        z = tf.placeholder(tf.float32, None, name="z")
        k = tf.placeholder_with_default(np.int32(2), [], name="k")
        o = {}
        o["shape"] = tf.shape(x)
        o["shape64"] = tf.shape(x, out_type=tf.int64)
        o["size"] = tf.size(x)
        o["rank"] = tf.rank(z)
        o["size_z"] = tf.size(z, out_type=tf.int64)
        o["pad"] = tf.pad(z, [[1, 0], [0, 2]])
        o["ss1"] = x[1, :, ::2, -1]
        o["ss2"] = x[..., tf.newaxis, 1:3]
        o["ss3"] = x[:, ::-1, 1:, :3]
        o["ss4"] = tf.shape(x)[0]
        o["ss5"] = x[0, ..., 2]
        o["slice"] = tf.slice(x, [0, 1, 1, 0], [1, -1, 2, 3])
        o["transpose"] = tf.transpose(x, [3, 1, 0, 2])
        o["reshape"] = tf.reshape(x, [tf.shape(x)[0], -1])
        o["squeeze"] = tf.squeeze(tf.expand_dims(x, 2), [2])
        o["squeeze_all"] = tf.squeeze(x[:1, :1])
        o["concat"] = tf.concat([x, x * 2], axis=-1)
        o["pack"] = tf.stack([x[0], x[1]], axis=1)
        u = tf.unstack(x, axis=2)
        o["unpack"] = u[3]
        o["mean"] = tf.reduce_mean(x, [1, 2], keepdims=True)
        o["sum"] = tf.reduce_sum(x, 3)
        o["max"] = tf.reduce_max(x, [0, -1])
        o["min"] = tf.reduce_min(x)
        o["prod"] = tf.reduce_prod(x, 1)
        o["argmax"] = tf.argmax(x, 3)
        o["argmin"] = tf.argmin(x, 1, output_type=tf.int32)
        o["cast"] = tf.cast(x * 4, tf.int32)
        o["fill"] = tf.fill([2, 3], 1.5)
        o["zeros_like"] = tf.zeros_like(x)
        o["ones_like"] = tf.raw_ops.OnesLike(x=o["cast"])
        o["tile"] = tf.tile(x[0, 0], [2, k])
        o["gatherv2"] = tf.gather(x, [2, 0, 2], axis=2)
        o["gather"] = tf.raw_ops.Gather(params=x[0], indices=[[1, 0], [0, 1]])
        c = x > 0
        o["select"] = tf.where(c, x, -x)
        o["selectv2"] = tf.where_v2(x[:, :1] > 0, x, 0.0)
        o["equal"] = tf.equal(x, x[:, :, :1])
        o["not_equal"] = tf.not_equal(o["cast"], 0)
        o["less"] = tf.less(x, 0.1)
        o["greater"] = tf.greater(x, 0.1)
        o["less_equal"] = tf.less_equal(o["cast"], 1)
        o["greater_equal"] = tf.greater_equal(o["cast"], -1)
        o["and"] = tf.logical_and(c, o["less"])
        o["or"] = tf.logical_or(c, o["less"])
        o["not"] = tf.logical_not(c)
        img = tf.transpose(x, [0, 2, 3, 1])
        o["bilinear"] = tf.image.resize_bilinear(img, [7, 9])
        o["bilinear_ac"] = tf.image.resize_bilinear(img, [7, 9], align_corners=True)
        o["bilinear_hp"] = tf.image.resize_bilinear(img, [3, 2], half_pixel_centers=True)
        o["nearest"] = tf.image.resize_nearest_neighbor(img, [8, 3])
        o["nearest_hp"] = tf.image.resize_nearest_neighbor(img, [8, 11],
                                                           half_pixel_centers=True)
        s = tf.split(x, 5, axis=3)
        o["split"] = s[4]
        sv = tf.split(x, [1, -1, 2], axis=2)
        o["splitv0"], o["splitv1"] = sv[0], sv[1]
        tv, ti = tf.nn.top_k(x, 3)
        o["topk_v"], o["topk_i"] = tv, ti
        o["range"] = tf.range(1, 10, k)
        o["range_f"] = tf.range(0.5, 3.0, 0.75)
        a, b = tf.identity_n([x[0, 0], k])
        o["identity_n"] = a + tf.cast(b, tf.float32)
        o["mirror_sym"] = tf.pad(x[0], [[0, 0], [2, 1], [1, 2]], mode="SYMMETRIC")
        with tf.control_dependencies([tf.no_op(name="before")]):
            o["ctrl"] = tf.identity(x[0, 0, 0], name="after")
        names = []
        for key, t in o.items():
            names.append(tf.identity(t, name="o_" + key).name)
    feeds = {"x:0": RNG.standard_normal((2, 3, 4, 5)).astype(np.float32),
             "z:0": RNG.standard_normal((2, 3)).astype(np.float32)}
    _save("shapes", g, feeds, names)


def unsupported():
    """A v1 tf.cond (Switch/Merge) plus ops og's importer does not map."""
    tf.disable_control_flow_v2()
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3, 3], name="x")
        p = tf.placeholder(tf.bool, [], name="p")
        y = tf.cond(p, lambda: x * 2.0, lambda: x - 1.0)
        d = tf.linalg.det(x)
        tf.identity(y + d, name="out")
    feeds = {"x:0": np.eye(3, dtype=np.float32), "p:0": np.array(True)}
    _save("unsupported", g, feeds, ["out:0"])


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    cnn("NHWC")
    try:
        cnn("NCHW")
    except Exception as e:           # TF CPU lacks some NCHW kernels
        print("NCHW cnn skipped:", type(e).__name__, str(e)[:200])
    mlp()
    shapes()
    unsupported()
