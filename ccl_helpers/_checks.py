"""Plain argument checks, called once at the top of a public function.

Each ``check_*`` returns the checked (sometimes converted) value or raises
``ValueError`` naming the argument and what is allowed, with the fix where there is an
obvious one. Private and per-step functions trust their callers; a per-step loss
checks metadata only (dtype, dimensions, shapes that must agree), never values, so
that it stays safe under ``torch.func.vmap`` and costs no device synchronisation.
Sizes are not estimated: a size that does not fit fails in torch's own allocation.
Only a count that explodes without an allocation to fail on (C(N, m) tasks, sets of
negatives, sympy expansions, Python loops) is guarded, by :func:`check_count`.
"""

from __future__ import annotations

import math
import numbers
import operator

import torch


def mps_available() -> bool:
    """Whether Apple's MPS device is available."""
    return (
        getattr(torch.backends, "mps", None) is not None
        and torch.backends.mps.is_available()
    )


def available_devices() -> list[str]:
    """The devices this machine has, as a message lists them: ``cpu``, then ``cuda``
    (with its indices when there are several) and ``mps`` where present."""
    available = ["cpu"]
    if torch.cuda.is_available():
        count = torch.cuda.device_count()
        available.append(f"cuda (indices 0..{count - 1})" if count > 1 else "cuda")
    if mps_available():
        available.append("mps")
    return available


def is_available(device: torch.device | None) -> bool:
    """Whether this machine has ``device``: the CPU and ``meta`` (the device without
    data) always; CUDA when present, with an index below the device count; MPS when
    present; another type when its torch module says it is available; None (no
    device) never."""
    if device is None:
        return False
    if device.type in ("cpu", "meta"):
        return True
    if device.type == "cuda":
        return torch.cuda.is_available() and (
            device.index is None or device.index < torch.cuda.device_count()
        )
    if device.type == "mps":
        return mps_available()
    backend = getattr(torch, device.type, None)
    return bool(getattr(backend, "is_available", lambda: False)())


def check_available(name: str, device: torch.device | None, given=None) -> torch.device:
    """``device`` if this machine has it (``is_available``); else ValueError naming
    ``name`` and the devices available (``given``: the value as the user wrote it;
    ``device`` None where it names no device)."""
    if not is_available(device):
        raise ValueError(
            f"{name} must name a device available on this machine "
            f"({', '.join(available_devices())}), got "
            f"{device if given is None else given!r}"
        )
    return device


def check_positive(name: str, value, allow_zero: bool = False) -> float:
    """``value`` as a float if it is a finite real number (not a bool) > 0 (≥ 0 with
    ``allow_zero``); else ``ValueError`` naming ``name`` and the allowed range. Shared
    by every step size, temperature and scale."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value < 0
        or (value == 0 and not allow_zero)
    ):
        raise ValueError(
            f"{name} must be a finite real number {'≥ 0' if allow_zero else '> 0'}, "
            f"got {value!r}"
        )
    return float(value)


def check_int(name: str, value, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as an int if it is an integer (not a bool) in [minimum, maximum]; else
    ``ValueError`` naming ``name`` and the allowed range. Shared by the chapter modules'
    argument checks."""
    allowed = f"{minimum}..{maximum}" if maximum is not None else f"≥ {minimum}"
    try:
        if isinstance(value, bool):
            raise TypeError
        value = operator.index(value)
    except TypeError:
        raise ValueError(
            f"{name} must be an integer {allowed}, got {value!r}"
        ) from None
    if value < minimum or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be an integer {allowed}, got {value}")
    return value


def _shape_of(value) -> str:
    """How a bad argument is shown: a tensor's shape and dtype, else its type."""
    if isinstance(value, torch.Tensor):
        return f"shape {tuple(value.shape)}, dtype {value.dtype}"
    return type(value).__name__


def check_tensor(
    name: str,
    value,
    *,
    ndim: int | None = None,
    min_ndim: int = 0,
    floating: bool = False,
    integer: bool = False,
) -> torch.Tensor:
    """``value`` if it is a tensor with ``ndim`` dimensions (or ≥ ``min_ndim``), of a
    floating dtype with ``floating``, of an integer one with ``integer``; else
    ValueError.

    Checks shape and dtype only, never values: safe under ``torch.func.vmap`` and
    without a device synchronisation (:func:`check_finite` checks values)."""
    kind = "floating-point " if floating else "integer " if integer else ""
    wanted = f"{ndim}" if ndim is not None else f"at least {min_ndim}"
    if (
        not isinstance(value, torch.Tensor)
        or (floating and not value.is_floating_point())
        or (integer and (value.is_floating_point() or value.is_complex()))
        or (ndim is not None and value.ndim != ndim)
        or value.ndim < min_ndim
    ):
        raise ValueError(
            f"{name} must be {'an' if integer else 'a'} {kind}torch.Tensor with "
            f"{wanted} dimension(s), "
            f"got {_shape_of(value)}"
        )
    return value


