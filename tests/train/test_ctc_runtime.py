"""og.nn.ctc_loss_v2 with a negative blank_index, and og.nn.ctc_loss (whose blank is
the last class), on logits whose class count only the run knows: TF resolves the blank
as num_classes + blank_index when the graph runs. Oracles: TensorFlow's recorded
ctc_loss_v2 cases with every dim hidden (values and gradients), TF1's ctc_loss values
recorded in test_nn_tf1_more, a brute-force sum over every alignment; run-time errors
for a blank_index beyond the classes and labels outside them."""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError

from . import tf1_reference
from .test_nn_tf1_more import (_TF1_CTC, _TF1_CTC_COLLAPSED, _TF1_CTC_GRAD_B1,
                               _TF1_CTC_NO_MERGE, _brute_ctc)
from .tf1_nnextra2_cases import CASES

_CTC_V2 = [c for c in CASES if c[1] == "nn.ctc_loss_v2"]


@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("nnextra2")


@pytest.mark.parametrize("case", _CTC_V2, ids=[c[0] for c in _CTC_V2])
def test_ctc_loss_v2_with_every_dim_hidden_matches_tensorflow(reference, case):
    """TF's ctc_loss_v2 cases (blank 0, -1 and 2), every dim of the logits, labels and
    lengths unknown while building: TF's losses and gradients (tolerances as
    test_nn_tf1_more's)."""
    hidden = {v[1:]: tuple(range(reference[f"in/{v[1:]}"].ndim))
              for v in case[3].values() if isinstance(v, str) and v.startswith("@")}
    tf1_reference.check_case(reference, case, hidden_dims=hidden)


def _ctc_loss_unknown_classes(reference, **kwargs):
    """TF1's ctc_loss of the recorded logits fed through a [None, None, None]
    placeholder: (loss, d sum(loss * [1, -2, 0.5]) / d logits)."""
    x = reference["in/ctc_logits"]
    g = og.Graph()
    with g.as_default():
        xp = og.placeholder(og.float32, [None, None, None])
        loss = og.nn.ctc_loss(reference["in/ctc_labels_last"], xp,
                              reference["in/ctc_logit_length"],
                              label_length=reference["in/ctc_label_length"], **kwargs)
        weights = og.constant(np.array([1.0, -2.0, 0.5], np.float32))
        grad = og.gradients(og.reduce_sum(loss * weights), xp)[0]
        return og.Session(g).run([loss, grad], {xp: x})


def test_tf1_ctc_loss_of_run_time_classes_matches_tensorflow(reference):
    loss, grad = _ctc_loss_unknown_classes(reference)
    np.testing.assert_allclose(loss, _TF1_CTC, rtol=1e-5)
    np.testing.assert_allclose(grad[:, 1], _TF1_CTC_GRAD_B1, rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(_ctc_loss_unknown_classes(reference, ctc_merge_repeated=False)[0],
                               _TF1_CTC_NO_MERGE, rtol=1e-5)
    np.testing.assert_allclose(
        _ctc_loss_unknown_classes(reference, preprocess_collapse_repeated=True)[0],
        _TF1_CTC_COLLAPSED, rtol=1e-5)


def _loss_v2(logits, labels, label_length, logit_length, blank_index):
    """ctc_loss_v2 of time-major logits through placeholders with every dim unknown."""
    g = og.Graph()
    with g.as_default():
        xp = og.placeholder(logits.dtype, [None, None, None])
        yp = og.placeholder(labels.dtype, [None, None])
        loss = og.nn.ctc_loss_v2(yp, xp, label_length, logit_length,
                                 blank_index=blank_index)
        return og.Session(g).run(loss, {xp: logits, yp: labels})


@pytest.mark.parametrize("labels, blank_index", [
    ([1, 2], -1), ([3, 3], -2), ([0, 3, 2], -3), ([2, 3], -4), ([], -2), ([1, 0], -1)])
def test_negative_blank_of_run_time_classes_is_the_brute_force_loss(labels, blank_index):
    """4 classes only the run knows; blank num_classes + blank_index; labels below and
    above the blank (renumbered differently by the rotation), repeats, no labels."""
    rng = np.random.RandomState(7)
    logits = rng.randn(5, 1, 4) * 1.5
    padded = np.asarray([labels + [0] * (3 - len(labels))], np.int64)
    got = _loss_v2(logits, padded, [len(labels)], [5], blank_index)
    want = _brute_ctc(logits[:, 0], labels, 4 + blank_index)
    np.testing.assert_allclose(got[0], want, rtol=1e-12)


def test_blank_index_beyond_the_run_time_classes_is_an_execution_error():
    logits = np.zeros((4, 1, 3), np.float32)
    with pytest.raises(ExecutionError,
                       match="ctc_loss_v2: blank_index -4 needs at least 4 classes"):
        _loss_v2(logits, np.zeros((1, 2), np.int64), [1], [4], -4)


@pytest.mark.parametrize("bad", [-1, 3])
def test_labels_outside_the_run_time_classes_are_still_refused(bad):
    """A label outside [0, classes) stays outside after the blank is moved, so the
    CTC op refuses it as with known classes."""
    logits = np.zeros((4, 1, 3), np.float32)
    with pytest.raises(og.OneGraphError, match=r"labels must lie in \[0, 3\)"):
        _loss_v2(logits, np.asarray([[1, bad]], np.int64), [2], [4], -1)
