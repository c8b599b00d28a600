"""TF1 tf.distributions code that tools/record_tf_distributions.py runs under TensorFlow
(tf.compat.v1) and tests/train/test_distributions.py under onegraph.

Each case is a function of the module `tf` returning {name: tensor}; names starting with
"static_" hold Python values (static shapes as lists, strings) instead. `run(tf, case)`
builds it in a fresh graph, runs it and returns {"static": {...}, "values": {...}} or
{"error": class name, "message": first line, "stage": "build"/"run"}.
"""

from __future__ import annotations

import numpy as np

STATS = ("log_prob", "prob", "cdf", "log_cdf", "survival_function",
         "log_survival_function")
MOMENTS = ("entropy", "mean", "mode", "stddev", "variance")


def _c(tf, value, dt):
    return tf.constant(np.asarray(value, dtype=dt))


def _all(tf, d, x, methods=STATS, moments=MOMENTS, params=()):
    """Every method's value at x, the static/dynamic shapes and d(log_prob)/d(param)."""
    out = {}
    for m in methods:
        out[m] = getattr(d, m)(x)
    for m in moments:
        out[m] = getattr(d, m)()
    out["batch_shape_tensor"] = d.batch_shape_tensor()
    out["event_shape_tensor"] = d.event_shape_tensor()
    out["static_batch_shape"] = d.batch_shape.as_list()
    out["static_event_shape"] = d.event_shape.as_list()
    out["static_logprob_shape"] = out["log_prob"].shape.as_list()
    if params:
        grads = tf.gradients(tf.reduce_sum(out["log_prob"]), list(params))
        for i, g in enumerate(grads):
            out[f"grad_{i}"] = g
    return out


def _scalar_case(kind, dt):
    def case(tf):
        D = tf.distributions
        x = _c(tf, [[0.3], [1.7]], dt)
        if kind == "normal":
            loc, scale = _c(tf, [0.1, -0.5, 2.0], dt), _c(tf, [[1.5], [0.4]], dt)
            d = D.Normal(loc, scale)
            out = _all(tf, d, x, params=(loc, scale))
            out["quantile"] = d.quantile(_c(tf, [0.1, 0.5, 0.975], dt))
            out["log_cdf_tail"] = d.log_cdf(_c(tf, [[[-30.]], [[-12.]], [[0.]], [[9.]]], dt))
            return out
        if kind == "laplace":
            loc, scale = _c(tf, [0.1, -0.5, 2.0], dt), _c(tf, [[1.5], [0.4]], dt)
            return _all(tf, D.Laplace(loc, scale), x, params=(loc, scale))
        if kind == "uniform":
            low, high = _c(tf, [0.0, -1.0, 0.5], dt), _c(tf, [[2.0], [1.0]], dt)
            return _all(tf, D.Uniform(low, high), _c(tf, [[0.3], [1.7]], dt),
                        methods=("prob", "cdf", "log_prob"),
                        moments=("entropy", "mean", "stddev", "variance"))
        if kind == "gamma":
            a, b = _c(tf, [0.7, 1.5, 3.0], dt), _c(tf, [[2.0], [0.5]], dt)
            return _all(tf, D.Gamma(a, b), x, methods=("log_prob", "prob", "cdf", "log_cdf",
                                                       "survival_function"), params=(a, b))
        if kind == "exponential":
            r = _c(tf, [0.5, 2.0, 3.5], dt)
            return _all(tf, D.Exponential(r), x, methods=(
                "log_prob", "prob", "cdf", "log_survival_function"), params=(r,))
        if kind == "beta":
            # TF's Betainc does not broadcast: parameters and x share one shape
            a = _c(tf, [[0.7, 1.5, 3.0], [0.7, 1.5, 3.0]], dt)
            b = _c(tf, [[2.0, 2.0, 2.0], [4.5, 4.5, 4.5]], dt)
            xb = _c(tf, [[0.3, 0.3, 0.3], [0.85, 0.85, 0.85]], dt)
            return _all(tf, D.Beta(a, b), xb, methods=("log_prob", "prob", "cdf", "log_cdf"),
                        params=(a, b))
        if kind == "student_t":
            df, loc, scale = (_c(tf, [[0.8, 1.5, 5.0], [2.5, 1.5, 5.0]], dt),
                              _c(tf, [[0.2], [-1.0]], dt), _c(tf, 1.3, dt))
            x = _c(tf, [[0.3, 0.3, 0.3], [1.7, 1.7, 1.7]], dt)
            # TF's variance fills a float32 2. (fails for float64)
            moments = MOMENTS if dt == np.float32 else ("entropy", "mean", "mode")
            return _all(tf, D.StudentT(df, loc, scale), x, moments=moments,
                        methods=("log_prob", "prob", "cdf"), params=(df, loc, scale))
        if kind == "bernoulli":
            logits = _c(tf, [[-1.2, 0.3, 2.0], [0.0, 4.0, -3.0]], dt)
            d = D.Bernoulli(logits=logits)
            return _all(tf, d, tf.constant([1, 0, 1]), methods=("log_prob", "prob"),
                        params=(logits,))
        raise KeyError(kind)
    case.__name__ = f"{kind}_{np.dtype(dt).name}"
    return case


