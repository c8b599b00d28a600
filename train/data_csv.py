"""CSV files and serialized Examples as og.data pipelines: TF1's
tf.data.experimental.CsvDataset, parse_example_dataset and
make_batched_features_dataset (og.data.experimental).

CsvDataset reads records as TF's CSVDataset does: a record ends at a line end outside
quotes (a quoted field may hold line ends), a "\\r" before it is dropped, a blank line
is a record of one empty field, and the first record of each file is skipped with
header=True. Fields split and parse as decode_csv's (ops/io_ops.py), with
CSVDataset's messages.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import ExecutionError
from ..format import DType
from ..ops.io_ops import CsvFields, csv_value
from . import graph as _g
from ..ops.record_io import raw_lines
from .data import Dataset, TFRecordDataset, _file_source
from .data_more import list_files
from .data_structure import _as_array, _Component, skips_errors
from .graph import Tensor

_CSV_TYPES = (DType.INT32, DType.INT64, DType.FLOAT32, DType.FLOAT64, DType.STRING)


def _defaults(record_defaults) -> list:
    """(dtype, default array or None for a required field) per column.

    Raises:
        TypeError: a default is not a CSV type, or not a constant of at most one value.
    """
    if isinstance(record_defaults, (str, bytes)) or not isinstance(
            record_defaults, (list, tuple)) or not record_defaults:
        raise TypeError(f"CsvDataset: record_defaults must be a non-empty list, got "
                        f"{record_defaults!r:.60}")
    out = []
    for k, d in enumerate(record_defaults):
        try:
            dtype = _g.as_dtype(d)
            value = None
        except Exception:
            dtype = None
        if dtype is None:
            if isinstance(d, Tensor):
                d = d.graph.static_value(d)
                if d is None:
                    raise TypeError(f"CsvDataset: record_defaults[{k}] must be a constant")
            value = _as_array(d).reshape(-1)
            if value.size > 1:
                raise TypeError(f"CsvDataset: record_defaults[{k}] has {value.size} values; "
                                "a default is one value (or none: a required field)")
            dtype = DType.from_numpy(value.dtype)
            value = value if value.size else None
        if dtype not in _CSV_TYPES:
            raise TypeError(f"CsvDataset: record_defaults[{k}] must be int32, int64, "
                            f"float32, float64 or string, got {dtype.short_name}")
        out.append((dtype, value))
    return out


def _records(lines, quoted: bool, name: str):
    """The CSV records of a file's lines: a record continues over line ends while a
    quote is open (quotes pair up, "" included), without a final "\\r".

    Raises:
        ExecutionError: the file ends inside a quoted field.
    """
    parts: list = []
    for line in lines:
        parts.append(line)
        if quoted and sum(p.count(b'"') for p in parts) % 2:
            continue
        record = b"\n".join(parts)
        parts = []
        yield record[:-1] if record.endswith(b"\r") else record
    if parts:
        raise ExecutionError(f"Reached end of file without closing quoted field in record "
                             f"({name})")


class CsvDataset(Dataset):
    """The records of CSV files as tuples of scalars, one per column of
    record_defaults: a CSV type (the field is required) or a default value (one value;
    none: required) per column (TF1's tf.data.experimental.CsvDataset).

    Raises:
        TypeError: filenames or record_defaults are not valid.
        ValueError: field_delim is not one character, select_cols is not increasing,
            non-negative and as long as record_defaults, or compression_type is not
            valid.
        (when read) ExecutionError: TF's messages (a wrong field count, a field that
            does not parse, a required field missing, an open quote at the end, a
            file without a header).
    """

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None,
                 header=False, field_delim=",", use_quote_delim=True, na_value="",
                 select_cols=None):
        defaults = _defaults(record_defaults)
        delim = field_delim.encode("utf-8") if isinstance(field_delim, str) else field_delim
        if not isinstance(delim, bytes) or len(delim) != 1:
            raise ValueError(f"CsvDataset: field_delim should be only 1 char, got "
                             f"{field_delim!r:.20}")
        cols = [] if select_cols is None else [int(c) for c in select_cols]
        if select_cols is not None and (len(cols) != len(defaults) or any(
                b <= a for a, b in zip(cols, cols[1:])) or (cols and cols[0] < 0)):
            raise ValueError("CsvDataset: select_cols should match output size and be "
                             "increasing non-negative column indices")
        na = na_value.encode("utf-8") if isinstance(na_value, str) else bytes(na_value)
        fields_of = CsvFields(delim[0], bool(use_quote_delim), cols)

        def element(record: bytes) -> list:
            # TF parses the fields in order (a blank line is one empty field), then
            # checks their count
            fields = fields_of.split(record) if record else [b""]
            out = []
            for k, (field, (dtype, default)) in enumerate(zip(fields, defaults)):
                if not field or field == na:
                    if default is None:
                        raise ExecutionError(f"Field {k} is required but missing in record!")
                    out.append(default.reshape(()).copy())
                else:
                    out.append(np.asarray(csv_value(field, dtype.numpy, f"{k} in record"),
                                          dtype.numpy))
            if len(fields) != len(defaults):
                have = "more" if len(fields) > len(defaults) else len(fields)
                raise ExecutionError(f"Expect {len(defaults)} fields but have {have} in "
                                     "record")
            return out

        key = object()  # ignore_errors skips the records that fail to parse

        def read(name: str, compression: str, run):
            records = _records(raw_lines(name, compression), bool(use_quote_delim), name)
            if header and next(records, None) is None:
                raise ExecutionError(f"Can't read header of file {name}")
            for record in records:
                try:
                    values = element(record)
                except ExecutionError as e:
                    if skips_errors(run, key, e):
                        continue
                    raise
                yield values
        make, captured = _file_source(filenames, compression_type, None, "CsvDataset", read)
        super().__init__(tuple(_Component(dtype, ()) for dtype, _ in defaults), make,
                         captured=captured)
        self._error_key = key


def parse_example_dataset(features: dict, num_parallel_calls=1) -> Callable:
    """Dataset.apply transformation: each element (a vector of serialized Examples)
    parsed with parse_example(features) (TF's parse_example_dataset). Never raises
    itself; parse_example checks the features when applied."""
    from .api_parsing import parse_example  # (parsing builds on much of og)

    return lambda ds: ds.map(lambda serialized: parse_example(serialized, features))


def make_batched_features_dataset(file_pattern, batch_size: int, features: dict,
                                  reader=TFRecordDataset, label_key=None, reader_args=None,
                                  num_epochs=None, shuffle=True, shuffle_buffer_size=10000,
                                  shuffle_seed=None, prefetch_buffer_size=None,
                                  reader_num_threads=None, parser_num_threads=None,
                                  sloppy_ordering=False,
                                  drop_final_batch=False) -> Dataset:
    """Batches of parsed Examples read from the files matching file_pattern: TF's
    pipeline list_files -> interleave(reader) -> shuffle -> repeat(num_epochs) ->
    batch (the last, short batch dropped when drop_final_batch or repeating forever)
    -> parse_example, giving dicts of features (and (features, label) with label_key).

    Raises:
        TypeError / ValueError: as the pieces (a pattern, a batch size, the features).
        ValueError: label_key is not a key of features.
    """
    if label_key is not None and label_key not in features:
        raise ValueError(f"The `label_key` provided ({label_key}) must be one of the "
                         f"`features` keys.")
    files = list_files(file_pattern, shuffle=shuffle, seed=shuffle_seed)
    args = list(reader_args or [])
    ds = files.interleave(lambda name: reader(name, *args),
                          cycle_length=reader_num_threads or 1, block_length=1)
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    ds = ds.batch(batch_size, drop_remainder=drop_final_batch or num_epochs is None)
    ds = ds.apply(parse_example_dataset(features))
    if label_key is not None:
        ds = ds.map(lambda parsed: (parsed, parsed.pop(label_key)))
    return ds
