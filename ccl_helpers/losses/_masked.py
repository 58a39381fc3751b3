"""Shared by the losses: the log-sum-exp over the entries a mask keeps.

:func:`masked_logsumexp`, and on it the per-anchor term of the balanced family,
−s(z_i, z_pos(i)) + λ·(1/α) log Σ_{j kept} e^(α s(z_i, z_j)) (:func:`balanced_terms`).
Both check shapes and dtypes (and α, λ as the losses do: a tensor's value only outside
``torch.func`` transforms); the losses call them on arguments they have checked.
"""

from __future__ import annotations

import torch

from .._checks import (
    check_positive_or_scalar_tensor,
    check_same_dtype,
    check_tensor,
)


def _check_mask(name: str, mask, reference_name: str, reference: torch.Tensor):
    """``ValueError`` naming ``name`` unless ``mask`` is a boolean tensor that
    broadcasts to the shape of ``reference`` (shapes and dtype only: no value read)."""
    check_tensor(name, mask)
    if mask.dtype != torch.bool:
        raise ValueError(f"{name} must be a boolean mask, got {mask.dtype}")
    try:
        broadcast = torch.broadcast_shapes(mask.shape, reference.shape)
    except RuntimeError:
        broadcast = None
    if broadcast != reference.shape:
        raise ValueError(
            f"{name} must broadcast to the shape {tuple(reference.shape)} of "
            f"{reference_name}, got {tuple(mask.shape)}"
        )


def masked_logsumexp(
    logits: torch.Tensor, excluded: torch.Tensor | None = None
) -> torch.Tensor:
    r""":math:`\log \sum_{j:\ \lnot \mathrm{excluded}_{ij}} e^{\mathrm{logits}_{ij}}`
    over the last dimension: logits (..., n) → (...); ``excluded`` a boolean mask
    broadcastable to ``logits`` (its entries leave the sum), or None (every entry).
    A row with every entry excluded gives −∞."""
    check_tensor("logits", logits, min_ndim=1, floating=True)
    if excluded is not None:
        _check_mask("excluded", excluded, "logits", logits)
    if excluded is not None:
        logits = logits.masked_fill(excluded, -torch.inf)
    return torch.logsumexp(logits, dim=-1)


def balanced_terms(
    sims: torch.Tensor,
    alpha,
    lam,
    excluded: torch.Tensor | None = None,
    positive: torch.Tensor | None = None,
) -> torch.Tensor:
    r"""The per-anchor terms of the balanced family (Lee 2025, eq. (13), (14), (17)):

    .. math::
        \ell_i = -s_{i,\operatorname{pos}(i)}
                 + \lambda\,\frac{1}{\alpha}
                   \log \sum_{j:\ \lnot \mathrm{excluded}_{ij}} e^{\alpha s_{ij}},

    for similarities ``sims`` (..., n, M), α, λ > 0 (reals or 0-dim tensors) and the
    mask ``excluded`` of :func:`masked_logsumexp`. ``positive``: the positives'
    similarities (..., n); None: two stacked views :math:`(z^{(1)}_1, \dots,
    z^{(1)}_m, z^{(2)}_1, \dots, z^{(2)}_m)`, ``sims`` (..., 2m, 2m) and
    :math:`\operatorname{pos}(i) = i \pm m`. Returns (..., n)."""
    check_tensor("sims", sims, min_ndim=2, floating=True)
    alpha = check_positive_or_scalar_tensor("alpha", alpha)
    lam = check_positive_or_scalar_tensor("lam", lam)
    if excluded is not None:
        _check_mask("excluded", excluded, "sims", sims)
    if positive is not None:
        check_tensor("positive", positive, floating=True)
        check_same_dtype("positive", positive, "sims", sims)
    if positive is None:
        n = sims.shape[-1]
        if sims.shape[-2] != n or n % 2:
            raise ValueError(
                "sims must be square (..., 2m, 2m) over two stacked views when no "
                f"positive is given, got shape {tuple(sims.shape)}"
            )
        positive = _two_view_positive(sims)
    if positive.shape != sims.shape[:-1]:
        raise ValueError(
            f"positive must have shape {tuple(sims.shape[:-1])} (sims without its "
            f"last dimension), got {tuple(positive.shape)}"
        )
    return -positive + lam * masked_logsumexp(alpha * sims, excluded) / alpha


def _two_view_positive(sims: torch.Tensor) -> torch.Tensor:
    """s_{i,pos(i)} of the similarities (..., 2m, 2m) of two stacked views → (..., 2m),
    ordered [z1 rows, z2 rows] (no boolean mask: safe under ``vmap``)."""
    m = sims.shape[-1] // 2
    return torch.cat(
        [
            sims.diagonal(offset=m, dim1=-2, dim2=-1),
            sims.diagonal(offset=-m, dim1=-2, dim2=-1),
        ],
        dim=-1,
    )
