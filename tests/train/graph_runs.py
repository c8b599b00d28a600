"""Running a small graph of placeholders in a Session, for the API tests."""

import numpy as np

import onegraph as og


def run_on(fn, *arrays, dynamic=False):
    """fn of placeholders fed with `arrays` (their shapes, or all dims unknown)."""
    arrays = [np.asarray(a) for a in arrays]
    g = og.Graph()
    with g.as_default():
        phs = [og.placeholder(a.dtype, [None] * a.ndim if dynamic else a.shape)
               for a in arrays]
        out = fn(*phs)
    return og.Session(g, seed=0).run(out, dict(zip(phs, arrays)))


def session_and_onnxruntime(g, inputs: dict, outs: dict, feeds: dict,
                            session=None) -> tuple:
    """(the Session's values, onnxruntime's values) of `outs` (name -> tensor of g) for
    `feeds` (input name -> array), onnxruntime running g exported with the one
    signature (inputs, outs); both lists in outs' order. `session` (one whose variables
    are initialized) runs g and gives the exported variables their values."""
    import onnxruntime as ort

    from onegraph.convert import to_onnx

    with g.as_default():
        want = (session or og.Session(g)).run(list(outs.values()),
                                              {inputs[k]: v for k, v in feeds.items()})
        proto = to_onnx(g, signatures={"serving": og.signature(inputs, outs)},
                        session=session)
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]
                               ).run(list(outs), feeds)
    return want, got
