"""A bounded sweep of edge inputs over the random functions (train/api_random_more.py),
the sampled losses and candidate samplers (train/nn_sampled.py) and the kernels of
ops/random_more.py, ops/candidate_sampling.py and ops/candidate_sampling_more.py: each
argument in turn takes each edge value (empty, zero, negative, NaN, inf, huge ints,
wrong dtypes and ranks, None, ...), the rest staying valid, and every call must either
work or raise a deliberate error: a onegraph error (not one wrapping a raw numpy or
Python exception), or a TypeError / ValueError naming the function.

The sweep runs in a subprocess whose address space is capped at 4 GiB (so a huge
allocation shows as a MemoryError instead of eating a shared machine) under an overall
time limit (so a hang shows as a failure naming the case it was in).
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

_LIMIT_BYTES = 4 << 30
_TIMEOUT = 600          # seconds for the whole sweep (it takes a few)
_CASE_SECONDS = 20      # per case, where signal.alarm can interrupt
_RAW = ("ValueError", "TypeError", "AttributeError", "OverflowError", "MemoryError",
        "IndexError", "KeyError", "ZeroDivisionError", "RuntimeError",
        "FloatingPointError")


def _edges():
    return {
        "None": None, "0": 0, "-1": -1, "1.5": 1.5, "nan": float("nan"),
        "inf": float("inf"), "-inf": float("-inf"), "1e19": 1e19, "1e308": 1e308,
        "10**10": 10 ** 10, "2**31": 2 ** 31, "2**63": 2 ** 63, "-2**63": -2 ** 63,
        "2**64": 2 ** 64, "True": True, "str": "abc", "[]": [], "[[]]": [[]], "[0]": [0],
        "[-1]": [-1], "[10**10]": [10 ** 10], "[2**31]*2": [2 ** 31, 2 ** 31],
        "[1e10]": [1e10], "[2**62]*2": [2 ** 62, 2 ** 62], "[nan]": [float("nan")],
        "f32[2,3]": np.ones((2, 3), np.float32), "i8[2]": np.ones(2, np.int8),
        "c128": np.complex128(1 + 1j), "u64max": np.uint64(2 ** 64 - 1),
        "i32[1,1,1]": np.ones((1, 1, 1), np.int32), "dict": {}, "obj": object(),
        "f64": np.float64(2.0), "bool[2]": np.array([True, False]),
        "str[2]": np.array(["a", "b"]), "f16max": np.float16(65504),
        "i64[2]big": np.array([2 ** 62, 2 ** 62], np.int64),
    }


def _api_specs():
    classes = np.array([[0], [1]], np.int64)
    seed = [1, 2]
    logits = np.zeros((2, 3), np.float32)
    loss = dict(weights=np.ones((5, 3), np.float32), biases=np.zeros(5, np.float32),
                labels=classes, inputs=np.ones((2, 3), np.float32), num_sampled=2,
                num_classes=5, num_true=1, sampled_values=None, partition_strategy="mod",
                seed=None)
    return [
        ("rm", "random_gamma", dict(shape=[2], alpha=1.0, beta=None, dtype="float32",
                                    seed=None, name=None)),
        ("rm", "random_poisson", dict(lam=1.0, shape=[2], dtype="float32", seed=None,
                                      name=None)),
        ("rm", "stateless_uniform", dict(shape=[2], seed=seed, minval=0, maxval=None,
                                         dtype="float32", name=None)),
        ("rm", "stateless_normal", dict(shape=[2], seed=seed, mean=0.0, stddev=1.0,
                                        dtype="float32", name=None)),
        ("rm", "stateless_truncated_normal", dict(shape=[2], seed=seed, mean=0.0,
                                                  stddev=1.0, dtype="float32", name=None)),
        ("rm", "stateless_categorical", dict(logits=logits, num_samples=2, seed=seed,
                                             dtype="int64", name=None)),
        ("rm", "stateless_multinomial", dict(logits=logits, num_samples=2, seed=seed,
                                             output_dtype="int64", name=None)),
        ("rm", "stateless_binomial", dict(shape=[2], seed=seed, counts=5.0, probs=0.5,
                                          output_dtype="int32", name=None)),
        ("rm", "stateless_poisson", dict(shape=[2], seed=seed, lam=1.0, dtype="int32",
                                         name=None)),
        ("rm", "stateless_gamma", dict(shape=[2], seed=seed, alpha=1.0, beta=None,
                                       dtype="float32", name=None)),
        ("ns", "uniform_candidate_sampler", dict(true_classes=classes, num_true=1,
                                                 num_sampled=2, unique=True, range_max=5,
                                                 seed=None, name=None)),
        ("ns", "log_uniform_candidate_sampler", dict(true_classes=classes, num_true=1,
                                                     num_sampled=2, unique=True,
                                                     range_max=5, seed=None, name=None)),
        ("ns", "nce_loss", dict(loss, remove_accidental_hits=False, name="nce_loss")),
        ("ns", "sampled_softmax_loss", dict(loss, remove_accidental_hits=True,
                                            name="sampled_softmax_loss")),
    ]


def _kernel_specs():
    classes = np.array([[0], [1]], np.int64)
    shape, seed = np.array([2], np.int64), np.array([1, 2], np.int64)
    sampler = {"num_true": 1, "num_sampled": 2, "unique": 1, "range_max": 5}
    return [
        ("RandomGamma", [shape, np.float32(1.0)], {}),
        ("RandomPoisson", [shape, np.float32(1.0)], {"dtype": 1}),
        ("StatelessRandomBinomial", [shape, seed, np.float64(5), np.float64(0.5)],
         {"dtype": 6}),
        ("StatelessRandomPoisson", [shape, seed, np.float64(1)], {"dtype": 6}),
        ("StatelessRandomGamma", [shape, seed, np.float32(1)], {}),
        ("StatelessRandomUniform", [shape, seed], {"dtype": 1}),
        ("StatelessRandomNormal", [shape, seed], {"dtype": 1}),
        ("StatelessTruncatedNormal", [shape, seed], {"dtype": 1}),
        ("StatelessRandomUniformInt", [shape, seed, np.int64(0), np.int64(5)], {}),
        ("StatelessMultinomial", [np.zeros((2, 3)), np.int64(2), seed], {"dtype": 7}),
        ("RandomGammaGrad", [np.float32(1.0), np.float32(1.0)], {}),
        ("UniformCandidateSampler", [classes], dict(sampler)),
        ("LogUniformCandidateSampler", [classes], dict(sampler)),
        ("FixedUnigramCandidateSampler", [classes],
         dict(sampler, range_max=4, unigrams=[1.0, 2.0, 3.0, 4.0], distortion=1.0,
              num_reserved_ids=0, num_shards=1, shard=0)),
        ("LearnedUnigramCandidateSampler", [classes], dict(sampler, range_max=4)),
        ("ComputeAccidentalHits", [classes, np.array([0, 3], np.int64)], {"num_true": 1}),
    ]


def _cases() -> list:
    edges = list(_edges())
    out = []
    for mod, fn, kwargs in _api_specs():
        out.append(("api", mod, fn, None, None))
        out += [("api", mod, fn, arg, e) for arg in kwargs for e in edges]
    for op, inputs, attrs in _kernel_specs():
        out.append(("kernel", None, op, None, None))
        out += [("kernel", None, op, ("input", k), e) for k in range(len(inputs))
                for e in edges]
        out += [("kernel", None, op, ("attr", a), e) for a in attrs for e in edges]
    return out


def _run_case(case) -> tuple:
    """(verdict, message) of one case: "ok", "named" or "RAW"."""
    import onegraph as og
    from onegraph.errors import OneGraphError
    from onegraph.ops import get_op

    og.nn, og.random   # noqa: B018 - load og's namespaces (their import order) first
    from onegraph.train import api_random_more, nn_sampled

    kind, mod, fn, arg, edge = case
    value = _edges()[edge] if edge is not None else None
    if kind == "kernel":
        _, inputs, attrs = next(s for s in _kernel_specs() if s[0] == fn)
        inputs, attrs = list(inputs), dict(attrs)
        if arg is not None:
            if arg[0] == "input":
                inputs[arg[1]] = value
            else:
                attrs[arg[1]] = value
        opdef = get_op(fn, "onegraph")

        def call():
            return opdef.kernel(inputs, opdef.resolve_attrs(attrs), None)
    else:
        kwargs = dict(next(s for s in _api_specs() if s[1] == fn)[2])
        if arg is not None:
            kwargs[arg] = value
        f = getattr({"rm": api_random_more, "ns": nn_sampled}[mod], fn)

        def call():
            with og.Graph().as_default():
                return og.Session().run(f(**kwargs))
    try:
        call()
        return "ok", ""
    except OneGraphError as e:
        text = str(e)
        if any(f" failed: {name}" in text for name in _RAW):   # the executor's wrap
            return "RAW", f"{type(e).__name__}: {text[:300]}"
        return "named", ""
    except (TypeError, ValueError) as e:
        if str(e).startswith(f"{fn}: "):    # the API's own argument checks
            return "named", ""
        return "RAW", f"{type(e).__name__}: {str(e)[:300]}"
    except Exception as e:  # noqa: BLE001 - the sweep reports whatever escapes
        return "RAW", f"{type(e).__name__}: {str(e)[:300]}"


def _worker() -> None:
    import resource
    import signal
    import warnings

    resource.setrlimit(resource.RLIMIT_AS, (_LIMIT_BYTES, _LIMIT_BYTES))
    warnings.simplefilter("ignore")

    def alarm(*_):
        raise TimeoutError(f"more than {_CASE_SECONDS} s")

    signal.signal(signal.SIGALRM, alarm)
    for index, case in enumerate(_cases()):
        print(json.dumps({"start": index}), flush=True)
        signal.alarm(_CASE_SECONDS)
        try:
            verdict, message = _run_case(case)
        except TimeoutError as e:
            verdict, message = "RAW", f"hang: {e}"
        finally:
            signal.alarm(0)
        if verdict == "RAW":
            print(json.dumps({"bad": index, "message": message}), flush=True)


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="needs RLIMIT_AS and SIGALRM")
def test_edge_inputs_give_named_errors_without_hangs_or_huge_allocations():
    cases = _cases()
    try:
        done = subprocess.run([sys.executable, __file__, "--worker"], capture_output=True,
                              text=True, timeout=_TIMEOUT,
                              cwd=os.path.dirname(os.path.abspath(__file__)))
        output, code = done.stdout, done.returncode
    except subprocess.TimeoutExpired as e:
        output, code = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) \
            else (e.stdout or ""), "timeout"
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    started = [d["start"] for d in lines if "start" in d]
    bad = [f"{cases[d['bad']]}: {d['message']}" for d in lines if "bad" in d]
    if code != 0:
        last = cases[started[-1]] if started else None
        bad.append(f"the sweep ended with {code} in case {last}")
    assert len(started) == len(cases) or code != 0
    assert not bad, "\n".join(bad[:40])


if __name__ == "__main__" and sys.argv[1:] == ["--worker"]:
    _worker()
