"""Graph building, autodiff, optimizers, control flow, queues, the Session executor and checkpoints.

`og.train.*` holds the optimizers, schedules, clipping functions and the checkpoint
Saver; the graph-building API itself is re-exported at the top level (`og.placeholder`,
`og.gradients`, `og.nn`, ...).
"""

from .optimizers import (SGD, AdaGrad, Adam, AdamOptimizer, AdamW, GradientDescentOptimizer,
                         Momentum, Optimizer, RMSProp, clip_by_global_norm, clip_by_norm,
                         cosine_decay, cosine_decay_restarts, exponential_decay, global_norm,
                         linear_cosine_decay, piecewise_constant)
from .optimizers_tf1 import (AdadeltaOptimizer, AdagradOptimizer, MomentumOptimizer,
                             RMSPropOptimizer, inverse_time_decay, natural_exp_decay,
                             polynomial_decay)
from .saver import Saver, checkpoints, latest_checkpoint
from .variables import get_or_create_global_step

__all__ = ["SGD", "AdaGrad", "Adam", "AdamOptimizer", "AdamW", "GradientDescentOptimizer",
           "Momentum", "Optimizer", "RMSProp", "clip_by_global_norm", "clip_by_norm",
           "cosine_decay", "cosine_decay_restarts", "exponential_decay",
           "get_or_create_global_step", "global_norm", "linear_cosine_decay",
           "piecewise_constant", "Saver", "checkpoints", "latest_checkpoint",
           "AdadeltaOptimizer", "AdagradOptimizer", "MomentumOptimizer", "RMSPropOptimizer",
           "inverse_time_decay", "natural_exp_decay", "polynomial_decay"]
