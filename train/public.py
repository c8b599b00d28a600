"""Everything `import onegraph as og` exposes from the training half, in one namespace.

`onegraph.__getattr__` looks names up here on first use, so `import onegraph` stays
light (numpy + flatbuffers) until a graph is built.
"""

from __future__ import annotations

from . import data, image, layers, losses, metrics, nn, summary
from .api import *  # noqa: F401,F403 - the public building functions
from .api import __all__ as _api_all
from .api_extra import *  # noqa: F401,F403 - more TF1-named building functions
from .api_extra import __all__ as _api_extra_all
from .api_math import *  # noqa: F401,F403 - TF1's math and array compositions
from .api_math import __all__ as _api_math_all
from .api_random import multinomial, random_crop, random_shuffle
from .api_compat import *  # noqa: F401,F403 - TF1's casts, divisions, asserts, segments
from .api_compat import __all__ as _api_compat_all
from .api_linalg import *  # noqa: F401,F403 - TF1's matrix functions and og.linalg
from .api_linalg import __all__ as _api_linalg_all
from .api_linalg_solve import *  # noqa: F401,F403 - inverse, solves, decompositions
from .api_linalg_solve import __all__ as _api_linalg_solve_all
from . import api_linalg_more  # noqa: F401 - og.linalg.lu, lu_solve, expm, sqrtm, ...
from .api_random_more import random_gamma, random_poisson
from .api_special import *  # noqa: F401,F403 - TF1's lgamma, digamma, igamma, betainc, ...
from .api_special import __all__ as _api_special_all
from .api_strings import *  # noqa: F401,F403 - TF1's string functions and og.strings
from .api_strings import __all__ as _api_strings_all
from .api_partition import *  # noqa: F401,F403 - dynamic_partition/stitch, batch_gather
from .api_partition import __all__ as _api_partition_all
from .api_tf1_extra import *  # noqa: F401,F403 - histograms, bitcast, og.bitwise, ...
from .api_tf1_extra import __all__ as _api_tf1_extra_all
from .api_tf1_more import *  # noqa: F401,F403 - og.print, Print, hessians, switch_case, ...
from .api_tf1_more import __all__ as _api_tf1_more_all
from .api_sparse import *  # noqa: F401,F403 - og.SparseTensor, og.sparse, sparse_add, ...
from .api_sparse import __all__ as _api_sparse_all
from . import image_more  # noqa: F401 - og.image's PNG codec, NMS variants, resize_area, ...
from .api import tuple_ as tuple  # noqa: A004 - TF1's og.tuple
from .api import bool_ as bool  # noqa: A004 - TF1's og.bool dtype
from .control_flow import case, cond, foldl, map_fn, scan, while_loop
from .debugging import *  # noqa: F401,F403 - Assert, check_numerics, assert_*
from .debugging import __all__ as _debugging_all
from .gradients import (AggregationMethod, IndexedSlices, IndexedSlicesValue, RegisterGradient,
                        UnconnectedGradients, custom_gradient, gradient_override_map,
                        gradients)
from .nn import set_random_seed
from .nn_extra import depth_to_space, space_to_depth
from .queues import FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue
from .readers import *  # noqa: F401,F403 - TF1's TFRecordReader, TextLineReader, ...
from .readers import __all__ as _readers_all
from .optimizers import clip_by_global_norm, clip_by_norm, global_norm
from .session import InteractiveSession, Session, get_default_session
from .session_config import *  # noqa: F401,F403 - ConfigProto, GPUOptions, RunOptions, ...
from .session_config import __all__ as _session_config_all
from .state_ops import *  # noqa: F401,F403 - assign, assign_add, assign_sub, scatter_add
from .state_ops import __all__ as _state_all
from . import initializers
from .initializers import (constant_initializer, glorot_normal_initializer,
                           glorot_uniform_initializer, ones_initializer, orthogonal_initializer,
                           random_normal_initializer, random_uniform_initializer,
                           truncated_normal_initializer, uniform_unit_scaling_initializer,
                           variance_scaling_initializer, zeros_initializer)
from .variable_scope import (AUTO_REUSE, VariableScope, get_local_variable,
                             get_variable, get_variable_scope, no_regularizer,
                             variable_scope)
from .variables import (VariableAggregation, VariableSynchronization, model_variables,
                        moving_average_variables)

from .namespaces import make_math, make_random

