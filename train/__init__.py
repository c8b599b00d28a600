"""Graph building, autodiff, optimizers, control flow, queues, the Session executor and checkpoints.

`og.train.*` holds the optimizers, schedules, clipping functions, moving averages, the
global step, the queue runners and input pipelines, and the checkpoint Saver; the
graph-building API itself is re-exported at the top level (`og.placeholder`,
`og.gradients`, `og.nn`, ...).
"""

# nn.py and metrics.py re-export their satellite modules (nn_ops, nn_extra, nn_more,
# nn_sampled, rnn, ...; metrics_at_k, metrics_more), which import helpers back from
# them: the hubs must run first, or `import onegraph.train.nn_more` in a fresh process
# stops on the half-initialised cycle. Importing them here, when the package loads,
# fixes that order for every entry point (about 60 ms on top of the package's own).
from . import metrics as _metrics_hub, nn as _nn_hub

del _metrics_hub, _nn_hub  # only their loading mattered

from .optimizers import (SGD, AdaGrad, Adam, AdamOptimizer, AdamW, GradientDescentOptimizer,
                         Momentum, Optimizer, RMSProp, clip_by_global_norm, clip_by_norm,
                         cosine_decay, cosine_decay_restarts, exponential_decay, global_norm,
                         linear_cosine_decay, piecewise_constant)
from .optimizers_tf1 import (AdadeltaOptimizer, AdagradOptimizer, MomentumOptimizer,
                             RMSPropOptimizer, inverse_time_decay, natural_exp_decay,
                             polynomial_decay)
from .training_util import (assert_global_step, create_global_step, get_global_step,
                            global_step)
from .moving_average import ExponentialMovingAverage
from .optimizers import piecewise_constant as piecewise_constant_decay  # TF1's alias
from .optimizers_ftrl import (FtrlOptimizer, ProximalAdagradOptimizer,
                              ProximalGradientDescentOptimizer, noisy_linear_cosine_decay)
from .input_pipeline import (batch, batch_join, input_producer, limit_epochs,
                             range_input_producer, shuffle_batch, shuffle_batch_join,
                             slice_input_producer, string_input_producer)
from .input_pipeline_maybe import (maybe_batch, maybe_batch_join, maybe_shuffle_batch,
                                   maybe_shuffle_batch_join)
from .queue_runner import Coordinator, QueueRunner, add_queue_runner, start_queue_runners
from .saver import Saver, checkpoints, latest_checkpoint
from .variables import get_or_create_global_step
from .session_run_hook import (SessionRunArgs, SessionRunContext, SessionRunHook,
                               SessionRunValues)
from .basic_session_run_hooks import (CheckpointSaverHook, CheckpointSaverListener,
                                      FeedFnHook, FinalOpsHook, LoggingTensorHook,
                                      NanLossDuringTrainingError, NanTensorHook,
                                      NeverTriggerTimer, SecondOrStepTimer,
                                      StepCounterHook, StopAtStepHook, SummarySaverHook)
from .checkpoint_utils import (CheckpointReader, CheckpointState, NewCheckpointReader,
                               checkpoint_exists, checkpoints_iterator,
                               get_checkpoint_mtimes, get_checkpoint_state, list_variables,
                               load_checkpoint, load_variable, remove_checkpoint)
from .summary_proto import summary_iterator
from .example_proto import (BytesList, Example, Feature, FeatureList, FeatureLists, Features,
                            FloatList, Int64List, SequenceExample)
from .warm_start import init_from_checkpoint, warm_start
from .monitored_session import (ChiefSessionCreator, MonitoredSession,
                                MonitoredTrainingSession, Scaffold, SessionCreator,
                                SingularMonitoredSession, WorkerSessionCreator)
from .session_manager import SessionManager
from .checkpoint_state import generate_checkpoint_state_proto, update_checkpoint_state
from .optimizers_adagrad_da import AdagradDAOptimizer
from .train_more import (GlobalStepWaiterHook, LooperThread, ProfilerHook, VocabInfo,
                         basic_train_loop, match_filenames_once)
from .meta_graph import import_meta_graph
from .distributed import (ClusterSpec, Server, Supervisor, SyncReplicasOptimizer,
                          replica_device_setter)

__all__ = ["SGD", "AdaGrad", "Adam", "AdamOptimizer", "AdamW", "GradientDescentOptimizer",
           "Momentum", "Optimizer", "RMSProp", "clip_by_global_norm", "clip_by_norm",
           "cosine_decay", "cosine_decay_restarts", "exponential_decay",
           "get_or_create_global_step", "global_norm", "linear_cosine_decay",
           "piecewise_constant", "Saver", "checkpoints", "latest_checkpoint",
           "AdadeltaOptimizer", "AdagradOptimizer", "MomentumOptimizer", "RMSPropOptimizer",
           "inverse_time_decay", "natural_exp_decay", "polynomial_decay",
           "ExponentialMovingAverage", "FtrlOptimizer", "ProximalAdagradOptimizer",
           "ProximalGradientDescentOptimizer", "assert_global_step", "create_global_step",
           "get_global_step", "global_step", "noisy_linear_cosine_decay",
           "piecewise_constant_decay", "Coordinator", "QueueRunner", "add_queue_runner",
           "start_queue_runners", "batch", "batch_join", "input_producer", "limit_epochs",
           "range_input_producer", "shuffle_batch", "shuffle_batch_join",
           "slice_input_producer", "string_input_producer", "SessionRunArgs",
           "SessionRunContext", "SessionRunHook", "SessionRunValues", "CheckpointSaverHook",
           "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook", "LoggingTensorHook",
           "NanLossDuringTrainingError", "NanTensorHook", "NeverTriggerTimer",
           "SecondOrStepTimer", "StepCounterHook", "StopAtStepHook", "ChiefSessionCreator",
           "MonitoredSession", "MonitoredTrainingSession", "Scaffold", "SessionCreator",
           "SingularMonitoredSession", "WorkerSessionCreator", "CheckpointReader",
           "NewCheckpointReader", "checkpoint_exists", "get_checkpoint_mtimes",
           "list_variables", "load_checkpoint", "load_variable", "CheckpointState",
           "checkpoints_iterator", "get_checkpoint_state", "remove_checkpoint",
           "maybe_batch", "maybe_batch_join", "maybe_shuffle_batch",
           "maybe_shuffle_batch_join", "init_from_checkpoint", "warm_start",
           "SummarySaverHook", "summary_iterator", "BytesList", "Example", "Feature",
           "FeatureList", "FeatureLists", "Features", "FloatList", "Int64List",
           "SequenceExample",
           "SessionManager", "generate_checkpoint_state_proto", "update_checkpoint_state",
           "AdagradDAOptimizer", "GlobalStepWaiterHook", "LooperThread", "ProfilerHook",
           "VocabInfo", "basic_train_loop", "match_filenames_once", "ClusterSpec", "Server",
           "Supervisor", "SyncReplicasOptimizer", "replica_device_setter",
           "import_meta_graph"]
