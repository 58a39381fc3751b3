"""The bounds of Lee (2025): Theorems 4.4 and 4.6, and the prototype bias.

Theorem 4.4 (attracting) and Theorem 4.6 (repelling), with the steps of its proof, and
the prototype representation bias, eq. (16), with the distance between prototypes.
Representations are l2-normalised inside the bound functions (Assumption 4.2). Encoders
are callables images (N, C, H, W) → (..., N, d), e.g. a
:class:`~ccl_helpers.train.StackedModel` (leading seed dimension) or an ``nn.Module``.
Images are verified to be finite at the entry of each public function (one read per
call: an evaluation, not a training step); representations are not read, so a NaN in
them propagates to the terms. The private functions trust their callers.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor

from .._checks import (
    check_finite,
    check_floating_dtype,
    check_labels,
    check_min_size,
    check_positive,
    check_tensor,
)
from ..data import BASE, augment, pipeline
from ..losses import masked_logsumexp
from ..metrics import encode
from ..train import Forward


def _normalise(z: Tensor) -> Tensor:
    return F.normalize(z, dim=-1, eps=1e-12)


_ENCODE_CHUNK = 8192
"""Images per encoder call in the bounds and bias estimates: 16 views of 1,000 anchors
through dozens of stacked members (the paper scale) would need tens of GB at once."""


def _encode_views(encoder: Forward, images: Tensor) -> Tensor:
    """:func:`~ccl_helpers.metrics.encode` of views (K, N, C, H, W), in chunks of
    :data:`_ENCODE_CHUNK` images → (..., K, N, d), normalised (no gradients)."""
    k, n = images.shape[:2]
    flat = images.reshape(k * n, *images.shape[2:])
    z = encode(encoder, flat, chunk_size=_ENCODE_CHUNK)
    return _normalise(z.reshape(*z.shape[:-2], k, n, z.shape[-1]))


def _check_images(
    name: str,
    images,
    labels=None,
    labels_name: str = "labels",
    *,
    min_ndim: int = 3,
    min_size: int = 0,
) -> None:
    """``ValueError`` naming ``name`` unless ``images`` is a floating tensor (n, C, H,
    W) (≥ ``min_ndim`` dimensions) of finite entries (read once: an evaluation, not a
    training step) with n ≥ ``min_size``; and, with ``labels``, naming
    ``labels_name`` unless they are int64 classes ≥ 0, one per image."""
    check_tensor(name, images, min_ndim=min_ndim, floating=True)
    if min_size:
        check_min_size(name, images, min_size)
    check_finite(name, images)
    if labels is not None:
        check_labels(labels_name, labels, n=images.shape[0])


def _check_view_classes(
    anchor_labels: Tensor,
    view_labels: Tensor,
    names: tuple[str, str] = ("anchor_labels", "view_labels"),
) -> None:
    """``ValueError`` unless the classes of ``view_labels`` (Theorem 4.6's X') are at
    least two and include every class of ``anchor_labels`` (``names``: the two
    arguments, as the caller calls them)."""
    n_classes = int(max(anchor_labels.max(), view_labels.max())) + 1
    present = torch.bincount(view_labels, minlength=n_classes) > 0
    if int(present.sum()) < 2 or not bool(present[anchor_labels].all()):
        raise ValueError(
            f"{names[1]} must hold at least two classes, including every class of "
            f"{names[0]}"
        )


# ---------------------------------------------------------------- Theorem 4.4
# (attracting component)


class _AttractingTerms(NamedTuple):
    """Per-sample terms of Theorem 4.4, each (..., n): see :func:`attracting_terms`."""

    lhs: Tensor
    rhs: Tensor
    gap: Tensor
    mean_norm: Tensor
    hemisphere: Tensor
    gap_stderr: Tensor


def attracting_terms(anchors: Tensor, views: Tensor):
    """Theorem 4.4 on representations: anchors f(t(x)) (..., n, d), views f(t_k(x))
    (..., K, n, d), K ≥ 2.

    Both sides use the same K views, i.e. T is uniform over the K drawn transformations;
    the theorem holds exactly for this distribution (so ``gap ≥ 0`` whenever
    ``hemisphere ≥ 0``), and the sides estimate their population values with the stated
    jackknife standard error.

    Returns the per-sample terms, each (..., n): ``lhs`` −s(f(t(x)), m̂) with m̂ =
    (1/K) Σ_k f(t_k(x)); ``rhs`` −(1/K) Σ_k s(f(t(x)), f(t_k(x))); ``gap`` rhs − lhs;
    ``mean_norm`` ‖m̂‖ (= 1 iff every view maps to the same unit vector);
    ``hemisphere`` f(t(x))·m̂ (Assumption 4.3 asks ≥ 0); ``gap_stderr`` the jackknife
    standard error of the gap (over the K transformations).
    """
    check_tensor("anchors", anchors, min_ndim=2, floating=True)
    check_tensor("views", views, min_ndim=3, floating=True)
    if views.shape[-2:] != anchors.shape[-2:]:
        raise ValueError(
            "views must have shape (..., K, n, d) with (..., n, d) = the shape of "
            f"anchors, {tuple(anchors.shape)}, "
            f"got {tuple(views.shape)}"
        )
    k = views.shape[-3]
    if k < 2:
        raise ValueError(f"views must hold K ≥ 2 transformations, got K = {k}")
    a, v = _normalise(anchors), _normalise(views)

    def sides(
        anchor: Tensor, mean_view: Tensor, mean_sim: Tensor
    ) -> tuple[Tensor, Tensor]:
        lhs = -(anchor * mean_view).sum(-1) / mean_view.norm(dim=-1).clamp_min(1e-12)
        return lhs, -mean_sim

    sims = (a.unsqueeze(-3) * v).sum(-1)  # (..., K, n)
    mean_view = v.mean(-3)
    lhs, rhs = sides(a, mean_view, sims.mean(-2))
    gap = rhs - lhs
    # jackknife: leave one transformation out
    loo_view = (v.sum(-3, keepdim=True) - v) / (k - 1)  # (..., K, n, d)
    loo_sim = (sims.sum(-2, keepdim=True) - sims) / (k - 1)
    loo_lhs, loo_rhs = sides(a.unsqueeze(-3), loo_view, loo_sim)
    loo_gap = loo_rhs - loo_lhs  # (..., K, n)
    stderr = (
        (k - 1) / k * ((loo_gap - loo_gap.mean(-2, keepdim=True)) ** 2).sum(-2)
    ).sqrt()
    return _AttractingTerms(
        lhs, rhs, gap, mean_view.norm(dim=-1), (a * mean_view).sum(-1), stderr
    )


# ---------------------------------------------------------------- Theorem 4.6
# (repelling component)


class _RepellingTerms(NamedTuple):
    """Per-sample terms of Theorem 4.6, each (..., n): see :func:`repelling_terms`."""

    lhs: Tensor
    nu: Tensor
    smooth: Tensor
    rhs: Tensor
    gap: Tensor
    rhs_corrected: Tensor
    gap_stderr: Tensor


def repelling_terms(
    anchors: Tensor,
    anchor_labels: Tensor,
    views: Tensor,
    view_labels: Tensor,
    alpha: float = 1.0,
):
    """Theorem 4.6 on representations (their values are not read: a diverged member
    gives NaN terms).

    Args:
        anchors: f(t(x)) (..., n, d); anchor_labels: y (n,).
        views: f(t'_k(x'_j)) (..., K, M, d), transformation t'_k shared by row k (T'
            independent of X'); (T', X') is taken uniform over the K rows × M images, so
            the theorem holds exactly for it.
        view_labels: y'_j (M,), every class of ``anchor_labels`` present, at least two
            classes.
        alpha: α > 0.

    Returns the per-sample terms, each (..., n): ``lhs`` max_{y' ≠ y} s(f(t(x)),
    µ_{y'}), µ_{y'} = E_{T',X'|y'} f(T'(X')); ``nu`` ν = min_{y' ≠ y} ‖µ_{y'}‖;
    ``smooth`` B = E_{T'}[(1/α) log E_{X'} exp(α s(f(t(x)), f(T'(X'))))] + (1/α)
    log(1/p_min) (p_min the smallest class probability of X'; log(1/p_min) = log n
    under Assumption 4.5); ``rhs`` B/ν, the right-hand side of eq. (10); ``gap`` rhs −
    lhs; ``rhs_corrected`` max(B, B/ν), which bounds lhs without the sign condition
    B ≥ 0; ``gap_stderr`` the standard error of B/ν over the K' transformations
    (std/√K').
    """
    check_tensor("anchors", anchors, min_ndim=2, floating=True)
    check_tensor("views", views, min_ndim=3, floating=True)
    check_labels("anchor_labels", anchor_labels, n=anchors.shape[-2])
    check_labels("view_labels", view_labels, n=views.shape[-2])
    alpha = check_positive("alpha", alpha)
    if views.shape[-1] != anchors.shape[-1] or views.shape[:-3] != anchors.shape[:-2]:
        raise ValueError(
            "views must have shape (..., K, M, d) with (..., n, d) = the shape of "
            f"anchors, {tuple(anchors.shape)}, got {tuple(views.shape)}"
        )
    _check_view_classes(anchor_labels, view_labels)
    n_classes = int(max(anchor_labels.max(), view_labels.max())) + 1
    counts = torch.bincount(view_labels, minlength=n_classes)
    present = counts > 0
    a, v = _normalise(anchors), _normalise(views)
    k = v.shape[-3]
    one_hot = F.one_hot(view_labels, n_classes).to(v.dtype)  # (M, C)
    means = (
        torch.einsum("...kmd,mc->...cd", v, one_hot)
        / (k * counts.clamp_min(1)).to(v.dtype)[:, None]
    )
    norms = means.norm(dim=-1)  # (..., C)
    cos = torch.einsum("...nd,...cd->...nc", a, means) / norms.clamp_min(
        1e-12
    ).unsqueeze(-2)
    other = present[None, :] & (
        torch.arange(n_classes, device=a.device)[None, :] != anchor_labels[:, None]
    )
    lhs = cos.masked_fill(~other, -torch.inf).amax(-1)
    nu = norms.unsqueeze(-2).expand_as(cos).masked_fill(~other, torch.inf).amin(-1)
    sims = torch.einsum("...nd,...kmd->...knm", a, v)  # (..., K, n, M)
    inner = (
        torch.logsumexp(alpha * sims, -1) - math.log(v.shape[-2])
    ) / alpha  # (..., K, n)
    p_min = float(counts[present].min()) / view_labels.numel()
    smooth = inner.mean(-2) + math.log(1 / p_min) / alpha
    rhs = smooth / nu
    stderr = (
        inner.std(-2) / math.sqrt(k) / nu if k > 1 else torch.full_like(rhs, math.nan)
    )
    return _RepellingTerms(
        lhs, nu, smooth, rhs, rhs - lhs, torch.maximum(smooth, rhs), stderr
    )


class _RepellingChain(NamedTuple):
    """The steps of the proof of Theorem 4.6 (Appendix A.1.2) for each anchor, each
    (..., n), with g = s(f(t(x)), f(T'(X'))) and µ_{y'} the class prototypes:

    lhs: max_{y'≠y} s(f(t(x)), µ_{y'}); m_max: M = max_{y'≠y} E_{T',X'|y'} g;
    m_bound: max(M, M/ν), which bounds lhs (eqs. (33)–(41), Lemma A.3 in Case 2);
    lse_others: (1/α) log Σ_{y'≠y} exp(α E_{T',X'|y'} g), eq. (42) (Lemma A.1);
    lse_all: the same over every class, eq. (43);
    jensen_t: E_{T'}[(1/α) log Σ_{y'} exp(α E_{X'|y'} g)], eq. (45) (Lemma A.2, Jensen);
    jensen_x: E_{T'}[(1/α) log Σ_{y'} E_{X'|y'} exp(α g)], eq. (46) (Jensen);
    smooth: B = E_{T'}[(1/α) log E_{X'} exp(α g)] + (1/α) log(1/p_min), eqs. (47)–(50);
    nu: ν = min_{y'≠y} ‖µ_{y'}‖.
    On the empirical (T', X') every step is an inequality that holds exactly:
    M ≤ lse_others ≤ lse_all ≤ jensen_t ≤ jensen_x ≤ smooth and lhs ≤ m_bound.
    """

    lhs: Tensor
    m_max: Tensor
    m_bound: Tensor
    lse_others: Tensor
    lse_all: Tensor
    jensen_t: Tensor
    jensen_x: Tensor
    smooth: Tensor
    nu: Tensor

    def slacks(self) -> dict[str, Tensor]:
        """The gap of eq. (10), B/ν − lhs, split into the slack of each step of the
        proof, each (..., n); they sum to B/ν − lhs exactly:

        - ``normalisation``: M − lhs, eq. (33) before its factor 1/ν (≤ 0 where
          M ≥ 0: normalising a prototype shorter than 1 raises a positive
          similarity);
        - ``smooth_max``: lse_others − M, eq. (42) (Lemma A.1, at most log(n − 1)/α);
        - ``own_class``: lse_all − lse_others, eq. (43), the anchor's own class added
          to the sum (≥ 0, and large when the anchor is closer to its own class than
          to any other);
        - ``jensen_t``: eq. (45) − eq. (43) (Jensen over T'), ≥ 0;
        - ``jensen_x``: eq. (46) − eq. (45) (Jensen over X' within a class), ≥ 0;
        - ``imbalance``: B − eq. (46) (0 for balanced classes, Assumption 4.5);
        - ``one_over_nu``: B/ν − B, the factor 1/ν of eq. (10).
        """
        return {
            "normalisation": self.m_max - self.lhs,
            "smooth_max": self.lse_others - self.m_max,
            "own_class": self.lse_all - self.lse_others,
            "jensen_t": self.jensen_t - self.lse_all,
            "jensen_x": self.jensen_x - self.jensen_t,
            "imbalance": self.smooth - self.jensen_x,
            "one_over_nu": self.smooth / self.nu - self.smooth,
        }


def _repelling_chain(
    anchors: Tensor,
    anchor_labels: Tensor,
    views: Tensor,
    view_labels: Tensor,
    alpha: float,
):
    """Every step of the proof of Theorem 4.6 on representations; arguments as
    :func:`repelling_terms` (whose ``lhs``, ``nu`` and ``smooth`` it shares). The
    differences between consecutive steps are the slacks of the bound: where it is
    loose."""
    terms = repelling_terms(anchors, anchor_labels, views, view_labels, alpha)
    alpha = float(alpha)
    a, v = _normalise(anchors), _normalise(views)
    n_classes = int(max(anchor_labels.max(), view_labels.max())) + 1
    counts = torch.bincount(view_labels, minlength=n_classes)
    present = counts > 0
    one_hot = F.one_hot(view_labels, n_classes).to(v.dtype) / counts.clamp_min(1).to(
        v.dtype
    )  # (M, C): the class averages E_{X'|y'}
    sims = torch.einsum("...nd,...kmd->...knm", a, v)  # g, (..., K, n, M)
    by_class_t = sims @ one_hot  # E_{X'|y'} g per transformation, (..., K, n, C)
    by_class = by_class_t.mean(-3)  # E_{T',X'|y'} g, (..., n, C)
    others = present[None, :] & (
        torch.arange(n_classes, device=a.device)[None, :] != anchor_labels[:, None]
    )
    m_max = by_class.masked_fill(~others, -torch.inf).amax(-1)
    lse_others = masked_logsumexp(alpha * by_class, ~others) / alpha
    lse_all = masked_logsumexp(alpha * by_class, ~present) / alpha
    jensen_t = (masked_logsumexp(alpha * by_class_t, ~present) / alpha).mean(-2)
    # log Σ_{y'} E_{X'|y'} e^{αg} = log Σ_{y'} Σ_{j: y'_j = y'} e^{αg_j} / n_{y'}
    weights = torch.log(one_hot.sum(-1).clamp_min(1e-300))  # log(1/n_{y'_j}) per view
    jensen_x = (torch.logsumexp(alpha * sims + weights, -1) / alpha).mean(-2)
    m_bound = torch.maximum(m_max, m_max / terms.nu)
    return _RepellingChain(
        terms.lhs,
        m_max,
        m_bound,
        lse_others,
        lse_all,
        jensen_t,
        jensen_x,
        terms.smooth,
        terms.nu,
    )


def eq10_counterexample(
    dtype: torch.dtype = torch.float64,
) -> tuple[Tensor, Tensor, Tensor, Tensor, float]:
    """A configuration where eq. (10) fails and its corrected form max(B, B/ν) holds:
    (anchors, anchor_labels, views, view_labels, α) for :func:`repelling_terms`, the
    representations in the floating ``dtype``.

    One anchor (1, 0) of class 0 and six unit representations, all in the left
    half-plane, at 150°, 210° (class 0), 110°, 130° (class 1), 96° and 264° (class 2),
    one transformation (K = 1), α = 50: every similarity is negative, so B < 0, and then
    B/ν < B because ν < 1, which falls below the left side."""
    check_floating_dtype("dtype", dtype)

    def unit(degrees: float) -> Tensor:
        angle = math.radians(degrees)
        return torch.tensor([math.cos(angle), math.sin(angle)], dtype=dtype)

    views = torch.stack([unit(d) for d in (150, 210, 110, 130, 96, 264)])
    return (
        unit(0)[None],
        torch.tensor([0]),
        views[None],
        torch.tensor([0, 0, 1, 1, 2, 2]),
        50.0,
    )


# ---------------------------------------------------------------- prototype
# representation bias


def _eq51_bias(
    encoder: Forward,
    images: Tensor,
    labels: Tensor,
    strategy: str,
    generator: torch.Generator,
) -> Tensor:
    """The source's estimator (A.3.2, eq. (51)) of the prototype representation bias,
    eq. (16): E_{(X0,Y0)} ‖E_{T,X|Y0} f(T(X)) − E_T f(T(X0))‖ → (...,).

    For each (x_i, y_i) of ``images`` (n, C, H, W) and ``labels`` (n,) draw x'_i
    uniformly among the images of class y_i and one t_i, and average ‖f(t_i(x'_i)) −
    f(t_i(x_i))‖ (the same t_i on both: the crop, rotation, jitter and blur; a cutout
    square or a noise field, which mask or perturb the image rather than transform
    it, is drawn for each of the two views, see :data:`_PER_VIEW_PARTS`); by Jensen's
    inequality its expectation is ≥ eq. (16). Representations are normalised."""
    order = torch.argsort(labels, stable=True)
    counts = torch.bincount(labels)
    starts = torch.cumsum(counts, 0) - counts
    pick = (
        torch.rand(labels.shape, generator=generator, device=labels.device)
        * counts[labels]
    ).long()
    partner = order[starts[labels] + pick.clamp_max(counts[labels] - 1)]
    pair = torch.stack([images, images[partner]])  # (2, n, C, H, W)
    z = _encode_views(encoder, _paired_views(pair, strategy, generator))
    return (z[..., 1, :, :] - z[..., 0, :, :]).norm(dim=-1).mean(-1)


def _plugin_bias(surrogate: Tensor, prototypes: Tensor, labels: Tensor) -> Tensor:
    """The plug-in of eq. (16), the expectations replaced by K views per image:
    mean_i ‖µ̂_{y_i} − m̂_i‖ → (...,), µ̂ the class mean of all views, m̂_i the mean of
    image i's, from :func:`_plugin_prototypes`."""
    return (prototypes[..., labels, :] - surrogate).norm(dim=-1).mean(-1)


_PER_VIEW_PARTS = ("+cutout", "+noise")
"""The strategies whose last part (a cutout square, a noise field) the eq. (51)
estimator draws for each view of a pair: the rest of such a strategy is ``base``,
shared by the pair."""


def _paired_views(pair: Tensor, strategy: str, generator: torch.Generator) -> Tensor:
    """The views t_i(x_i), t_i(x'_i) of eq. (51) for ``pair`` (2, n, C, H, W): the
    transformation's parameters shared along the pair, but for the strategies of
    :data:`_PER_VIEW_PARTS`, whose added part is drawn for each view on top of a shared
    ``base``."""
    n = pair.shape[1]
    if strategy not in _PER_VIEW_PARTS:
        return augment(pair, strategy, generator, param_shape=(1, n))
    shared = augment(pair, BASE, generator, param_shape=(1, n))
    part = list(pipeline(strategy, *pair.shape[-2:]).children())[-1]
    flat = shared.reshape(-1, *pair.shape[2:])
    seed = int(torch.randint(2**62, (), generator=generator, device=generator.device))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        params = part.forward_parameters(flat.shape)
    params = {
        key: value.to(flat.device) if isinstance(value, Tensor) else value
        for key, value in params.items()
    }
    return part(flat, params=params).clamp(0.0, 1.0).reshape(pair.shape)


def _plugin_prototypes(
    encoder: Forward,
    images: Tensor,
    labels: Tensor,
    strategy: str,
    generator: torch.Generator,
    n_transforms: int,
) -> tuple[Tensor, Tensor]:
    """The surrogate prototypes m̂_i, the mean of K = ``n_transforms`` views of each
    image (..., n, d), and the class prototypes µ̂_c, the mean over the class's images
    (..., C, d) (normalised representations)."""
    z = _encode_views(
        encoder,
        augment(images.expand(n_transforms, *images.shape), strategy, generator),
    )
    surrogate = z.mean(-3)  # (..., n, d)
    one_hot = F.one_hot(labels).to(z.dtype)
    prototypes = torch.einsum("...nd,nc->...cd", surrogate, one_hot / one_hot.sum(0))
    return surrogate, prototypes


def _spread(prototypes: Tensor) -> Tensor:
    """The mean distance between the prototypes of two distinct classes,
    mean_{c ≠ c'} ‖µ_c − µ_{c'}‖ of prototypes (..., C, d) → (...,): the scale against
    which the bias can be read."""
    n_classes = prototypes.shape[-2]
    distances = torch.cdist(prototypes, prototypes)  # (..., C, C), zero diagonal
    return distances.sum((-2, -1)) / (n_classes * (n_classes - 1))