math = make_math(globals(), nn)       # TF1's tf.math names
random = make_random(globals())       # TF1's tf.random names
from .tensor_array import TensorArray  # noqa: E402 - TF1's loop accumulator
from .event_file import SessionLog  # noqa: E402 - TF1's tf.SessionLog
from .summary_proto import Event, HistogramProto, Summary  # noqa: E402 - TF1's protos
from .template import Template, make_template  # noqa: E402 - TF1's variable sharing
from .api_py_func import numpy_function, py_func  # noqa: E402 - Python functions as nodes
from .tfrecord import python_io  # noqa: E402 - TF1's TFRecord writer and reader
from .api_io import *  # noqa: E402,F401,F403 - og.io and TF1's parse_example, decode_csv, ...
from .api_io import __all__ as _api_io_all  # noqa: E402
from . import lookup  # noqa: E402 - og.lookup (TF1's tf.lookup / tf.contrib.lookup tables)
from .lookup import tables_initializer  # noqa: E402 - TF1's tf.tables_initializer
from .gfile import gfile_namespace as gfile  # noqa: E402 - TF1's tf.gfile
from .tf_logging import logging_namespace as logging  # noqa: E402 - TF1's tf.logging
from .app_flags import app_namespace as app, flags_namespace as flags  # noqa: E402
from .api_sets import sets  # noqa: E402 - TF1's tf.sets
from . import feature_column  # noqa: E402,F401 - TF1's tf.feature_column
from .graph_def import AttrValue, GraphDef, NodeDef  # noqa: E402 - TF's graph protos
from .graph_def_import import import_graph_def  # noqa: E402 - TF1 frozen graphs into og
from .api_tf1_odds import *  # noqa: E402,F401,F403 - sparse_segment_*, unravel_index, ...
from .api_tf1_odds import __all__ as _api_tf1_odds_all  # noqa: E402
from .debugging_more import *  # noqa: E402,F401,F403 - assert_rank_in, verify_tensor_all_finite
from .debugging_more import __all__ as _debugging_more_all  # noqa: E402
from .api_tf1_names import *  # noqa: E402,F401,F403 - space_to_batch, get_seed, init_scope, ...
from .api_tf1_names import __all__ as _api_tf1_names_all  # noqa: E402
from .nest import nest  # noqa: E402 - TF's tf.nest
from .distributions import distributions  # noqa: E402 - TF1's tf.distributions
from .api_io import queue  # noqa: E402 - TF1's tf.queue
from .saved_model import saved_model  # noqa: E402 - TF1's tf.saved_model over .og files
from .tensor_proto import make_ndarray, make_tensor_proto  # noqa: E402 - TF's TensorProto
from .api_sparse_serialize import (deserialize_many_sparse, serialize_many_sparse,  # noqa: E402
                                   serialize_sparse)
from .gradients import NoGradient, NotDifferentiable, no_gradient  # noqa: E402

__all__ = sorted(
    set(_api_all) | set(_api_extra_all) | set(_api_math_all) | set(_debugging_all)
    | set(_state_all) | set(_api_compat_all) | set(_api_linalg_all)
    | set(_api_linalg_solve_all) | set(_api_special_all) | set(_api_strings_all)
    | set(_api_partition_all) | set(_api_tf1_extra_all) | set(_session_config_all)
    | set(_api_tf1_more_all) | set(_api_sparse_all) | set(_api_io_all)
    | set(_api_tf1_odds_all) | set(_debugging_more_all) | set(_api_tf1_names_all)
    | set(_readers_all) | {
    "random_gamma", "random_poisson", "TensorArray",
    "bool", "math", "random", "case", "clip_by_global_norm", "clip_by_norm", "global_norm",
    "tuple", "cond", "foldl", "map_fn", "scan", "while_loop", "FIFOQueue", "IndexedSlices",
    "AggregationMethod", "UnconnectedGradients",
    "IndexedSlicesValue", "InteractiveSession", "RandomShuffleQueue", "RegisterGradient",
    "Session", "custom_gradient",
    "get_default_session", "gradient_override_map", "gradients", "image", "layers", "losses",
    "metrics", "nn", "set_random_seed", "summary", "Summary", "Event", "HistogramProto",
    "SessionLog", "Template", "make_template", "numpy_function", "py_func", "data",
    "python_io", "summary", "lookup", "tables_initializer", "gfile", "logging", "app", "flags",
    "sets", "feature_column", "AttrValue", "GraphDef", "NodeDef", "import_graph_def",
    "nest", "NoGradient", "NotDifferentiable", "no_gradient", "distributions",
    "PaddingFIFOQueue", "PriorityQueue", "QueueBase", "queue", "saved_model",
    "make_ndarray", "make_tensor_proto", "deserialize_many_sparse", "serialize_many_sparse",
    "serialize_sparse",
    "depth_to_space", "space_to_depth", "multinomial", "random_crop", "random_shuffle",
    "AUTO_REUSE", "VariableScope", "get_variable", "get_variable_scope", "variable_scope",
    "get_local_variable", "no_regularizer", "VariableAggregation", "VariableSynchronization",
    "model_variables", "moving_average_variables",
    "initializers", "constant_initializer", "glorot_normal_initializer",
    "glorot_uniform_initializer", "ones_initializer", "orthogonal_initializer",
    "random_normal_initializer", "random_uniform_initializer",
    "truncated_normal_initializer", "variance_scaling_initializer", "zeros_initializer",
    "uniform_unit_scaling_initializer",
})