def check_finite(name: str, tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` if all its entries are finite (no NaN, no ±inf); else ValueError."""
    if not bool(torch.isfinite(tensor).all()):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return tensor


def check_same_shape(
    name: str, tensor: torch.Tensor, reference_name: str, reference: torch.Tensor
) -> None:
    """``ValueError`` unless ``tensor`` has the shape of ``reference``."""
    if tensor.shape != reference.shape:
        raise ValueError(
            f"{name} must have the shape of {reference_name}, "
            f"{tuple(reference.shape)}, got {tuple(tensor.shape)}"
        )


def _under_autocast(device_type: str) -> bool:
    """Whether ``torch.autocast`` is on for ``device_type`` (off for a type autocast
    does not know; under ``torch.compile`` the availability check is skipped)."""
    if not torch.compiler.is_compiling() and not torch.amp.is_autocast_available(
        device_type
    ):
        return False
    return torch.is_autocast_enabled(device_type)


def check_same_dtype(
    name: str, tensor: torch.Tensor, reference_name: str, reference: torch.Tensor
) -> None:
    """``ValueError`` naming both arguments unless ``tensor`` has the dtype of
    ``reference``: tensors that enter one computation share a dtype (no promotion),
    except under ``torch.autocast``, which chooses the computation's dtype itself."""
    if tensor.dtype != reference.dtype and not _under_autocast(tensor.device.type):
        raise ValueError(
            f"{name} must have the dtype of {reference_name}, {reference.dtype}, got "
            f"{tensor.dtype}: convert one of them (tensors that enter one computation "
            "share a dtype)"
        )


def check_min_size(name: str, tensor: torch.Tensor, min_size: int, dim: int = 0):
    """``ValueError`` unless ``tensor`` holds at least ``min_size`` examples along its
    sample axis ``dim``."""
    if tensor.shape[dim] < min_size:
        raise ValueError(
            f"{name} must hold at least {min_size} example(s) along dimension {dim}, "
            f"got shape {tuple(tensor.shape)}"
        )


def check_choice(name: str, value, choices):
    """``value`` if it is one of ``choices``; else ``ValueError`` listing them."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def check_finite_real(name: str, value):
    """``value`` if it is a floating tensor with finite entries, ``float(value)`` if it
    is a finite real number (not a bool); else ValueError."""
    if isinstance(value, torch.Tensor):
        check_tensor(name, value, floating=True)
        return check_finite(name, value)
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
    ):
        raise ValueError(
            f"{name} must be a finite real number or tensor, got {value!r}"
        )
    return float(value)


def _transformed(value: torch.Tensor) -> bool:
    """Whether ``value`` is a tensor inside a ``torch.func`` transform (``vmap``,
    ``grad``), whose values cannot be read."""
    return torch._C._functorch.is_functorch_wrapped_tensor(value)


def check_positive_or_scalar_tensor(name: str, value):
    """``value`` if it is a 0-dim floating tensor > 0 and finite, else
    :func:`check_positive`'s float; else ``ValueError``. A tensor's value is read (one
    device synchronisation: a hyperparameter, not per-sample data), except inside a
    ``torch.func`` transform (``vmap``, ``grad``), where it may vary: unchecked."""
    if isinstance(value, torch.Tensor):
        check_tensor(name, value, ndim=0, floating=True)
        if not _transformed(value):
            check_positive(name, value.item())
        return value
    return check_positive(name, value)


def check_floating_dtype(name: str, value) -> torch.dtype:
    """``value`` if it is a floating-point ``torch.dtype``; else ``ValueError``."""
    if not isinstance(value, torch.dtype) or not value.is_floating_point:
        raise ValueError(f"{name} must be a floating-point torch.dtype, got {value!r}")
    return value


def check_probabilities(
    name: str, value, *, positive: bool = False, min_size: int = 2
) -> torch.Tensor:
    """``value`` if it is a floating vector ρ of ≥ ``min_size`` finite entries ≥ 0
    (> 0 with ``positive``) summing to 1 within 1e-5; else ValueError."""
    check_tensor(name, value, ndim=1, floating=True)
    if value.numel() < min_size:
        raise ValueError(
            f"{name} must hold at least {min_size} probabilities, got {value.numel()}"
        )
    check_finite(name, value)
    if bool((value <= 0).any() if positive else (value < 0).any()):
        raise ValueError(f"{name} must have entries {'> 0' if positive else '≥ 0'}")
    total = float(value.double().sum())
    if abs(total - 1.0) > 1e-5:
        raise ValueError(f"{name} must sum to 1, sums to {total:.6g}")
    return value


def check_classes(
    name: str, classes, *, ndim: int, n_classes: int | None = None
) -> torch.Tensor:
    """``classes`` if it is an int64 tensor of ``ndim`` dimensions with classes in
    0..``n_classes`` − 1 (≥ 0 without ``n_classes``, itself an integer ≥ 1); else
    ``ValueError``."""
    check_int(f"{name}: ndim", ndim)
    if n_classes is not None:
        check_int(f"{name}: n_classes", n_classes)
    check_tensor(name, classes, ndim=ndim, integer=True)
    if classes.dtype != torch.int64:  # uint8 and bool index as masks, not as classes
        raise ValueError(
            f"{name} must be torch.int64 (torch.long) classes, got {classes.dtype}: "
            f"pass {name}.long()"
        )
    if classes.numel() and (
        int(classes.min()) < 0
        or (n_classes is not None and int(classes.max()) >= n_classes)
    ):
        top = "N_C − 1" if n_classes is None else n_classes - 1
        raise ValueError(
            f"{name} must be classes in 0..{top}, got values in "
            f"{int(classes.min())}..{int(classes.max())}"
        )
    return classes


def check_labels(
    name: str, labels, *, n: int | None = None, n_classes: int | None = None
) -> torch.Tensor:
    """``labels`` if it is an integer vector (of length ``n``) of classes
    (:func:`check_classes`); else ``ValueError``."""
    check_classes(name, labels, ndim=1, n_classes=n_classes)
    if n is not None and labels.numel() != n:
        raise ValueError(f"{name} must hold n = {n} labels, got {labels.numel()}")
    return labels


def check_features(name: str, features, labels, labels_name: str = "labels") -> int:
    """Validate features (..., n, d) of a floating dtype with finite entries and their
    labels (n,), an integer vector of classes ≥ 0 (:func:`check_labels`); return n.

    Reads the features' values (one device synchronisation: for evaluations, not a
    training step), except inside a ``torch.func`` transform: unchecked there."""
    check_labels(labels_name, labels)
    n = labels.numel()
    if (
        not isinstance(features, torch.Tensor)
        or not features.is_floating_point()
        or features.ndim < 2
        or features.shape[-2] != n
    ):
        raise ValueError(
            f"{name} must be a floating-point tensor of shape (..., n, d) with "
            f"n = len({labels_name}) = {n}, got {_shape_of(features)}"
        )
    if not _transformed(features):
        check_finite(name, features)
    return n


def check_inputs(name: str, inputs, labels, labels_name: str = "labels") -> int:
    """Validate inputs (n, ...) of a floating dtype with finite entries (read once: data
    given to a sampler or an evaluation, not a training step) and their labels (n,), an
    integer vector of classes ≥ 0 (:func:`check_labels`); return n."""
    check_labels(labels_name, labels)
    n = labels.numel()
    check_tensor(name, inputs, min_ndim=1, floating=True)
    if inputs.shape[0] != n:
        raise ValueError(
            f"{name} must have n = len({labels_name}) = {n} rows, got "
            f"{_shape_of(inputs)}"
        )
    check_finite(name, inputs)
    return n


def check_feature_dims(
    name: str, features: torch.Tensor, reference_name: str, reference: torch.Tensor
) -> None:
    """``ValueError`` naming both arguments unless features (..., n', d) and reference
    (..., n, d) have the same dimension d and leading dimensions that broadcast."""
    try:
        if features.shape[-1] != reference.shape[-1]:
            raise RuntimeError
        torch.broadcast_shapes(features.shape[:-2], reference.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"{name} must have the feature dimension d and leading dimensions of "
            f"{reference_name}, (..., n, d) = {tuple(reference.shape)}, got "
            f"{tuple(features.shape)}"
        ) from None


def check_steps(name: str, steps, last: int | None = None) -> list[int]:
    """``steps`` as a list of ints if it is an iterable of integer steps (not bools) in
    0..``last`` (≥ 0 without ``last``); else ``ValueError`` naming ``name`` and the
    offending entry: a step out of range is an error, never dropped."""
    if isinstance(steps, (str, bytes)) or not hasattr(steps, "__iter__"):
        raise ValueError(f"{name} must be a sequence of integer steps, got {steps!r}")
    return [check_int(f"{name}[{i}]", step, 0, last) for i, step in enumerate(steps)]


def check_callable(name: str, value):
    """``value`` if it is callable (a function, a module, a model); else
    ``ValueError`` naming ``name``."""
    if not callable(value):
        raise ValueError(f"{name} must be callable, got {_shape_of(value)}")
    return value


def check_instance(name: str, value, cls: type):
    """``value`` if it is an instance of ``cls`` (e.g. a record such as
    :class:`~ccl_helpers.multimodal.DataModel`, built by the package's functions); else
    ``ValueError`` naming ``name`` and the class."""
    if not isinstance(value, cls):
        raise ValueError(
            f"{name} must be a {cls.__name__} (as the package's functions build it), "
            f"got {_shape_of(value)}"
        )
    return value


def check_frame(
    name: str, frame, columns=(), *, min_rows: int = 1, columns_from: str = ""
):
    """``frame`` if it is a pandas DataFrame with ≥ ``min_rows`` rows and the
    ``columns`` (named by the argument ``columns_from``, if given); else ``ValueError``
    naming ``name`` (and ``columns_from``) and what is missing."""
    import pandas as pd

    check_instance(name, frame, pd.DataFrame)
    min_rows = check_int(f"{name}: min_rows", min_rows, 0)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        by = f" named by {columns_from}" if columns_from else ""
        raise ValueError(
            f"{name} lacks the columns {missing}{by}; it has {list(frame.columns)}"
        )
    if len(frame) < min_rows:
        raise ValueError(
            f"{name} must have at least {min_rows} row(s), got {len(frame)}"
        )
    return frame


def check_batch(name: str, batch, kinds) -> tuple:
    """``batch`` as a tuple if it holds one tensor per entry of ``kinds``: a
    floating-point one where the entry is "floating", an integer one where it is
    "integer"; else ``ValueError`` naming ``name[i]``. Dtypes and length only, never
    values: for per-step losses (safe under ``torch.func.vmap``, no device
    synchronisation)."""
    if not isinstance(batch, (tuple, list)) or len(batch) != len(kinds):
        raise ValueError(
            f"{name} must be a tuple of {len(kinds)} tensors, got {_shape_of(batch)}"
            + (f" of length {len(batch)}" if isinstance(batch, (tuple, list)) else "")
        )
    for i, (element, kind) in enumerate(zip(batch, kinds, strict=True)):
        check_tensor(
            f"{name}[{i}]",
            element,
            floating=kind == "floating",
            integer=kind == "integer",
        )
    return tuple(batch)


def check_open_unit(name: str, value) -> float:
    """``value`` as a float if it is a real number (not a bool) strictly between 0 and
    1 (a confidence level, the share of a split); else ``ValueError``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not 0 < value < 1
    ):
        raise ValueError(f"{name} must be in (0, 1), got {value!r}")
    return float(value)


def check_sizes(name: str, value, minimum: int = 1):
    """``value`` if it is an integer ≥ ``minimum`` or a sequence of them (layer widths,
    channels); else ``ValueError``."""
    for size in value if isinstance(value, (list, tuple)) else [value]:
        check_int(name, size, minimum)
    return value


def check_size_along(
    name: str, tensor: torch.Tensor, reference_name: str, reference, dim: int
) -> None:
    """``ValueError`` naming both arguments unless ``tensor`` and ``reference`` have the
    same size along ``dim``."""
    if tensor.shape[dim] != reference.shape[dim]:
        raise ValueError(
            f"{name} must have the size of {reference_name} along dimension {dim}, "
            f"{reference.shape[dim]} (shape {tuple(reference.shape)}), got shape "
            f"{tuple(tensor.shape)}"
        )


def check_count(what: str, count: int, limit: int, names: str) -> int:
    """``count`` if it is at most ``limit``; else ``ValueError`` saying that ``names``
    (the arguments, as the user wrote them) give ``count`` ``what``, more than the
    ``limit`` enumerated. For counts that explode combinatorially without an allocation
    to fail on: C(N, m) tasks, sets of negatives, sympy terms, Python loops."""
    if count > limit:
        raise ValueError(
            f"{names} give {count:,} {what}, more than the {limit:,} this function "
            "enumerates: choose smaller sizes"
        )
    return count


def check_device(name: str, value) -> torch.device:
    """``torch.device(value)`` if ``value`` is a device or a device string naming a
    device this machine has; else ``ValueError`` naming ``name`` (and the devices
    available)."""
    try:
        if not isinstance(value, (str, torch.device)):
            raise TypeError
        device = torch.device(value)
    except (TypeError, RuntimeError):
        raise ValueError(
            f"{name} must be a torch.device or a device string such as 'cpu' or "
            f"'cuda:0', got {value!r}"
        ) from None
    return check_available(name, device, value)