def _vector_case(kind, dt):
    def case(tf):
        D = tf.distributions
        if kind == "categorical":
            logits = _c(tf, [[-1.0, 0.5, 2.0, 0.1], [0.3, 0.3, -2.0, 1.0]], dt)
            d = D.Categorical(logits=logits)
            return _all(tf, d, tf.constant([[3, 0], [1, 2]]),
                        methods=("log_prob", "prob", "cdf"),
                        moments=("entropy", "mode"), params=(logits,))
        if kind == "categorical_probs":
            d = D.Categorical(probs=_c(tf, [0.2, 0.5, 0.3], dt))
            return _all(tf, d, tf.constant([0, 1, 2]), methods=("log_prob", "cdf"),
                        moments=("entropy", "mode"))
        if kind == "dirichlet":
            conc = _c(tf, [[1.5, 2.0, 3.0], [0.7, 4.0, 1.2]], dt)
            x = _c(tf, [0.2, 0.3, 0.5], dt)
            return _all(tf, D.Dirichlet(conc), x, methods=("log_prob", "prob"),
                        moments=("entropy", "mean", "variance", "stddev"),
                        params=(conc,))
        if kind == "multinomial":
            logits = _c(tf, [[-1.0, 0.5, 2.0], [0.3, 0.3, -2.0]], dt)
            n = _c(tf, [5.0, 3.0], dt)
            counts = _c(tf, [[1.0, 2.0, 2.0], [0.0, 3.0, 0.0]], dt)
            return _all(tf, D.Multinomial(n, logits=logits), counts,
                        methods=("log_prob", "prob"), moments=("mean", "variance"),
                        params=(logits,))
        if kind == "dirichlet_multinomial":
            conc = _c(tf, [[1.5, 2.0, 3.0], [0.7, 4.0, 1.2]], dt)
            n = _c(tf, 5.0, dt)  # TF's mean does not broadcast a batch of counts
            counts = _c(tf, [[1.0, 2.0, 2.0], [0.0, 5.0, 0.0]], dt)
            return _all(tf, D.DirichletMultinomial(n, conc), counts,
                        methods=("log_prob", "prob"), moments=("mean", "variance"),
                        params=(conc,))
        raise KeyError(kind)
    case.__name__ = f"{kind}_{np.dtype(dt).name}"
    return case


