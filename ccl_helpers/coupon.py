"""The coupon collector of Merad et al. (2020): the classes that N negatives cover.

Lemma 2 and Proposition 1: which classes N negatives drawn i.i.d. from ρ cover.

With I_1, …, I_N ~ ρ^{⊗N} the negatives' classes and J = {I_1, …, I_N}:

- :func:`p_cc` — p^ρ_cc(N) = P(|J| = N_C), the probability that they collect every
  class;
- :func:`p_cc_anchor_excluded` — min_c P(J ⊇ C∖{c}), every class but the anchor's;
- :func:`tau_plus` — τ⁺_N = Σ_c ρ(c)^{N+1}, the probability that all N share the
  positive's class (τ⁺_1 = Σ_c ρ(c)² is the collision probability τ of Arora et al.).

The number T of draws until every class is drawn (Section 3.1) has P(T ≤ N) = p_cc(N):
E T = N_C H_{N_C} and Var T = Σ_{k=1}^{N_C} N_C(N_C − k)/k² (uniform ρ; as exact
rationals :func:`collection_time_moments_exact`), below the source's (N_C π)²/6 (an
upper bound on Var T), the exact tail :func:`collection_time_tail` beside
:func:`chebyshev_tail_bound` (with either variance), and the simulator
:func:`sample_collection_time` (any ρ).

Every value is exact to a stated relative accuracy (see :func:`p_cc`); ρ is validated by
:func:`probability_vector`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import torch
from torch import Tensor

from ._checks import (
    check_count,
    check_device,
    check_instance,
    check_int,
    check_probabilities,
    check_tensor,
)

__all__ = [
    "chebyshev_tail_bound",
    "collection_time_moments_exact",
    "collection_time_tail",
    "p_cc",
    "p_cc_anchor_excluded",
    "probability_vector",
    "sample_collection_time",
    "tau_plus",
]

_MAX_DP_NEGATIVES = 1024
"""Largest N for which a non-uniform coverage probability is computed by the
(cancellation-free) dynamic programme; beyond it, inclusion–exclusion over subsets with
a rounding-error bound."""

_MAX_SUBSETS = 2**24
"""The most subsets U ⊆ A of the classes A to cover that inclusion–exclusion sums over
(N > :data:`_MAX_DP_NEGATIVES`, non-uniform ρ): 2^|A| doubles with every class, so this
allows |A| ≤ 24 classes (p_cc_anchor_excluded: N_C ≤ 25); the terms are built by
doubling, so a larger count would fill the memory before any one allocation failed."""

_MAX_EXACT_TERMS = 10**6
"""The most terms :func:`collection_time_moments_exact` sums as rationals: a Python loop
over N_C fractions whose denominators grow to about N_C bits, so its work grows as
N_C²; beyond 10⁶ terms it would run for hours without an allocation to fail on."""

_MAX_EXACT_BITS = 2**20
"""Uniform ρ: the closed form is summed in exact integer arithmetic while N·log₂ N_C ≤
this."""

_RELATIVE_TOLERANCE = 1e-10
"""A coverage probability whose rounding-error bound exceeds this relative size raises
ValueError."""

_EPS = torch.finfo(torch.float64).eps


def probability_vector(class_probs) -> Tensor:
    """ρ (a tensor or a sequence) as a float64 CPU vector (N_C,), validated (finite,
    every entry > 0, summing to 1) and renormalised."""
    if not isinstance(class_probs, Tensor):
        try:
            class_probs = torch.as_tensor(class_probs, dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError):
            raise ValueError(
                f"class_probs must be a vector of probabilities, got {class_probs!r}"
            ) from None
    check_tensor("class_probs", class_probs, floating=True)
    rho = check_probabilities(
        "class_probs", class_probs.detach().double().cpu(), positive=True
    )
    return rho / rho.sum()


def _is_uniform(class_probs) -> bool:
    values = (
        class_probs if isinstance(class_probs, Tensor) else torch.as_tensor(class_probs)
    )
    return bool((values == values.reshape(-1)[0]).all())


def _cover_uniform(n: int, n_classes: int, n_required: int) -> float:
    """P(N i.i.d. uniform draws over n_classes classes hit each of n_required given
    classes) = Σ_{j=0}^{a} (−1)^j C(a, j) (1 − j/N_C)^N, a = n_required."""
    if n < n_required:
        return 0.0
    if n * math.log2(n_classes) <= _MAX_EXACT_BITS:
        # exact integers: the alternating sum has no rounding at all; int / int is
        # correctly rounded
        numerator = sum(
            (-1) ** j * math.comb(n_required, j) * (n_classes - j) ** n
            for j in range(n_required + 1)
        )
        return numerator / n_classes**n
    j = torch.arange(1, min(n_required, n_classes - 1) + 1, dtype=torch.float64)
    log_factorial_a = math.lgamma(n_required + 1)
    log_binomial = (
        log_factorial_a - torch.lgamma(j + 1) - torch.lgamma(n_required - j + 1)
    )
    log_terms = log_binomial + n * torch.log1p(-j / n_classes)
    signs = (-1.0) ** j
    exponent_error = (
        8 * log_factorial_a + 3 * log_terms.abs() + n * j / (n_classes - j) + 4
    )
    return _one_plus_signed_sum(log_terms, signs, exponent_error)


def _one_plus_signed_sum(
    log_terms: Tensor, signs: Tensor, exponent_error: Tensor
) -> float:
    """1 + Σ signs·exp(log_terms), with a bound on its rounding error; raise if the
    bound is not below _RELATIVE_TOLERANCE times the value (the alternating sum cancels
    too much).

    exponent_error: per term, a bound on the absolute error of log_terms in units of
    eps."""
    terms = torch.exp(log_terms)
    value = 1.0 + float((signs * terms).sum())
    scale = exponent_error + 2 * math.log2(terms.numel() + 1) + 4
    error = (
        1.01
        * _EPS
        * float(torch.where(terms > 0, terms * scale, torch.zeros_like(terms)).sum())
    )
    if not (value > 0 and error <= _RELATIVE_TOLERANCE * value):
        raise ValueError(
            f"inclusion–exclusion cancels too much here (value {value:.3g}, rounding "
            f"bound {error:.3g}): n_negatives is beyond what can be computed exactly "
            f"for these class_probs (the dynamic programme covers n_negatives ≤ "
            f"{_MAX_DP_NEGATIVES})"
        )
    return min(value, 1.0)


def _cover_dynamic_programme(n: int, rho: Tensor, required: Tensor) -> float:
    """P(N i.i.d. draws from ρ hit every class c with required[c]), with non-negative
    terms only.

    The class counts (n_1, …, n_{N_C}) of N draws are multinomial; draw them class by
    class: n_c | (r draws left) ~ Binomial(r, ρ(c)/Σ_{c'≥c} ρ(c')). q(r) = P(r draws
    left and every required class so far drawn) evolves by a sum of non-negative terms
    (in log space), so there is no cancellation; the rounding error comes from lgamma
    (relative ≲ 1e-12 at N = 1024)."""
    suffix = rho.flip(0).cumsum(0).flip(0)  # Σ_{c' ≥ c} ρ(c'), without subtractions
    r = torch.arange(n + 1, dtype=torch.float64)
    log_factorial = torch.lgamma(r + 1)
    drawn = r[:, None] - r[None, :]  # j = r_old − r_new ≥ 0 (rows r_old, columns r_new)
    valid = drawn >= 0
    base = torch.where(
        valid,
        log_factorial[:, None]
        - log_factorial[None, :]
        - torch.lgamma(drawn.clamp_min(0) + 1),
        torch.tensor(-math.inf, dtype=torch.float64),
    )
    log_q = torch.full((n + 1,), -math.inf, dtype=torch.float64)
    log_q[n] = 0.0
    for c in range(rho.numel() - 1):
        log_pi = math.log(rho[c] / suffix[c])
        log_rest = math.log(suffix[c + 1] / suffix[c])
        log_binomial = base + drawn * log_pi + r[None, :] * log_rest
        if bool(required[c]):
            log_binomial = log_binomial.masked_fill(drawn < 1, -math.inf)
        log_q = torch.logsumexp(log_q[:, None] + log_binomial, dim=0)
    # the last class receives every draw left
    value = float(
        torch.logsumexp(log_q[1:] if bool(required[-1]) else log_q, dim=0).exp()
    )
    return min(
        value, 1.0
    )  # lgamma's rounding (relative ≲ 1e-12 at N = 1024) must not exceed 1


def _cover_inclusion_exclusion(n: int, rho: Tensor, required: Tensor) -> float:
    """P(J ⊇ A) = Σ_{U ⊆ A} (−1)^{|A|−|U|} (ρ(C∖A) + ρ(U))^N over all subsets U of the
    required set A, vectorised (2^|A| terms); the U = A term is exactly 1. Raises when
    cancellation is too large."""
    subset_mass = torch.zeros(1, dtype=torch.float64)
    subset_size = torch.zeros(1, dtype=torch.float64)
    for value in rho[required]:
        subset_mass = torch.cat([subset_mass, subset_mass + value])
        subset_size = torch.cat([subset_size, subset_size + 1])
    other = float(rho[~required].sum())
    a = int(required.sum())
    mass, size = (
        (subset_mass + other)[:-1],
        subset_size[:-1],
    )  # drop U = A (mass 1, term 1)
    log_terms = n * torch.log(mass)
    signs = (-1.0) ** (a - size)
    exponent_error = n * (a + 2) + 2 * log_terms.abs() + 2
    return _one_plus_signed_sum(log_terms, signs, exponent_error)


def _cover_probability(n: int, rho: Tensor, required: Tensor) -> float:
    a = int(required.sum())
    if n < a:
        return 0.0
    if n <= _MAX_DP_NEGATIVES:
        return _cover_dynamic_programme(n, rho, required)
    check_count(
        "subsets of the classes to cover (inclusion–exclusion)",
        2**a,
        _MAX_SUBSETS,
        f"n_negatives={n:,} (> {_MAX_DP_NEGATIVES}) with {a} classes to cover",
    )
    return _cover_inclusion_exclusion(n, rho, required)


def p_cc(n_negatives: int, class_probs: Tensor | Sequence[float]) -> float:
    r"""p^ρ_cc(N): the probability that N i.i.d. draws from ρ collect all N_C classes
    (Lemma 2).

    As in the proof of Lemma 2, the N draws are the classes I ~ ρ^{⊗N} of the N
    **negatives** only (the positive's class is not counted): with J = {I_1, …, I_N},

        p^ρ_cc(N) = P(|J| = N_C) = Σ_{S ⊆ C} (−1)^{|S|} (1 − ρ(S))^N
                  = N! Σ_{n_c ≥ 1, Σ n_c = N} Π_c ρ(c)^{n_c} / n_c!,

    zero for N < N_C. Computed to a relative accuracy of 1e-10 or better (usually
    ~1e-14):

    - uniform ρ (all entries equal): the closed form Σ_j (−1)^j C(N_C, j) (1 − j/N_C)^N
      summed in exact integer arithmetic (correctly rounded) while N·log₂ N_C ≤ 2^20,
      beyond it in float64 (there the j ≥ 1 terms are tiny; a rounding-error bound is
      checked);
    - other ρ, N ≤ 1024: a dynamic programme over the classes whose terms are all
      non-negative (the multinomial counts drawn class by class), so no cancellation,
      any N_C (only lgamma's rounding: relative error ≲ 1e-12 at N = 1024);
      inclusion–exclusion in float64 would lose all digits when p_cc is small (e.g.
      N = N_C = 10: terms ~0.2, value 3.6e-4);
    - other ρ, N > 1024: inclusion–exclusion over the 2^{N_C} subsets (N_C ≤ 24),
      vectorised, with a rounding-error bound.

    Args:
        n_negatives: N, an integer ≥ 1.
        class_probs: ρ, shape (N_C,), N_C ≥ 2, every entry > 0, summing to 1.
    Returns: a float in [0, 1].
    Raises: ValueError for bad arguments, or where the value cannot be computed to a
        relative accuracy of 1e-10 (non-uniform ρ with N > 1024 and either N_C > 24 or
        tiny p_cc).
    """
    n = check_int("n_negatives", n_negatives)
    rho = probability_vector(class_probs)
    if _is_uniform(class_probs):
        return _cover_uniform(n, rho.numel(), rho.numel())
    return _cover_probability(n, rho, torch.ones(rho.numel(), dtype=torch.bool))


def p_cc_anchor_excluded(
    n_negatives: int, class_probs: Tensor | Sequence[float]
) -> float:
    r"""min_c P(J ⊇ C∖{c}): the N negatives' classes J cover every class but the
    anchor's.

    Lemma 2's proof lower-bounds LSE(0, f(x)ᵀ(µ_{I_1} − µ_c), …) by the mean-classifier
    loss LSE_{c'∈C}(f(x)ᵀ(µ_{c'} − µ_c)) whenever J ∪ {c} = C, because the leading 0
    (the positive) is the c' = c term. So L^N_un(f) ≥ Σ_c ρ(c) P(J ⊇ C∖{c}) E_{D_c}[ℓ^µ]
    ≥ min_c P(J ⊇ C∖{c}) · L^µ_sup(f, C), a bound with a larger factor than p^ρ_cc(N)
    (and positive already at N = N_C − 1). For uniform ρ, P(J ⊇ C∖{c}) = Σ_{j=0}^{N_C−1}
    (−1)^j C(N_C−1, j) (1 − j/N_C)^N for every c.

    Args and accuracy as for :func:`p_cc` (non-uniform ρ: one computation per class).
    Returns: a float in [0, 1], ≥ p_cc(n_negatives, class_probs).
    """
    n = check_int("n_negatives", n_negatives)
    rho = probability_vector(class_probs)
    n_classes = rho.numel()
    if _is_uniform(class_probs):
        return _cover_uniform(n, n_classes, n_classes - 1)
    values = []
    for c in range(n_classes):  # one coverage problem per excluded class
        required = torch.ones(n_classes, dtype=torch.bool)
        required[c] = False
        values.append(_cover_probability(n, rho, required))
    return min(values)


def tau_plus(n_negatives: int, class_probs: Tensor | Sequence[float]) -> float:
    r"""τ⁺_N = P(c_i = c for every i | (c, c_1, …, c_N) ~ ρ^{⊗(N+1)}) = Σ_c ρ(c)^{N+1}
    (Proposition 1).

    The probability that all N negatives share the positive's class; for uniform ρ it is
    N_C^{−N}. τ⁺_1 = Σ_c ρ(c)² is the τ of
    Arora et al.

    Args:
        n_negatives: N, an integer ≥ 1.
        class_probs: ρ, shape (N_C,), N_C ≥ 2, every entry > 0, summing to 1.
    Returns: a float in (0, 1) (it may underflow to 0.0 for huge N).
    """
    n = check_int("n_negatives", n_negatives)
    rho = probability_vector(class_probs)
    if _is_uniform(class_probs):
        return float(rho.numel()) ** (-n)
    return float((rho ** (n + 1)).sum())


# ------------------------------------------ the collection time T (Section 3.1)


def _uniform(n_classes: int) -> Tensor:
    return torch.full((n_classes,), 1.0 / n_classes, dtype=torch.float64)


def _collection_time_mean(n_classes: int) -> float:
    r"""E[T] = N_C H_{N_C} = Σ_{k=1}^{N_C} N_C/k: the expected number of i.i.d. uniform
    draws T until all N_C classes are drawn (Section 3.1, after Lemma 2).

    Summed with ``math.fsum`` (correctly rounded sum of the terms); N_C ≥ 2.
    """
    k = torch.arange(1, n_classes + 1, dtype=torch.float64)
    return math.fsum((n_classes / k).tolist())


def _collection_time_variance(n_classes: int) -> float:
    r"""Var T = Σ_{i=1}^{N_C} (1 − p_i)/p_i², p_i = (N_C − i + 1)/N_C, i.e.
    Σ_{k=1}^{N_C} N_C(N_C − k)/k² = N_C² Σ_{k≤N_C} 1/k² − N_C H_{N_C} (uniform ρ).

    T is a sum of independent geometric waits, the i-th with success probability p_i.
    The terms are non-negative, so the sum does not cancel. The source's (N_C π)²/6
    (:func:`_collection_time_variance_as_printed`) is an upper bound on it. N_C ≥ 2;
    e.g. ≈ 125.69 for N_C = 10.
    """
    k = torch.arange(1, n_classes + 1, dtype=torch.float64)
    return math.fsum((n_classes * (n_classes - k) / k**2).tolist())


def collection_time_moments_exact(n_classes: int) -> tuple[Fraction, Fraction]:
    r"""(E T, Var T) as exact rationals, from T = Σ_i G_i with independent geometric
    waits G_i of success probability p_i = (N_C − i + 1)/N_C: E T = Σ_i 1/p_i,
    Var T = Σ_i (1 − p_i)/p_i² (uniform ρ). The floats E T = N_C H_{N_C} and
    Var T = Σ_{k=1}^{N_C} N_C(N_C − k)/k² that :func:`collection_time_tail` and
    :func:`chebyshev_tail_bound` use agree with them to a few rounding errors.

    Args:
        n_classes: N_C, an integer from 2 to 10⁶ (the denominators grow to about N_C
            bits, so the sum's work grows as N_C²).
    Returns: (mean, variance), two :class:`fractions.Fraction`, e.g. (7381/252,
        …) for N_C = 10.
    """
    n_classes = check_int("n_classes", n_classes, 2)
    check_count("rational terms", n_classes, _MAX_EXACT_TERMS, f"n_classes={n_classes}")
    success = [Fraction(n_classes - i + 1, n_classes) for i in range(1, n_classes + 1)]
    mean = sum((1 / p for p in success), Fraction(0))
    variance = sum(((1 - p) / p**2 for p in success), Fraction(0))
    return mean, variance


def _collection_time_variance_as_printed(n_classes: int) -> float:
    r"""(N_C π)²/6: the source's value of Var T, which is an upper bound on it,
    since Var T = N_C² Σ_{k≤N_C} 1/k² − N_C H_{N_C} < N_C² π²/6 (N_C ≥ 2)."""
    return (n_classes * math.pi) ** 2 / 6


def _positive_betas(beta) -> Tensor:
    """β (a number, a sequence or a floating tensor) as a float64 tensor on its
    device, every entry finite and > 0."""
    if not isinstance(beta, Tensor):
        try:
            beta = torch.as_tensor(beta, dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError):
            raise ValueError(f"beta must be real numbers > 0, got {beta!r}") from None
    check_tensor("beta", beta, floating=True)
    if not bool((torch.isfinite(beta) & (beta > 0)).all()):
        raise ValueError("beta must be finite real numbers > 0")
    return beta.double()


def collection_time_tail(beta, n_classes: int) -> Tensor:
    r"""P(|T − N_C H_{N_C}| ≥ β N_C) for uniform ρ, exactly, from the law of T.

    P(T ≤ N) = p_cc(N) (:func:`p_cc`), so with a = N_C H_{N_C} + βN_C and
    b = N_C H_{N_C} − βN_C the tail is 1 − p_cc(⌈a⌉ − 1) + p_cc(⌊b⌋). p_cc is
    computed once per distinct N, exactly; the thresholds are computed in float64
    and the upper tail 1 − p_cc to an absolute accuracy of ~1e-16.

    Args:
        beta: β > 0: a number, a sequence or a floating tensor of any shape.
        n_classes: N_C, an integer ≥ 2.
    Returns: float64 tensor of β's shape (on β's device when β is a tensor).
    """
    betas = _positive_betas(beta)
    n_classes = check_int("n_classes", n_classes, 2)
    mean = _collection_time_mean(n_classes)
    upper = torch.ceil(mean + betas.cpu() * n_classes).long() - 1  # P(T > upper)
    lower = torch.floor(mean - betas.cpu() * n_classes).long()  # P(T ≤ lower)
    points, inverse = torch.unique(
        torch.stack([upper, lower]).clamp_min(0), return_inverse=True
    )
    rho = _uniform(n_classes)
    cdf = torch.tensor(
        [p_cc(n, rho) if n >= n_classes else 0.0 for n in points.tolist()],
        dtype=torch.float64,
    )[inverse]
    return (1.0 - cdf[0] + cdf[1]).to(betas.device)


def chebyshev_tail_bound(beta, n_classes: int, *, as_printed: bool = False) -> Tensor:
    r"""Chebyshev's bound on P(|T − N_C H_{N_C}| ≥ βN_C): Var T/(βN_C)², or with
    ``as_printed`` the source's π²/(6β²), which uses (N_C π)²/6 ≥ Var T and so is
    looser. Neither is clipped at 1.

    Args:
        beta: β > 0: a number, a sequence or a floating tensor of any shape.
        n_classes: N_C, an integer ≥ 2.
    Returns: float64 tensor of β's shape, on β's device when β is a tensor.
    """
    betas = _positive_betas(beta)
    n_classes = check_int("n_classes", n_classes, 2)
    variance = (
        _collection_time_variance_as_printed(n_classes)
        if as_printed
        else _collection_time_variance(n_classes)
    )
    return variance / (betas * n_classes) ** 2


def sample_collection_time(
    n_samples: int,
    class_probs: Tensor | Sequence[float],
    *,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    block: int | None = None,
) -> Tensor:
    r"""Simulate T, the number of i.i.d. draws from ρ until every class is drawn.

    Vectorised over samples and draws: each round draws a block of classes for every
    sample not yet complete, finds each class's first draw (argmax of a one-hot),
    and completes a sample at its last first draw. The block doubles each round.
    Memory: about 2 · n_samples · block · N_C bytes in the first round.

    Args:
        n_samples: number of independent copies of T, an integer ≥ 1.
        class_probs: ρ, shape (N_C,), N_C ≥ 2, every entry > 0, summing to 1.
        generator: torch generator (its device is the device of the draws).
        device: device of the draws and the result (default: the generator's, else
            class_probs' when a tensor, else the CPU).
        block: draws in the first round, an integer ≥ 1 (default: about
            N_C H_{N_C}).
    Returns: int64 tensor (n_samples,) of values ≥ N_C, on ``device``.
    """
    n_samples = check_int("n_samples", n_samples)
    if block is not None:
        block = check_int("block", block)
    rho = probability_vector(class_probs)
    if generator is not None:
        check_instance("generator", generator, torch.Generator)
    n_classes = rho.numel()
    if device is None:
        device = (
            generator.device
            if generator is not None
            else class_probs.device
            if isinstance(class_probs, Tensor)
            else "cpu"
        )
    device = check_device("device", device)
    if generator is not None and generator.device.type != device.type:
        raise ValueError(
            f"generator must be on device {device}, got one on {generator.device}"
        )
    if block is None:
        block = math.ceil(_collection_time_mean(n_classes))
    cdf = rho.cumsum(0).to(device)
    classes = torch.arange(n_classes, device=device)
    missing = torch.iinfo(torch.int64).max
    times = torch.empty(n_samples, dtype=torch.int64, device=device)
    pending = torch.arange(n_samples, device=device)
    first = torch.full((n_samples, n_classes), missing, device=device)
    offset = 0
    while pending.numel():
        uniforms = torch.rand(
            pending.numel(),
            block,
            generator=generator,
            device=device,
            dtype=torch.float64,
        )
        draws = torch.searchsorted(cdf, uniforms, right=True).clamp_max_(n_classes - 1)
        hit = draws[..., None] == classes  # (pending, block, N_C)
        first_here = torch.where(
            hit.any(1), offset + hit.to(torch.uint8).argmax(1), missing
        )
        first = torch.minimum(first, first_here)
        complete = (first != missing).all(1)
        times[pending[complete]] = first[complete].amax(1) + 1
        pending, first = pending[~complete], first[~complete]
        offset += block
        block *= 2
    return times
