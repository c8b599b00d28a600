"""og.data.experimental's CsvDataset, parse_example_dataset and
make_batched_features_dataset (train/data_csv.py) against TF1's: the elements, types,
shapes and classes (or the error while reading) TF 2.21 gives for the same files
(tools/record_tf_data.py, data/tf1_data_reference.json's "csv")."""

from __future__ import annotations

import pytest

import onegraph as og
from onegraph.errors import ExecutionError
from onegraph.train import data as tfdata

from .data_csv_cases import (csv_pipelines, example_pipelines, write_csv_files,
                             write_example_files)
from .test_data import REF, _check_elements, _drain, _flat, _shape_list

CSV = REF["csv"]
X = tfdata.experimental


@pytest.fixture
def files(tmp_path):
    write_csv_files(str(tmp_path))
    write_example_files(og, str(tmp_path))
    return str(tmp_path)


def _pipeline(name: str, d: str):
    both = {**csv_pipelines(og, d), **example_pipelines(og, d)}
    assert set(both) == set(CSV)
    return both[name]


@pytest.mark.parametrize("name", sorted(CSV))
def test_file_pipelines_match_tf(name, files):
    ref = CSV[name]
    with og.Graph().as_default():
        ds = _pipeline(name, files)
        nxt = tfdata.make_one_shot_iterator(ds).get_next()
        with og.Session() as sess:
            if "error" in ref:
                with pytest.raises(ExecutionError, match=ref["error"]):
                    _drain(sess, nxt)
                return
            got = _drain(sess, nxt)
        assert [c.__name__ for c in _flat(ds.output_classes)] == ref["classes"]
        assert [t.short_name for t in _flat(ds.output_types)] == ref["types"]
        assert [_shape_list(s) for s in _flat(ds.output_shapes)] == ref["shapes"]
        _check_elements(got, ref["elements"])


def test_csv_arguments_are_checked(files):
    with og.Graph().as_default():
        with pytest.raises(TypeError, match="non-empty list"):
            X.CsvDataset(files + "/plain.csv", [])
        with pytest.raises(TypeError, match="int32, int64, float32, float64 or string"):
            X.CsvDataset(files + "/plain.csv", [og.bool])
        with pytest.raises(TypeError, match="a default is one value"):
            X.CsvDataset(files + "/plain.csv", [[1, 2]])
        with pytest.raises(ValueError, match="only 1 char"):
            X.CsvDataset(files + "/plain.csv", [[0]], field_delim=";;")
        with pytest.raises(ValueError, match="select_cols should match output size"):
            X.CsvDataset(files + "/plain.csv", [[0], [0]], select_cols=[0])
        with pytest.raises(ValueError, match="label_key"):
            X.make_batched_features_dataset(files + "/ex*", 2, {"a": og.io.VarLenFeature(
                og.int64)}, label_key="b")
