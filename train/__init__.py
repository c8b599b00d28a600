"""Graph building, autodiff, optimizers, control flow, queues, the Session executor and checkpoints."""
