"""Shared by the losses: the log-sum-exp over the entries a mask keeps.

:func:`masked_logsumexp`, and on it the per-anchor term of the balanced family,
−s(z_i, z_pos(i)) + λ·(1/α) log Σ_{j kept} e^(α s(z_i, z_j)) (:func:`balanced_terms`,
:func:`two_view_positive`)."""

from __future__ import annotations

import torch

from ..checks import check_tensor


def masked_logsumexp(
    logits: torch.Tensor, excluded: torch.Tensor | None = None
) -> torch.Tensor:
    r""":math:`\log \sum_{j:\ \lnot \mathrm{excluded}_{ij}} e^{\mathrm{logits}_{ij}}`
    over the last dimension: logits (..., n) → (...); ``excluded`` a boolean mask
    broadcastable to ``logits`` (its entries leave the sum), or None (every entry).
    A row with every entry excluded gives −∞. Shapes and dtypes are checked, never
    values (safe under ``torch.func.vmap``)."""
    check_tensor("logits", logits, min_ndim=1, floating=True)
    if excluded is not None:
        check_tensor("excluded", excluded)
        if excluded.dtype != torch.bool:
            raise ValueError(f"excluded must be a boolean mask, got {excluded.dtype}")
        logits = logits.masked_fill(excluded, -torch.inf)
    return torch.logsumexp(logits, dim=-1)


def balanced_terms(
    sims: torch.Tensor,
    positive: torch.Tensor,
    alpha,
    lam,
    excluded: torch.Tensor | None = None,
) -> torch.Tensor:
    r"""The per-anchor terms of the balanced family (Lee 2025, eq. (13), (14), (17)):

    .. math::
        \ell_i = -s_{i,\operatorname{pos}(i)}
                 + \lambda\,\frac{1}{\alpha}
                   \log \sum_{j:\ \lnot \mathrm{excluded}_{ij}} e^{\alpha s_{ij}},

    for similarities ``sims`` (..., n, M), the positives' similarities ``positive``
    (..., n), α, λ > 0 (reals or 0-dim tensors, not checked here: the losses check
    them at their entry) and the mask ``excluded`` of :func:`masked_logsumexp`.
    Returns (..., n)."""
    check_tensor("sims", sims, min_ndim=1, floating=True)
    check_tensor("positive", positive, floating=True)
    return -positive + lam * masked_logsumexp(alpha * sims, excluded) / alpha


def two_view_positive(sims: torch.Tensor) -> torch.Tensor:
    r""":math:`s_{i,\operatorname{pos}(i)}` of the similarities (..., 2m, 2m) of two
    stacked views :math:`(z^{(1)}_1, \dots, z^{(1)}_m, z^{(2)}_1, \dots, z^{(2)}_m)`,
    :math:`\operatorname{pos}(i) = i \pm m` → (..., 2m), ordered [z1 rows, z2 rows] (no
    boolean mask: safe under ``vmap``, no device synchronisation)."""
    check_tensor("sims", sims, min_ndim=2, floating=True)
    n = sims.shape[-1]
    if sims.shape[-2] != n or n % 2:
        raise ValueError(
            "sims must be square (..., 2m, 2m) over two stacked views, got shape "
            f"{tuple(sims.shape)}"
        )
    m = n // 2
    return torch.cat(
        [
            sims.diagonal(offset=m, dim1=-2, dim2=-1),
            sims.diagonal(offset=-m, dim1=-2, dim2=-1),
        ],
        dim=-1,
    )
