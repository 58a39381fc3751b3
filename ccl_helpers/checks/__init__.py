"""Argument checks that raise ``ValueError`` naming the argument and its range.

Shared by the whole package: each error message names the argument and the allowed
range.

Two layers:

- The checkers (``check_int``, ``check_positive``, ``check_tensor``, …): each returns
  the checked value or raises ``ValueError`` naming the argument and what is allowed.
- Rules declared once, next to the parameters, with the :func:`checked` decorator::

      @checked(
          anchor=TensorOf(min_ndim=1, floating=True),
          positive=TensorOf(min_ndim=1, floating=True, like="anchor"),
          temperature=Positive(),
          reduction=Choice(REDUCTIONS),
      )
      def info_nce_loss(anchor, positive, negatives, temperature=1.0, ...): ...

  A :class:`Rule` (:class:`Positive`, :class:`Int`, :class:`Choice`,
  :class:`TensorOf`, :class:`Probabilities`, …) both checks the argument at the call
  and describes it: :func:`declarations` reads a function's rules back, and each rule
  lists the values it must reject (:meth:`Rule.bad_values`), from which the API-wide
  bad-input test builds its cases. Renaming a parameter renames its rule with it.

Where checks run:

- Public functions check their arguments, at the entry, once.
- Private functions (``_name``) trust their callers.
- Hot paths (a loss or a gradient evaluated at every training step, often under
  ``torch.func.vmap``) check metadata only: dtype, number of dimensions, shapes that
  must agree. They never read values (no NaN scan, no device synchronisation), so
  **a NaN or an inf in their inputs propagates** to their result. A rule that reads
  values (:class:`TensorOf` with ``finite=True``, :class:`Probabilities`) says so
  (:attr:`Rule.reads_values`) and is declared on evaluations and samplers only.

Dtypes: tensors that enter one computation (a loss's embeddings, a probe's training
and evaluation features) must share a dtype; nothing is promoted, except under
``torch.autocast``, which chooses the computation's dtype itself. A mixture raises a
``ValueError`` at the entry naming both arguments and their dtypes (a metadata check:
``TensorOf(same_dtype_as=...)``).

Empty sets: an evaluation needs at least one example; ``Labels(min_size=1)`` or
``TensorOf(min_size=1)`` (the size along the sample axis) rejects an empty set at the
entry with "must hold at least 1 example".

Sizes: where a size argument decides the memory or the time of a call (a number of
seeds, a batch size, a width, a number of steps, the rows of an O(n²) computation), an
estimate from the arguments alone is declared next to the parameters
(``n_seeds=Sized(Int(), estimate)``, ``n_steps=Steps()``) and checked before anything
is allocated or run, against one of two limits, both in ``checks._limits`` and both
lifted by an environment variable:

- the bytes of an :class:`Estimate`, against :func:`memory_limit` (256 GiB;
  ``CCL_MEMORY_LIMIT``);
- a lower bound on the seconds, a :class:`Duration` or a :class:`Steps` count, against
  :func:`time_limit` (24 h; ``CCL_TIME_LIMIT``).

Above its limit, the call raises a ``ValueError`` naming the arguments, the amount and
the variable. A check whose amount depends on more than the declared sizes (a value
read in the body) calls :func:`check_planned`, with the same message and limits.

A new kind of bad input is one rule: a size estimated against a limit before anything
is allocated or run, an empty set, a negative index, an unknown code, a mixture of
dtypes each become a :class:`Rule` subclass (or one more entry of a rule's
``bad_values``) declared where the argument is, and the bad-input test covers it with no
change of its own.
"""

from ._declare import checked, declarations, estimated_bytes
from ._devices import check_available, mps_available
from ._limits import (
    MEMORY_LIMIT_VARIABLE,
    SECONDS_PER_STEP,
    SECONDS_PER_SYMBOLIC_TERM,
    TIME_LIMIT_VARIABLE,
    Duration,
    Estimate,
    check_planned,
    memory_limit,
    time_limit,
)
from ._rules import (
    HUGE,
    UNKNOWN,
    BadValue,
    Choice,
    Device,
    FloatingDtype,
    Frame,
    Function,
    Instance,
    Int,
    Labels,
    OpenUnit,
    Optional,
    Positive,
    PositiveOrScalarTensor,
    Probabilities,
    Rule,
    Sized,
    Sizes,
    Steps,
    TensorOf,
)
from ._values import (
    check_batch,
    check_callable,
    check_choice,
    check_classes,
    check_device,
    check_feature_dims,
    check_features,
    check_finite,
    check_finite_real,
    check_floating_dtype,
    check_frame,
    check_inputs,
    check_instance,
    check_int,
    check_labels,
    check_positive,
    check_positive_or_scalar_tensor,
    check_probabilities,
    check_same_shape,
    check_steps,
    check_tensor,
)

__all__ = [
    "HUGE",
    "MEMORY_LIMIT_VARIABLE",
    "SECONDS_PER_STEP",
    "SECONDS_PER_SYMBOLIC_TERM",
    "TIME_LIMIT_VARIABLE",
    "UNKNOWN",
    "BadValue",
    "Choice",
    "Device",
    "Duration",
    "Estimate",
    "FloatingDtype",
    "Frame",
    "Function",
    "OpenUnit",
    "Instance",
    "Int",
    "Labels",
    "Optional",
    "Positive",
    "PositiveOrScalarTensor",
    "Probabilities",
    "Rule",
    "Sized",
    "Sizes",
    "Steps",
    "TensorOf",
    "check_available",
    "check_batch",
    "check_callable",
    "check_choice",
    "check_classes",
    "check_device",
    "check_feature_dims",
    "check_features",
    "check_finite",
    "check_finite_real",
    "check_floating_dtype",
    "check_frame",
    "check_inputs",
    "check_instance",
    "check_int",
    "check_labels",
    "check_planned",
    "check_positive",
    "check_positive_or_scalar_tensor",
    "check_probabilities",
    "check_same_shape",
    "check_steps",
    "check_tensor",
    "checked",
    "declarations",
    "estimated_bytes",
    "memory_limit",
    "mps_available",
    "time_limit",
]
