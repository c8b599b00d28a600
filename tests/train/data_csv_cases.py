"""CSV and Example-file pipelines that tools/record_tf_data.py runs under TensorFlow
(tf.compat.v1) and tests/train/test_data_csv.py under onegraph (`tf` is either module):
the element sequences (or the error messages) must agree."""

from __future__ import annotations

import os


# file name -> content of the CSV files the scenarios read
CSV_FILES = {
    "a.csv": 'a,b,c\r\n1,2.5,"x,y"\r\n3,,z\n4,5.5,"multi\nline"\n5,6,"q""q"',
    "b.csv": "h1,h2,h3\n7,8.5,w",
    "plain.csv": "1,2\n3,4\n",
    "blank.csv": "1,2\n\n3,4\n",
    "short.csv": "1,2\n3\n",
    "bad_int.csv": "1,x\n",
    "open_quote.csv": '1,"x\n',
    "empty.csv": "",
    "semi.csv": "1;a b;2.5\n-3;;\n",
    "mixed.csv": "1,2\nx,3\n4,5\n5\n6,7\n",
}


def write_csv_files(directory: str) -> None:
    """Write CSV_FILES into `directory` (bytes as given, no newline translation)."""
    for name, text in CSV_FILES.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(text.encode())


def csv_pipelines(tf, d) -> dict:
    """Scenario name -> dataset over the CSV files in directory d."""
    X = tf.data.experimental

    def path(name):
        return os.path.join(d, name)
    return {
        "csv_header_types": X.CsvDataset([path("a.csv"), path("b.csv")],
                                         [tf.int32, [0.0], ["dflt"]], header=True),
        "csv_select_cols": X.CsvDataset(path("a.csv"), [[0], ["d"]], header=True,
                                        select_cols=[0, 2]),
        "csv_na_value": X.CsvDataset(path("a.csv"), [[0], [0.0], ["d"]], header=True,
                                     na_value="3"),
        "csv_two_files": X.CsvDataset([path("plain.csv"), path("plain.csv")],
                                      [[0], tf.constant([0], tf.int64)]),
        "err_csv_blank_line": X.CsvDataset(path("blank.csv"), [[-1], [-2]]),
        "csv_delim_float64": X.CsvDataset(
            path("semi.csv"), [[0], ["s"], tf.constant([9.0], tf.float64)], field_delim=";"),
        "csv_map_batch": X.CsvDataset(path("plain.csv"), [[0], [0]]).map(
            lambda x, y: x * 10 + y).batch(2),
        "csv_ignore_errors": X.CsvDataset(path("mixed.csv"), [[0], [0]]).apply(
            X.ignore_errors()),
        "err_csv_more_fields": X.CsvDataset(path("a.csv"), [[0], [0.0]], header=True),
        "err_csv_fewer_fields": X.CsvDataset(path("short.csv"), [[0], [0]]),
        "err_csv_bad_int": X.CsvDataset(path("bad_int.csv"), [[0], [0]]),
        "err_csv_open_quote": X.CsvDataset(path("open_quote.csv"), [[0], ["a"]]),
        "err_csv_required": X.CsvDataset(path("blank.csv"), [tf.int32, [0]]),
        "err_csv_no_header": X.CsvDataset(path("empty.csv"), [[0]], header=True),
    }


def _example(tf, ident, words, weight):
    T = tf.train
    return T.Example(features=T.Features(feature={
        "id": T.Feature(int64_list=T.Int64List(value=[ident])),
        "words": T.Feature(bytes_list=T.BytesList(value=words)),
        "weight": T.Feature(float_list=T.FloatList(value=[weight]))})).SerializeToString()


def write_example_files(tf, directory: str) -> None:
    """Two TFRecord files of Examples (id, words, weight), written with `tf`."""
    rows = [(i, [b"w%d" % j for j in range(i % 3)], i * 0.5) for i in range(7)]
    for k, part in enumerate((rows[:4], rows[4:])):
        with tf.io.TFRecordWriter(os.path.join(directory, f"ex{k}.tfrecord")) as w:
            for row in part:
                w.write(_example(tf, *row))


def example_pipelines(tf, d) -> dict:
    """Scenario name -> dataset over the Example files in directory d."""
    X = tf.data.experimental
    pattern = os.path.join(d, "ex*.tfrecord")
    features = {"id": tf.io.FixedLenFeature([], tf.int64),
                "words": tf.io.VarLenFeature(tf.string),
                "weight": tf.io.FixedLenFeature([1], tf.float32, default_value=[0.0])}
    files = sorted(os.path.join(d, f"ex{k}.tfrecord") for k in range(2))
    return {
        "batched_features": X.make_batched_features_dataset(
            pattern, 3, features, shuffle=False, num_epochs=1),
        "batched_features_label": X.make_batched_features_dataset(
            pattern, 4, features, label_key="id", shuffle=False, num_epochs=1,
            reader_num_threads=2),
        "batched_features_drop": X.make_batched_features_dataset(
            pattern, 3, {"id": features["id"]}, shuffle=False, num_epochs=2,
            drop_final_batch=True),
        "parse_example_dataset": tf.data.TFRecordDataset(files).batch(5).apply(
            X.parse_example_dataset({"id": features["id"], "words": features["words"]})),
    }
