"""og.io: TF1's tf.io namespace, and TF1's top-level names for the same functions
(og.parse_example, og.decode_csv, og.FixedLenFeature, ...), with og.io.gfile.

The functions live where their kind of work is: Example parsing in api_parsing.py,
file, CSV, raw-bytes and tensor-proto ops in api_io_ops.py, TFRecord files in
tfrecord.py and record_compression.py; this module only gathers them under TF's names.
"""

from __future__ import annotations

from . import api_io_ops, api_parsing, image, image_more, queues  # noqa: F401 - (codecs)
from .api_json_example import decode_json_example
from .api_sparse_serialize import (deserialize_many_sparse, serialize_many_sparse,
                                   serialize_sparse)
from .api_strings import decode_base64, encode_base64
from .gfile import io_gfile_namespace
from .module_namespace import namespace
from .record_compression import TFRecordCompressionType, TFRecordOptions
from .tfrecord import TFRecordWriter, tf_record_iterator

# TF1's top-level names (tf.parse_example, tf.decode_csv, tf.FixedLenFeature, ...)
_TOP_LEVEL = {"decode_json_example": decode_json_example,
              **{n: getattr(api_parsing, n) for n in api_parsing.__all__},
              **{n: getattr(api_io_ops, n) for n in api_io_ops.__all__
                 if n != "decode_padded_raw"}}

# TF1's queues, in tf.io and tf.queue
_QUEUES = {n: getattr(queues, n) for n in ("FIFOQueue", "PaddingFIFOQueue", "PriorityQueue",
                                           "QueueBase", "RandomShuffleQueue")}

_IO_NAMES = {**{n: getattr(api_parsing, n) for n in api_parsing.__all__},
             **{n: getattr(api_io_ops, n) for n in api_io_ops.__all__},
             "decode_base64": decode_base64, "encode_base64": encode_base64,
             "TFRecordOptions": TFRecordOptions,
             "TFRecordCompressionType": TFRecordCompressionType,
             "TFRecordWriter": TFRecordWriter, "tf_record_iterator": tf_record_iterator,
             **_QUEUES,
             "gfile": io_gfile_namespace, "decode_json_example": decode_json_example,
             "serialize_sparse": serialize_sparse,
             "serialize_many_sparse": serialize_many_sparse,
             "deserialize_many_sparse": deserialize_many_sparse,
             **{n: getattr(image, n) for n in ("decode_image", "decode_jpeg", "decode_png",
                                               "encode_png", "is_jpeg", "extract_jpeg_shape",
                                               "decode_gif", "decode_bmp", "encode_jpeg",
                                               "decode_and_crop_jpeg")
                if hasattr(image, n)}}

io = namespace("io", "TF1's tf.io: Example parsing, TFRecord files, file and CSV / raw-bytes "
               "decoding, tensor protos, queues, image codecs, gfile.", _IO_NAMES)

queue = namespace("queue", "TF1's tf.queue: the queue classes.", _QUEUES)

globals().update(_TOP_LEVEL)
__all__ = sorted(_TOP_LEVEL) + ["io", "queue"]
