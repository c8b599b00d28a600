"""og.metrics' streaming metrics checked against TensorFlow's tf.compat.v1.metrics:
shared by tests/train/test_metrics_more.py and tools/record_tf1_reference.py metrics
(which needs tensorflow; the test does not).

A case is (name, function path under tf.compat.v1 / og, positional arguments, keyword
arguments). An argument "@key" stands for a placeholder fed make_inputs()[key][b] in
batch b: every input holds the same number of batches on its first axis, update_op
runs once per batch and the metric's value is read after each.
"""

import numpy as np


def make_inputs() -> dict:
    """The named inputs, three batches each (fixed seed)."""
    rng = np.random.RandomState(20261205)
    scores = rng.rand(3, 40).astype(np.float32)
    scores[0, :4] = [0.0, 1.0, 0.5, 0.5]                 # on thresholds and ends
    truth = (rng.rand(3, 40) < scores * 0.8 + 0.1)         # informative, not perfect
    cls = rng.randint(0, 4, (3, 30))                       # class 4 never appears
    guess = np.where(rng.rand(3, 30) < 0.6, cls, rng.randint(0, 5, (3, 30)))
    unit = rng.randn(3, 10, 4)
    other = unit + rng.randn(3, 10, 4) * 0.5
    normalizer = rng.rand(3, 40).astype(np.float32) + 0.5
    normalizer[1, ::7] = 0.0
    inputs = {
        "scores": scores,
        "labels": truth.astype(np.int64),
        "labels_bool": truth,
        "said": scores > 0.5,
        "weights": rng.rand(3, 40).astype(np.float32),
        "column": scores.reshape(3, 40, 1),
        "grid_scores": rng.rand(3, 6, 5).astype(np.float32),
        "grid_labels": rng.rand(3, 6, 5) < 0.4,
        "row_weights": rng.rand(3, 6).astype(np.float32),
        "cls": cls.astype(np.int64),
        "guess": guess.astype(np.int64),
        "cls_weights": (rng.rand(3, 30) < 0.8).astype(np.float32),
        "seg_cls": cls.reshape(3, 5, 6).astype(np.int32),
        "seg_guess": guess.reshape(3, 5, 6).astype(np.int32),
        "unit": (unit / np.linalg.norm(unit, axis=2, keepdims=True)).astype(np.float32),
        "other": (other / np.linalg.norm(other, axis=2, keepdims=True)).astype(np.float32),
        "vec_weights": rng.rand(3, 10, 1).astype(np.float32),
        "values": rng.randn(3, 40).astype(np.float32),
        "normalizer": normalizer,
        "tensor": rng.randn(3, 6, 5).astype(np.float32),
        "tensor_weights": rng.rand(3, 6, 1).astype(np.float32),
        "logits": rng.randn(3, 8, 6).astype(np.float32),
        "top_labels": _top_labels(rng),
        "one_label": rng.randint(0, 6, (3, 8)).astype(np.int64),
        "predicted_ids": np.stack([rng.permutation(6)[:3] for _ in range(24)]
                                  ).reshape(3, 8, 3).astype(np.int32),
        "example_weights": rng.rand(3, 8).astype(np.float32),
    }
    # every example with a relevant label (TF1 gives NaN for one without)
    inputs["top_labels_some"] = inputs["top_labels"].copy()
    inputs["top_labels_some"][0, 0] = [3, -1, 5]
    return inputs


def _top_labels(rng) -> np.ndarray:
    """Three labels per example among 6 classes, with repeats, -1 (none) and 7 (out of
    range) mixed in."""
    labels = rng.randint(0, 6, (3, 8, 3)).astype(np.int64)
    labels[0, 0] = [-1, -1, -1]
    labels[0, 1] = [2, 2, -1]
    labels[1, 2] = [7, 1, 1]
    labels[2, 3] = [0, 7, -1]
    return labels


_T = [0.0, 0.25, 0.5, 0.75, 1.0]

