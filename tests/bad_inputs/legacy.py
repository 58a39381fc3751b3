"""The bad inputs of callables without declared rules, chosen from each argument's valid
value and its name (once a callable declares its rules next to its parameters, its names
leave these sets): a float, a bool or a negative (or zero count) for an integer; NaN,
inf, zero and negative (as floats and as tensors) for a real; an unknown string; an
integer dtype; an integer tensor, or a NaN in it, for a floating one, and a negative
entry in an integer one (no value mutations on a per-step hot path, :data:`HOT_PATHS`);
the same inside each tensor of a tuple batch; a plain tuple for a record (NamedTuple)
and a string for a model or another object of the package; a frame without rows, without
columns, or a dict instead; an empty mapping; a string for a callable; a float, NaN or
unknown entry in a list."""

from __future__ import annotations

import math

import pandas as pd
import torch

BAD = "bogus"

# Tensors of any dtype (a shard of labels is a shard): no "integer tensor" case.
ANY_DTYPE = {
    "checks.check_finite",
}

# Per-callable values of a hot path: a loss's values are not checked (no device
# synchronisation per step), so NaN and inf propagate, as their docstrings say.
HOT_PATHS = {
    # the per-step losses of one seed (under vmap): their batch's dtypes are checked
    "curl.block_contrastive_loss",
    "curl.cross_entropy_loss",
    "multineg.contrastive_loss",
    "multineg.triplet_objective",
    "wen.triplet_loss",
    # their dtype check (never values, by design)
    "checks.check_batch",
}
HOT_PATHS |= {
    # Lemma A.1's bounds: smooth_max's values are not read
    "symbolic.smooth_max_bounds",
    # Chapter 5's per-step loss of every stacked member (vmapped)
    "supervised_approx.run_loss",
}
VALUES_UNCHECKED = {
    "checks.check_tensor.value": "checks shapes and dtypes only, by design",
    **{
        f"multimodal.balance_lower_bound.{argument}": "recorded along training: NaN "
        "propagates"
        for argument in ("kappa", "noise")
    },
}
"""Arguments (callable.argument) whose values are not checked, with the reason."""

COUNT_NAMES = {"k", "total", "largest", "depth", "dim"}
"""Integer arguments (besides ``n_*`` and ``*_size``) for which 0 is not allowed."""
NON_NEGATIVE_INTS = {
    "seed",
    "dim",
    "padding",
    "depth",
    "checks.check_frame.min_rows",
    "symbolic.smoothness_table.n_steps",
}
"""Integer arguments that may be 0 (or, for ``dim``, negative: a Python index); a name,
or callable.name."""
POSITIVE_REALS = {
    "alpha",
    "beta",
    "imbalance_ratio",
    "lr",
    "noise_std",
    "radius",
    "checks.check_positive.value",
    "checks.check_positive_or_scalar_tensor.value",
}
"""Real arguments that must be > 0 (a name, or callable.name)."""
NON_NEGATIVE_REALS = {
    "weight_decay",
}
"""Real arguments that may be 0 but not negative (they take precedence)."""
FREE_STRINGS = {
    "name",
    "labels_name",
    "multineg.descent_sweep.parameter",
    "plotting.markers.values",
}
"""String arguments that are not a choice among known values."""


def mutations(callable_name, name, value, hot_path, any_dtype):
    """[(label, bad value)] for argument ``name`` of ``callable_name`` whose valid value
    is ``value``."""
    cases = []
    if isinstance(value, bool):
        return cases
    if isinstance(value, int):
        cases += [("float for int", 2.5), ("bool for int", True)]
        non_negative = bool({name, f"{callable_name}.{name}"} & NON_NEGATIVE_INTS)
        if not non_negative:
            cases.append(("negative", -1))
        if (
            name.startswith("n_") or name.endswith("_size") or name in COUNT_NAMES
        ) and not non_negative:
            cases.append(("zero count", 0))
    elif isinstance(value, float):
        cases += [("nan", math.nan), ("inf", math.inf)]
        keys = {name, f"{callable_name}.{name}"}
        if keys & (POSITIVE_REALS | NON_NEGATIVE_REALS):
            cases += [("negative", -1.0), ("negative tensor", torch.tensor(-1.0))]
        if keys & POSITIVE_REALS and not keys & NON_NEGATIVE_REALS:
            cases += [("zero", 0.0), ("zero tensor", torch.tensor(0.0))]
    elif isinstance(value, str):
        if not {name, f"{callable_name}.{name}"} & FREE_STRINGS:
            cases.append(("unknown choice", BAD))
    elif isinstance(value, torch.dtype):
        cases.append(("integer dtype", torch.int64))
    elif hasattr(value, "_fields") and not isinstance(value, type):
        cases.append((f"not a {type(value).__name__}", tuple(value)))
    elif isinstance(value, (list, tuple)) and value and isinstance(value[0], int):
        cases.append(("float in int list", type(value)([0.5, *value[1:]])))
    elif isinstance(value, (list, tuple)) and value and isinstance(value[0], float):
        if f"{callable_name}.{name}" not in VALUES_UNCHECKED:
            cases.append(("nan in list", type(value)([math.nan, *value[1:]])))
    elif isinstance(value, (list, tuple)) and value and isinstance(value[0], str):
        if not {name, f"{callable_name}.{name}"} & FREE_STRINGS:
            cases.append(("unknown entry", type(value)([BAD, *value[1:]])))
    elif isinstance(value, list) and value and isinstance(value[0], tuple):
        cases += [
            (f"{name}[0] {label}", [bad, *value[1:]])
            for label, bad in mutations(
                callable_name, f"{name}[0]", value[0], hot_path, any_dtype
            )
        ]
    elif isinstance(value, tuple) and any(isinstance(e, torch.Tensor) for e in value):
        cases += tuple_mutations(callable_name, name, value, hot_path, any_dtype)
    elif isinstance(value, pd.DataFrame):
        cases += [
            ("no rows", value.iloc[:0]),
            ("no columns", value.iloc[:, :0]),
            ("not a DataFrame", value.to_dict("list")),
        ]
    elif isinstance(value, dict) and value:
        cases.append(("empty mapping", {}))
    elif type(value).__module__.startswith("ccl_helpers."):
        cases.append((f"not a {type(value).__name__}", BAD))
    elif callable(value) and not isinstance(value, (type, torch.nn.Module)):
        cases.append(("not callable", BAD))
    elif isinstance(value, torch.Tensor):
        if value.is_floating_point():
            if not any_dtype:
                cases.append(("integer tensor", value.round().long()))
            if not hot_path and f"{callable_name}.{name}" not in VALUES_UNCHECKED:
                nan = value.clone()
                nan.view(-1)[0] = math.nan
                cases.append(("nan tensor", nan))
        elif (
            value.numel()
            and not hot_path
            and f"{callable_name}.{name}" not in VALUES_UNCHECKED
        ):
            negative = value.clone()
            negative.view(-1)[0] = -1
            cases.append(("negative entry", negative))
    return cases


def tuple_mutations(callable_name, name, value, hot_path, any_dtype):
    """The tensor mutations of each tensor of a tuple ``value`` (a batch), one at a
    time; the element is named ``name[i]``."""
    cases = []
    for i, element in enumerate(value):
        if isinstance(element, torch.Tensor):
            cases += [
                (f"{name}[{i}] {label}", (*value[:i], bad, *value[i + 1 :]))
                for label, bad in mutations(
                    callable_name, f"{name}[{i}]", element, hot_path, any_dtype
                )
            ]
    return cases