def kl_pairs(tf):
    D = tf.distributions
    f = np.float64
    return {
        "normal": D.kl_divergence(D.Normal(_c(tf, [0.1, 1.0], f), _c(tf, [1.0, 2.0], f)),
                                  D.Normal(_c(tf, 0.0, f), _c(tf, 1.5, f))),
        "bernoulli": D.kl_divergence(D.Bernoulli(logits=_c(tf, [0.3, -2.0], f)),
                                     D.Bernoulli(probs=_c(tf, [0.6, 0.1], f))),
        "categorical": D.kl_divergence(
            D.Categorical(logits=_c(tf, [[0.1, 1.0, -1.0]], f)),
            D.Categorical(logits=_c(tf, [[1.0, 0.0, 0.5]], f))),
        "gamma": D.kl_divergence(D.Gamma(_c(tf, [1.5, 3.0], f), _c(tf, 2.0, f)),
                                 D.Gamma(_c(tf, 2.0, f), _c(tf, [1.0, 0.5], f))),
        "beta": D.kl_divergence(D.Beta(_c(tf, [1.5, 3.0], f), _c(tf, 2.0, f)),
                                D.Beta(_c(tf, 2.0, f), _c(tf, [1.0, 0.5], f))),
        "dirichlet": D.kl_divergence(D.Dirichlet(_c(tf, [1.5, 2.0, 3.0], f)),
                                     D.Dirichlet(_c(tf, [1.0, 1.0, 4.0], f))),
        "exponential": D.kl_divergence(D.Exponential(_c(tf, [1.5, 3.0], f)),
                                       D.Exponential(_c(tf, 2.0, f))),
    }


def kl_unregistered(tf):
    D = tf.distributions
    return {"kl": D.kl_divergence(D.Normal(0., 1.), D.Laplace(0., 1.))}


def dynamic_shapes(tf):
    loc = tf.placeholder(tf.float32, [None, 3], name="loc")
    d = tf.distributions.Normal(loc, [1.0, 2.0, 3.0])
    return {"fed_loc": loc, "batch_shape_tensor": d.batch_shape_tensor(),
            "static_batch_shape": [None if v is None else int(v)
                                   for v in d.batch_shape.as_list()],
            "log_prob": d.log_prob(0.5), "sample": d.sample([2, 4], seed=3),
            "sample_shape_of": tf.shape(d.sample([2, 4], seed=3), out_type=tf.int32)}


def sample_shapes(tf):
    D = tf.distributions
    out = {}
    dists = {"normal": D.Normal([0., 1.], 1.), "uniform": D.Uniform(0., [1., 2., 3.]),
             "gamma": D.Gamma([[1.0], [2.0]], [1., 2., 3.]), "beta": D.Beta(2., [1., 3.]),
             "categorical": D.Categorical(logits=[[0., 1.], [1., 0.]]),
             "dirichlet": D.Dirichlet([[1., 2., 3.]]),
             "bernoulli": D.Bernoulli(probs=[0.2, 0.9]),
             "student_t": D.StudentT(3., [0., 1.], 1.), "laplace": D.Laplace(0., 1.),
             "exponential": D.Exponential([1., 2.]),
             "multinomial": D.Multinomial(4., probs=[0.2, 0.8]),
             "dirichlet_multinomial": D.DirichletMultinomial(4., [[1., 2.], [3., 1.]])}
    for name, d in dists.items():
        s = d.sample([5, 2], seed=7)
        out["static_" + name] = s.shape.as_list()
        out["static_dtype_" + name] = s.dtype.name.lower()
        out["shape_" + name] = tf.shape(s, out_type=tf.int32)
    return out


def attributes(tf):
    D = tf.distributions
    n = D.Normal(0., 1., name="MyNormal")
    g = D.Gamma(1., 2.)
    return {"static_name": n.name, "static_rep_n": repr(n.reparameterization_type),
            "static_rep_g": repr(g.reparameterization_type),
            "static_rep_eq": n.reparameterization_type == D.FULLY_REPARAMETERIZED,
            "static_flags": [n.allow_nan_stats, n.validate_args],
            "static_params": sorted(n.parameters), "static_dtype": n.dtype.name.lower(),
            "static_bern_dtype": D.Bernoulli(probs=0.5).dtype.name.lower(),
            "static_copy_name": n.copy(name="Other").name,
            "copy_scale": n.copy(scale=3.).stddev()}


def err_uniform_validate(tf):
    return {"v": tf.distributions.Uniform(2., [1., 3.], validate_args=True).mean()}


def err_normal_validate(tf):
    return {"v": tf.distributions.Normal(0., -1., validate_args=True).mean()}


def err_beta_validate(tf):
    return {"v": tf.distributions.Beta(-1., 1., validate_args=True).mean()}


