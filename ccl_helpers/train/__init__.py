"""The one training loop of the book, and several seeds trained at once.

:func:`loop` runs gradient descent or Adam for every chapter: minibatch or full
batch, a piecewise-constant schedule of the step size and of the inverse temperature β
(with Ren & Li's 1/β step rescaling), per-step and checkpoint records, a stopping
target, several seeds at once. It returns the book's one history format: a long frame
(step, seed, quantity, value), with a β column under a β schedule and the runs'
configuration columns where runs differ in more than their seed (:func:`wide` is its
one view for plotting).
Seeds are stacked along a leading axis (:class:`StackedModel`, forward passes
vectorised with ``torch.func.vmap``; :meth:`StackedModel.from_seeds` for members that
share seeds, :meth:`StackedModel.subset` for some of them); because the seeds' losses
are summed and the optimiser acts elementwise, each seed follows exactly the trajectory
it would follow if trained alone.

:func:`train` (minibatch, freshly sampled batches) and :func:`gradient_descent` (full
batch on a fixed training set: loss, gradient norm, movement from initialisation) are
its two uses on a :class:`StackedModel`; Wen's Algorithm 1, Ren & Li's Algorithm 3.1
and the DDP path drive it with their own :class:`Evaluation`.
"""

from . import _loop
from ._loop import OPTIMIZERS, Evaluation, check_stages, loop
from ._minibatch_and_descent import (
    TARGETS,
    Descent,
    gradient_descent,
    log_spaced_steps,
    train,
    wide,
)
from ._stacked import Forward, StackedModel, combined_norm, member_norms

Stages = _loop.Stages
"""A piecewise-constant schedule [(value, steps), …], stage by stage (``lr_factor`` and
``beta`` of :func:`loop`)."""

__all__ = [
    "OPTIMIZERS",
    "Descent",
    "TARGETS",
    "Evaluation",
    "Forward",
    "Stages",
    "StackedModel",
    "check_stages",
    "combined_norm",
    "gradient_descent",
    "log_spaced_steps",
    "loop",
    "member_norms",
    "train",
    "wide",
]