CASES = [
    # counts of bool predictions (any nonzero is true), weighted and not
    ("tp", "metrics.true_positives", ["@labels", "@said"], {}),
    ("fp_weighted", "metrics.false_positives", ["@labels_bool", "@said"],
     {"weights": "@weights"}),
    ("tn", "metrics.true_negatives", ["@labels", "@said"], {}),
    ("fn_weighted", "metrics.false_negatives", ["@labels", "@said"],
     {"weights": "@weights"}),
    # counts and ratios at thresholds (a prediction counts when above the threshold)
    ("tp_at", "metrics.true_positives_at_thresholds", ["@labels", "@scores", _T], {}),
    ("fp_at", "metrics.false_positives_at_thresholds", ["@labels", "@scores", _T],
     {"weights": "@weights"}),
    ("tn_at", "metrics.true_negatives_at_thresholds", ["@labels", "@scores", _T], {}),
    ("fn_at", "metrics.false_negatives_at_thresholds", ["@labels", "@scores", _T], {}),
    ("precision_at", "metrics.precision_at_thresholds", ["@labels", "@scores", _T], {}),
    ("recall_at_weighted", "metrics.recall_at_thresholds",
     ["@labels_bool", "@scores", [0.3, 0.6]], {"weights": "@weights"}),
    ("precision_at_column", "metrics.precision_at_thresholds",
     ["@labels", "@column", [0.4]], {}),
    ("precision_at_grid", "metrics.precision_at_thresholds",
     ["@grid_labels", "@grid_scores", _T], {"weights": "@row_weights"}),
    # auc: both curves, every summation, thresholds given or even
    ("auc_roc", "metrics.auc", ["@labels", "@scores"], {}),
    ("auc_roc_weighted", "metrics.auc", ["@labels_bool", "@scores"],
     {"weights": "@weights", "num_thresholds": 33}),
    ("auc_pr", "metrics.auc", ["@labels", "@scores"], {"curve": "PR"}),
    ("auc_pr_careful", "metrics.auc", ["@labels", "@scores"],
     {"curve": "PR", "summation_method": "careful_interpolation"}),
    ("auc_pr_careful_weighted", "metrics.auc", ["@labels", "@scores"],
     {"curve": "PR", "summation_method": "careful_interpolation", "weights": "@weights",
      "num_thresholds": 17}),
    ("auc_minoring", "metrics.auc", ["@labels", "@scores"],
     {"summation_method": "minoring", "num_thresholds": 11}),
    ("auc_majoring_pr", "metrics.auc", ["@labels", "@scores"],
     {"curve": "PR", "summation_method": "majoring"}),
    ("auc_thresholds", "metrics.auc", ["@labels", "@scores"],
     {"thresholds": [0.9, 0.2, 0.5, 0.35]}),
    ("auc_grid", "metrics.auc", ["@grid_labels", "@grid_scores"], {"num_thresholds": 9}),
    ("sensitivity_at_specificity", "metrics.sensitivity_at_specificity",
     ["@labels", "@scores", 0.7], {}),
    ("sensitivity_at_specificity_weighted", "metrics.sensitivity_at_specificity",
     ["@labels", "@scores", 0.45], {"weights": "@weights", "num_thresholds": 21}),
    ("specificity_at_sensitivity", "metrics.specificity_at_sensitivity",
     ["@labels", "@scores", 0.6], {}),
    ("specificity_at_sensitivity_weighted", "metrics.specificity_at_sensitivity",
     ["@labels", "@scores", 0.85], {"weights": "@weights", "num_thresholds": 25}),
    # classes
    ("mean_iou", "metrics.mean_iou", ["@cls", "@guess", 5], {}),
    ("mean_iou_weighted", "metrics.mean_iou", ["@cls", "@guess", 5],
     {"weights": "@cls_weights"}),
    ("mean_iou_grid", "metrics.mean_iou", ["@seg_cls", "@seg_guess", 6], {}),
    ("mean_per_class_accuracy", "metrics.mean_per_class_accuracy", ["@cls", "@guess", 5],
     {}),
    ("mean_per_class_accuracy_weighted", "metrics.mean_per_class_accuracy",
     ["@cls", "@guess", 5], {"weights": "@cls_weights"}),
    ("mean_per_class_accuracy_grid", "metrics.mean_per_class_accuracy",
     ["@seg_cls", "@seg_guess", 4], {}),
    # means
    ("mean_cosine_distance", "metrics.mean_cosine_distance", ["@unit", "@other", 1], {}),
    ("mean_cosine_distance_weighted", "metrics.mean_cosine_distance",
     ["@unit", "@other", 1], {"weights": "@vec_weights"}),
    ("mean_relative_error", "metrics.mean_relative_error",
     ["@values", "@scores", "@normalizer"], {}),
    ("mean_relative_error_weighted", "metrics.mean_relative_error",
     ["@values", "@scores", "@normalizer"], {"weights": "@weights"}),
    ("percentage_below", "metrics.percentage_below", ["@values", 0.3], {}),
    ("percentage_below_weighted", "metrics.percentage_below", ["@scores", 0.5],
     {"weights": "@weights"}),
    ("mean_tensor", "metrics.mean_tensor", ["@tensor"], {}),
    ("mean_tensor_weighted", "metrics.mean_tensor", ["@tensor"],
     {"weights": "@tensor_weights"}),
    # top-k retrieval (labels as sets: repeats count once, -1 and 7 are no class)
    ("recall_at_k", "metrics.recall_at_k", ["@top_labels", "@logits", 3], {}),
    ("recall_at_k_one_label", "metrics.recall_at_k", ["@one_label", "@logits", 2], {}),
    ("recall_at_k_class", "metrics.recall_at_k", ["@top_labels", "@logits", 2],
     {"class_id": 2}),
    ("recall_at_k_weighted", "metrics.recall_at_k", ["@top_labels", "@logits", 4],
     {"weights": "@example_weights"}),
    ("recall_at_top_k", "metrics.recall_at_top_k", ["@top_labels", "@predicted_ids"], {}),
    ("precision_at_k", "metrics.precision_at_k", ["@top_labels", "@logits", 3], {}),
    ("precision_at_k_class", "metrics.precision_at_k", ["@one_label", "@logits", 3],
     {"class_id": 4}),
    ("precision_at_k_weighted", "metrics.sparse_precision_at_k",
     ["@top_labels", "@logits", 1], {"weights": "@example_weights"}),
    ("precision_at_top_k", "metrics.precision_at_top_k",
     ["@top_labels", "@predicted_ids"], {"class_id": 0}),
    ("average_precision_at_k", "metrics.average_precision_at_k",
     ["@one_label", "@logits", 3], {}),
    ("average_precision_at_k_sets", "metrics.average_precision_at_k",
     ["@top_labels_some", "@logits", 4], {"weights": "@example_weights"}),
]