def err_gamma_mode(tf):
    return {"v": tf.distributions.Gamma([0.5, 2.], 1., allow_nan_stats=False).mode()}


def err_beta_mode(tf):
    return {"v": tf.distributions.Beta(0.5, 2., allow_nan_stats=False).mode()}


def err_student_mean(tf):
    return {"v": tf.distributions.StudentT(0.5, 0., 1., allow_nan_stats=False).mean()}


def err_student_variance(tf):
    return {"v": tf.distributions.StudentT(0.5, 0., 1., allow_nan_stats=False).variance()}


def err_dirichlet_mode(tf):
    return {"v": tf.distributions.Dirichlet([0.5, 2.], allow_nan_stats=False).mode()}


def err_bernoulli_both(tf):
    return {"v": tf.distributions.Bernoulli(logits=0., probs=0.5).mean()}


def err_categorical_neither(tf):
    return {"v": tf.distributions.Categorical().mode()}


def nan_stats_allowed(tf):
    D = tf.distributions
    return {"gamma_mode": D.Gamma([0.5, 2.], 1.).mode(),
            "student_mean": D.StudentT([0.5, 3.], 0., 1.).mean(),
            "student_var": D.StudentT([0.5, 1.5, 3.], 0., 1.).variance(),
            "beta_mode": D.Beta([0.5, 2.], 3.).mode(),
            "dirichlet_mode": D.Dirichlet([0.5, 2.]).mode(),
            "dirichlet_mode_ok": D.Dirichlet([2., 3., 1.5]).mode()}


CASES = {}
for _dt in (np.float32, np.float64):
    for _k in ("normal", "laplace", "uniform", "gamma", "exponential", "beta", "student_t",
               "bernoulli"):
        _f = _scalar_case(_k, _dt)
        CASES[_f.__name__] = _f
    for _k in ("categorical", "categorical_probs", "dirichlet", "multinomial",
               "dirichlet_multinomial"):
        _f = _vector_case(_k, _dt)
        CASES[_f.__name__] = _f
for _f in (kl_pairs, kl_unregistered, dynamic_shapes, sample_shapes, attributes,
           err_uniform_validate, err_normal_validate, err_beta_validate, err_gamma_mode,
           err_beta_mode, err_student_mean, err_student_variance, err_dirichlet_mode,
           err_bernoulli_both, err_categorical_neither, nan_stats_allowed):
    CASES[_f.__name__] = _f

FEEDS = {"dynamic_shapes": {"fed_loc": np.arange(6, dtype=np.float32).reshape(2, 3)}}
# values that are random draws: only their shapes are compared
RANDOM = {"dynamic_shapes": ("sample",)}


def _error(e, stage):
    text = str(e).strip().splitlines()
    return {"error": type(e).__name__, "message": text[0] if text else "", "stage": stage}


def _plain(v):
    a = np.asarray(v)
    if a.dtype.kind == "f":
        return {"dtype": a.dtype.name, "shape": list(a.shape),
                "v": [None if np.isnan(x) else (str(x) if np.isinf(x) else float(x))
                      for x in a.reshape(-1)]}
    return {"dtype": a.dtype.name, "shape": list(a.shape), "v": a.reshape(-1).tolist()}


def run(tf, case) -> dict:
    """See the module doc."""
    graph = tf.Graph()
    with graph.as_default():
        try:
            made = CASES[case](tf)
        except Exception as e:  # noqa: BLE001 - the recording stores what raised
            return _error(e, "build")
        static = {k: v for k, v in made.items() if k.startswith("static_")}
        fetch = {k: v for k, v in made.items()
                 if not k.startswith(("static_", "fed_"))}
        feed = {made[k]: v for k, v in FEEDS.get(case, {}).items()}
        try:
            with tf.Session() as sess:
                values = sess.run(fetch, feed)
        except Exception as e:  # noqa: BLE001
            return _error(e, "run")
    for k in RANDOM.get(case, ()):
        values[k] = np.zeros(np.shape(values[k]), np.float32)
    return {"static": static, "values": {k: _plain(v) for k, v in values.items()}}
