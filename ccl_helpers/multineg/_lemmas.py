"""Lemmas 1 and 2 of Merad et al. (2020): right-hand sides and training records.

The right-hand sides are in nats; the records are of training runs with them."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
import torch
from torch import Tensor

from .. import coupon
from .._checks import check_finite_real, check_frame, check_int, check_positive


def lemma1_bound(
    unsupervised_loss: Tensor | float,
    class_probs: Tensor | Sequence[float],
    *,
    with_log_term: bool = True,
) -> Tensor | float:
    r"""Lemma 1's right-hand side: L^µ_sup(f, C) ≤ L_un(f)/p^ρ_min + log N_C, p^ρ_min =
    min_c ρ(c).

    With ``with_log_term=False``: L_un(f)/p^ρ_min, which also holds — in the proof,
    replace "E_{c⁻~ρ} ζ(a_{c⁻}) ≥ p_min max_{c⁻} ζ(a_{c⁻})" and the LSE ≤ max + log N_C
    step by E_{c⁻~ρ} ζ(a_{c⁻}) ≥ p_min Σ_{c⁻} log(1 + e^{a_{c⁻}}) ≥ p_min log(1 + Σ_{c⁻}
    e^{a_{c⁻}}) ≥ p_min ℓ^µ(x, c), with a_{c⁻} = f(x)ᵀ(µ_{c⁻} − µ_c) (a_c = 0), since
    Π(1 + e^{a}) ≥ 1 + Σ e^{a}.

    Args:
        unsupervised_loss: L_un(f) in nats (N = 1), a finite float or tensor of any
            shape.
        class_probs: ρ, shape (N_C,), every entry > 0.
    Returns: the bound, of the type and shape of ``unsupervised_loss``.
    """
    loss = check_finite_real("unsupervised_loss", unsupervised_loss)
    rho = coupon.probability_vector(class_probs)
    bound = loss / float(rho.min())
    return bound + math.log(rho.numel()) if with_log_term else bound


def lemma2_bound(
    unsupervised_loss: Tensor | float,
    n_negatives: int,
    class_probs: Tensor | Sequence[float],
    *,
    anchor_excluded: bool = False,
) -> Tensor | float:
    r"""Lemma 2's right-hand side: L^µ_sup(f, C) ≤ L^N_un(f) / p^ρ_cc(N)
    (see :func:`ccl_helpers.coupon.p_cc`).

    The source assumes N = Ω(N_C log N_C) but the inequality holds for every N ≥ 1 (the
    bound is +∞ when p^ρ_cc(N) = 0, i.e. N < N_C). With ``anchor_excluded=True`` the
    factor is the larger :func:`ccl_helpers.coupon.p_cc_anchor_excluded` (a tighter
    bound, see there).

    Args:
        unsupervised_loss: L^N_un(f) in nats, a finite float or tensor of any shape.
        n_negatives: N ≥ 1; class_probs: ρ (N_C,), every entry > 0.
    Returns: the bound, of the type and shape of ``unsupervised_loss`` (+∞ where the
        factor is 0).
    """
    n_negatives = check_int("n_negatives", n_negatives, 1)
    loss = check_finite_real("unsupervised_loss", unsupervised_loss)
    probability = (coupon.p_cc_anchor_excluded if anchor_excluded else coupon.p_cc)(
        n_negatives, class_probs
    )
    if probability == 0.0:
        return torch.full_like(loss, math.inf) if isinstance(loss, Tensor) else math.inf
    return loss / probability


LEMMA_BOUNDS = {
    "lemma1": "L_un/p_min + log N_C (Lemma 1; N = 1)",
    "lemma1_no_log": "L_un/p_min (Lemma 1 without log N_C; N = 1)",
    "lemma2": "L^N_un/p_cc(N) (Lemma 2; N > 1)",
    "lemma2_anchor_excluded": "L^N_un/min_c P(J ⊇ C∖{c}) (Lemma 2, anchor excluded)",
}
"""The bound columns of :func:`add_lemma_bounds`."""


def add_lemma_bounds(
    runs: pd.DataFrame, class_probs: Tensor | Sequence[float], confidence: float = 4.0
) -> pd.DataFrame:
    r"""The records of :func:`lemma_runs` (columns ``N``, ``L_un``, ``L_un_se``)
    with the lemmas' right-hand sides (:data:`LEMMA_BOUNDS`) evaluated at the upper
    confidence limit L^N_un + z·se, z = ``confidence`` (the book's one convention, as
    :func:`proposition1_grid`), so that ``L_mu ≤ bound`` fails only on a violation
    beyond the Monte Carlo noise, never through it, even where a bound is tight.
    Lemma 1's columns are filled on the rows with N = 1, Lemma 2's on those with N > 1
    (+∞ where the coverage probability is 0), NaN elsewhere. Returns a new frame."""
    confidence = check_positive("confidence", confidence, allow_zero=True)
    check_frame("runs", runs, ["N", "L_un", "L_un_se"])
    rho = coupon.probability_vector(class_probs)
    out = runs.copy()
    high = torch.tensor((out["L_un"] + confidence * out["L_un_se"]).to_numpy())
    single = torch.tensor((out["N"] == 1).to_numpy())
    nan = torch.full_like(high, math.nan)
    out["lemma1"] = torch.where(single, lemma1_bound(high, rho), nan).numpy()
    out["lemma1_no_log"] = torch.where(
        single, lemma1_bound(high, rho, with_log_term=False), nan
    ).numpy()
    for column, excluded in (("lemma2", False), ("lemma2_anchor_excluded", True)):
        out[column] = math.nan
        for n in sorted(set(out["N"]) - {1}):  # one coverage probability per N
            rows = (out["N"] == n).to_numpy()
            out.loc[rows, column] = lemma2_bound(
                high[torch.tensor(rows)], int(n), rho, anchor_excluded=excluded
            ).numpy()
    return out
