"""What only Chapter 5 needs: Lee (2025), *Understanding Self-supervised Contrastive
Learning through Supervised Objectives* (TMLR 2025, arXiv 2510.10572).

- The augmentations T are :func:`ccl_helpers.data.augment`'s strategies, by name
  (:data:`ccl_helpers.data.STRATEGIES`), with parameters drawn per image or shared along
  chosen dimensions (one transformation t applied to many images).
- The attracting bound, Theorem 4.4 / eq. (8) (:func:`attracting_terms`,
  :func:`attracting_bound`).
- The repelling bound, Theorem 4.6 / eq. (10), in the source's form and in a corrected
  form (:func:`repelling_terms`, :func:`repelling_bound`), and every step of its
  proof (:func:`repelling_chain`).
- The prototype representation bias, eq. (16), estimated as in eq. (51) and directly
  (:func:`prototype_bias`), and the scale it can be read against, the distance between
  class prototypes (:func:`prototype_spread`).
- Training helpers for the (α, λ) grid: :func:`tiled_model`, :func:`two_view_batches`
  (the subsets are :mod:`ccl_helpers.data`'s); for many configurations in one stacked
  model, :func:`member_loss` (the loss kind, the similarity, α and λ chosen per member),
  :func:`seeded_model`, :func:`run_batches` and :func:`train_runs`, with the runs table
  of :data:`RUN_COLUMNS`.
- The standard evaluations (linear probe, k-NN) of every member: :func:`downstream`;
  the bounds and the representation norms along training: :func:`bound_evaluator`; the
  bias of each member under its strategy: :func:`bias_by_member`.
- The source's empirical claims as contrasts of arms of runs, one number per seed
  for :meth:`ccl_helpers.verdicts.Verdicts.test`: :func:`design_runs`,
  :func:`arm_values`, :func:`seed_matrix`, :func:`arm_contrast`,
  :func:`contrast_values`, :func:`estimates_table`, :func:`seed_rank_correlations`
  (Figure 3), :func:`curve_shape` (Figure 6); the
  spread of one run, :func:`pooled_seed_sd`; the claims themselves, :data:`CLAIMS`.

Representations are l2-normalised inside the bound functions (Assumption 4.2). Encoders
are callables images (N, C, H, W) → (..., N, d), e.g. a
:class:`ccl_helpers.train.StackedModel` (leading seed dimension) or an ``nn.Module``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor

from .checks import (
    check_batch,
    check_callable,
    check_choice,
    check_finite,
    check_frame,
    check_instance,
    check_int,
    check_labels,
    check_positive,
    check_positive_or_scalar_tensor,
    check_same_shape,
    check_tensor,
)
from .data import BASE, STRATEGIES, augment, pipeline
from .losses import SIMILARITIES, pairwise_similarity, result_dtype
from .verdicts import Claim, claims_by_key, estimate

Encoder = Callable[[Tensor], Tensor]

FASHION_MNIST_CLASSES = (
    "T-shirt/top",
    "trouser",
    "pullover",
    "dress",
    "coat",
    "sandal",
    "shirt",
    "sneaker",
    "bag",
    "ankle boot",
)
"""FashionMNIST's class names, by label."""


# ---------------------------------------------------------------- helpers


def _normalise(z: Tensor) -> Tensor:
    return F.normalize(z, dim=-1, eps=1e-12)


def _check_images(name: str, images: Tensor, min_ndim: int = 3) -> Tensor:
    """``images`` if it is a floating tensor (n, C, H, W) (≥ ``min_ndim`` dimensions)
    with finite entries (read once per call: an evaluation, not a training step); else
    ValueError."""
    check_tensor(name, images, min_ndim=min_ndim, floating=True)
    return check_finite(name, images)


ENCODE_CHUNK = 8192
"""Images per encoder call in the bounds and bias estimates: 16 views of 1,000 anchors
through dozens of stacked members (the paper scale) would need tens of GB at once."""


def _encode(encoder: Encoder, images: Tensor) -> Tensor:
    """f(images) for images (K, N, C, H, W) → (..., K, N, d), normalised, without
    gradients; the encoder sees (K·N, C, H, W) in chunks of :data:`ENCODE_CHUNK` images
    (:func:`~ccl_helpers.metrics.embed`)."""
    from . import metrics

    k, n = images.shape[:2]
    flat = images.reshape(k * n, *images.shape[2:])
    z = metrics.embed(encoder, flat, chunk_size=ENCODE_CHUNK)
    return _normalise(z.reshape(*z.shape[:-2], k, n, z.shape[-1]))


# ---------------------------------------------------------------- Theorem 4.4
# (attracting component)


class AttractingTerms(NamedTuple):
    """Per-sample terms of Theorem 4.4, each (..., n).

    lhs: −s(f(t(x)), m̂) with m̂ = (1/K) Σ_k f(t_k(x)); rhs: −(1/K) Σ_k s(f(t(x)),
    f(t_k(x)));
    gap: rhs − lhs; mean_norm: ‖m̂‖ (= 1 iff every view maps to the same unit vector);
    hemisphere: f(t(x))·m̂ (Assumption 4.3 asks ≥ 0); gap_stderr: the jackknife standard
    error of the gap as an estimate of the population gap (over the K transformations).
    """

    lhs: Tensor
    rhs: Tensor
    gap: Tensor
    mean_norm: Tensor
    hemisphere: Tensor
    gap_stderr: Tensor


def attracting_terms(anchors: Tensor, views: Tensor) -> AttractingTerms:
    """Theorem 4.4 on representations: anchors f(t(x)) (..., n, d), views f(t_k(x))
    (..., K, n, d), K ≥ 2.

    Both sides use the same K views, i.e. T is uniform over the K drawn transformations;
    the theorem holds exactly for this distribution (so ``gap ≥ 0`` whenever
    ``hemisphere ≥ 0``), and the sides estimate their population values with the stated
    jackknife standard error.
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
    return AttractingTerms(
        lhs, rhs, gap, mean_view.norm(dim=-1), (a * mean_view).sum(-1), stderr
    )


def attracting_bound(
    encoder: Encoder,
    images: Tensor,
    strategy: str,
    generator: torch.Generator,
    *,
    n_transforms: int = 16,
) -> AttractingTerms:
    """Theorem 4.4 for every image x of ``images`` (n, C, H, W): the anchor view t(x)
    and K = ``n_transforms`` independent views t_k(x), all drawn from ``strategy``; see
    :func:`attracting_terms`."""
    check_callable("encoder", encoder)
    _check_images("images", images)
    check_int("n_transforms", n_transforms, 2)
    views = augment(images.expand(n_transforms + 1, *images.shape), strategy, generator)
    z = _encode(encoder, views)  # (..., K+1, n, d)
    return attracting_terms(z[..., 0, :, :], z[..., 1:, :, :])


# ---------------------------------------------------------------- Theorem 4.6
# (repelling component)


class RepellingTerms(NamedTuple):
    """Per-sample terms of Theorem 4.6, each (..., n).

    lhs: max_{y' ≠ y} s(f(t(x)), µ_{y'}), µ_{y'} = E_{T',X'|y'} f(T'(X'));
    nu: ν = min_{y' ≠ y} ‖µ_{y'}‖;
    smooth: B = E_{T'}[(1/α) log E_{X'} exp(α s(f(t(x)), f(T'(X'))))] + (1/α)
    log(1/p_min) (p_min the smallest class probability of X'; log(1/p_min) = log n under
    Assumption 4.5);
    rhs: B/ν, the right-hand side of eq. (10); gap: rhs − lhs;
    rhs_corrected: max(B, B/ν), which bounds lhs without the sign condition B ≥ 0;
    gap_stderr: standard error of B/ν over the K' transformations (std/√K').
    """

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
) -> RepellingTerms:
    """Theorem 4.6 on representations.

    Args:
        anchors: f(t(x)) (..., n, d); anchor_labels: y (n,).
        views: f(t'_k(x'_j)) (..., K, M, d), transformation t'_k shared by row k (T'
            independent of X'); (T', X') is taken uniform over the K rows × M images, so
            the theorem holds exactly for it.
        view_labels: y'_j (M,), every class of ``anchor_labels`` present, at least two
            classes.
        alpha: α > 0.
    """
    alpha = check_positive("alpha", alpha)
    check_tensor("anchors", anchors, min_ndim=2, floating=True)
    check_tensor("views", views, min_ndim=3, floating=True)
    if views.shape[-1] != anchors.shape[-1] or views.shape[:-3] != anchors.shape[:-2]:
        raise ValueError(
            "views must have shape (..., K, M, d) with (..., n, d) = the shape of "
            f"anchors, {tuple(anchors.shape)}, got {tuple(views.shape)}"
        )
    check_labels("anchor_labels", anchor_labels, n=anchors.shape[-2])
    check_labels("view_labels", view_labels, n=views.shape[-2])
    n_classes = int(max(anchor_labels.max(), view_labels.max())) + 1
    counts = torch.bincount(view_labels, minlength=n_classes)
    present = counts > 0
    if int(present.sum()) < 2 or not bool(present[anchor_labels].all()):
        raise ValueError(
            "view_labels must hold at least two classes, including every "
            "class of anchor_labels"
        )
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
    return RepellingTerms(
        lhs, nu, smooth, rhs, rhs - lhs, torch.maximum(smooth, rhs), stderr
    )


class RepellingChain(NamedTuple):
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


def repelling_chain(
    anchors: Tensor,
    anchor_labels: Tensor,
    views: Tensor,
    view_labels: Tensor,
    alpha: float = 1.0,
) -> RepellingChain:
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
    lse_others = (
        torch.logsumexp((alpha * by_class).masked_fill(~others, -torch.inf), -1) / alpha
    )
    lse_all = (
        torch.logsumexp((alpha * by_class).masked_fill(~present, -torch.inf), -1)
        / alpha
    )
    jensen_t = (
        torch.logsumexp((alpha * by_class_t).masked_fill(~present, -torch.inf), -1)
        / alpha
    ).mean(-2)
    # log Σ_{y'} E_{X'|y'} e^{αg} = log Σ_{y'} Σ_{j: y'_j = y'} e^{αg_j} / n_{y'}
    weights = torch.log(one_hot.sum(-1).clamp_min(1e-300))  # log(1/n_{y'_j}) per view
    jensen_x = (torch.logsumexp(alpha * sims + weights, -1) / alpha).mean(-2)
    m_bound = torch.maximum(m_max, m_max / terms.nu)
    return RepellingChain(
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


def eq10_counterexample() -> tuple[Tensor, Tensor, Tensor, Tensor, float]:
    """A configuration where eq. (10) fails and its corrected form max(B, B/ν) holds:
    (anchors, anchor_labels, views, view_labels, α) for :func:`repelling_terms`.

    One anchor (1, 0) of class 0 and six unit representations, all in the left
    half-plane, at 150°, 210° (class 0), 110°, 130° (class 1), 96° and 264° (class 2),
    one transformation (K = 1), α = 50: every similarity is negative, so B < 0, and then
    B/ν < B because ν < 1, which falls below the left side."""

    def unit(degrees: float) -> Tensor:
        angle = math.radians(degrees)
        return torch.tensor([math.cos(angle), math.sin(angle)], dtype=torch.float64)

    views = torch.stack([unit(d) for d in (150, 210, 110, 130, 96, 264)])
    return (
        unit(0)[None],
        torch.tensor([0]),
        views[None],
        torch.tensor([0, 0, 1, 1, 2, 2]),
        50.0,
    )


def repelling_bound(
    encoder: Encoder,
    images: Tensor,
    labels: Tensor,
    pool_images: Tensor,
    pool_labels: Tensor,
    strategy: str,
    generator: torch.Generator,
    *,
    alpha: float = 1.0,
    n_transforms: int = 4,
) -> RepellingTerms:
    """Theorem 4.6 for every image x of ``images`` (n, C, H, W) with labels (n,): one
    anchor view t(x); X' uniform over ``pool_images`` (M, C, H, W) with ``pool_labels``
    (M,) (balanced for Assumption 4.5, see :func:`ccl_helpers.data.balanced_subset`); T'
    uniform over K = ``n_transforms`` transformations drawn from ``strategy``, each
    applied to the whole pool. See :func:`repelling_terms`."""
    check_callable("encoder", encoder)
    _check_images("images", images)
    _check_images("pool_images", pool_images)
    check_labels("labels", labels, n=images.shape[0])
    check_labels("pool_labels", pool_labels, n=pool_images.shape[0])
    check_int("n_transforms", n_transforms, 1)
    anchors = _encode(encoder, augment(images.unsqueeze(0), strategy, generator))[
        ..., 0, :, :
    ]
    pool = augment(
        pool_images.expand(n_transforms, *pool_images.shape),
        strategy,
        generator,
        param_shape=(n_transforms, 1),
    )
    return repelling_terms(anchors, labels, _encode(encoder, pool), pool_labels, alpha)


# ---------------------------------------------------------------- prototype
# representation bias


def prototype_bias(
    encoder: Encoder,
    images: Tensor,
    labels: Tensor,
    strategy: str,
    generator: torch.Generator,
    *,
    method: str = "eq51",
    n_transforms: int = 8,
) -> Tensor:
    """The prototype representation bias, eq. (16): E_{(X0,Y0)} ‖E_{T,X|Y0} f(T(X)) −
    E_T f(T(X0))‖ → (...,).

    ``method="eq51"`` (the source's estimator, A.3.2): for each (x_i, y_i) draw x'_i
    uniformly among the images of class y_i and one t_i, and average ‖f(t_i(x'_i)) −
    f(t_i(x_i))‖ (the same t_i on both: the crop, rotation, jitter and blur; a cutout
    square or a noise field, which mask or perturb the image rather than transform
    it, is drawn for each of the two views, see :data:`PER_VIEW_PARTS`); by Jensen's
    inequality its expectation is ≥ eq. (16). ``method="plugin"``: eq. (16) with the
    expectations replaced by K = ``n_transforms`` views per image: ‖µ̂_{y_i} − m̂_i‖
    averaged over i, µ̂ the class mean of all views. Representations are normalised.
    """
    check_callable("encoder", encoder)
    _check_images("images", images)
    check_labels("labels", labels, n=images.shape[0])
    if method not in ("eq51", "plugin"):
        raise ValueError(f"method must be 'eq51' or 'plugin', got {method!r}")
    check_int("n_transforms", n_transforms, 1)
    if method == "eq51":
        order = torch.argsort(labels, stable=True)
        counts = torch.bincount(labels)
        starts = torch.cumsum(counts, 0) - counts
        pick = (
            torch.rand(labels.shape, generator=generator, device=labels.device)
            * counts[labels]
        ).long()
        partner = order[starts[labels] + pick.clamp_max(counts[labels] - 1)]
        pair = torch.stack([images, images[partner]])  # (2, n, C, H, W)
        z = _encode(encoder, _paired_views(pair, strategy, generator))
        return (z[..., 1, :, :] - z[..., 0, :, :]).norm(dim=-1).mean(-1)
    surrogate, prototypes = _plugin_prototypes(
        encoder, images, labels, strategy, generator, n_transforms
    )
    return (prototypes[..., labels, :] - surrogate).norm(dim=-1).mean(-1)


PER_VIEW_PARTS = ("+cutout", "+noise")
"""The strategies whose last part (a cutout square, a noise field) the eq. (51)
estimator draws for each view of a pair: the rest of such a strategy is ``base``,
shared by the pair."""


def _paired_views(pair: Tensor, strategy: str, generator: torch.Generator) -> Tensor:
    """The views t_i(x_i), t_i(x'_i) of eq. (51) for ``pair`` (2, n, C, H, W): the
    transformation's parameters shared along the pair, but for the strategies of
    :data:`PER_VIEW_PARTS`, whose added part is drawn for each view on top of a shared
    ``base``."""
    n = pair.shape[1]
    if strategy not in PER_VIEW_PARTS:
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
    encoder: Encoder,
    images: Tensor,
    labels: Tensor,
    strategy: str,
    generator: torch.Generator,
    n_transforms: int,
) -> tuple[Tensor, Tensor]:
    """The surrogate prototypes m̂_i, the mean of K views of each image (..., n, d), and
    the class prototypes µ̂_c, the mean over the class's images (..., C, d)."""
    z = _encode(
        encoder,
        augment(images.expand(n_transforms, *images.shape), strategy, generator),
    )
    surrogate = z.mean(-3)  # (..., n, d)
    one_hot = F.one_hot(labels).to(z.dtype)
    prototypes = torch.einsum("...nd,nc->...cd", surrogate, one_hot / one_hot.sum(0))
    return surrogate, prototypes


def prototype_spread(
    encoder: Encoder,
    images: Tensor,
    labels: Tensor,
    strategy: str,
    generator: torch.Generator,
    *,
    n_transforms: int = 8,
) -> Tensor:
    """The mean distance between the prototypes of two distinct classes,
    mean_{c ≠ c'} ‖µ̂_c − µ̂_{c'}‖ → (...,), with µ̂_c the class mean of K =
    ``n_transforms`` views per image (normalised representations), as in
    :func:`prototype_bias`'s plug-in: the scale against which that bias can be read
    (every class present in ``labels``)."""
    check_callable("encoder", encoder)
    _check_images("images", images)
    check_labels("labels", labels, n=images.shape[0])
    check_int("n_transforms", n_transforms, 1)
    if bool((torch.bincount(labels) == 0).any()) or int(labels.max()) < 1:
        raise ValueError("labels must hold every class 0..C-1, at least two classes")
    _, prototypes = _plugin_prototypes(
        encoder, images, labels, strategy, generator, n_transforms
    )
    return _spread(prototypes)


def _spread(prototypes: Tensor) -> Tensor:
    """mean_{c ≠ c'} ‖µ_c − µ_{c'}‖ of prototypes (..., C, d) → (...,)."""
    n_classes = prototypes.shape[-2]
    distances = torch.cdist(prototypes, prototypes)  # (..., C, C), zero diagonal
    return distances.sum((-2, -1)) / (n_classes * (n_classes - 1))


# ---------------------------------------------------------------- training helpers


def seeded_model(
    make_module: Callable[[], torch.nn.Module],
    seeds: Sequence[int],
    device: torch.device | str = "cpu",
):
    """A :class:`~ccl_helpers.train.StackedModel` whose member i starts from the
    initialisation of seed ``seeds[i]`` (``make_module()`` right after
    ``torch.manual_seed(seeds[i])``, as a single run with that seed): members given one
    seed start equal, so configurations can be paired by seed. Its ``seeds``, the labels
    of the training history, are the member indices 0 … S − 1."""
    from torch.func import stack_module_state

    from .train import StackedModel

    check_callable("make_module", make_module)
    if isinstance(seeds, str | bytes) or not isinstance(seeds, Sequence) or not seeds:
        raise ValueError(
            f"seeds must be a non-empty sequence of ints ≥ 0, got {seeds!r}"
        )
    seeds = [check_int("seeds[i]", seed, 0) for seed in seeds]
    model = StackedModel(make_module, 1, seed=seeds[0], device=device)
    copies = []
    for seed in seeds:
        torch.manual_seed(seed)
        copies.append(make_module().to(device))
    model.params, model.buffers = stack_module_state(copies)
    model.n_seeds = len(seeds)
    model.seeds = list(range(len(seeds)))
    return model


def tiled_model(
    make_module: Callable[[], torch.nn.Module],
    n_seeds: int,
    n_configs: int,
    device: torch.device | str = "cpu",
):
    """:func:`seeded_model` of ``n_configs × n_seeds`` copies, config-major: copy
    ``c · n_seeds + s`` starts from seed ``s``'s initialisation, so the configurations
    share their starts."""
    seeds = list(range(check_int("n_seeds", n_seeds)))
    return seeded_model(make_module, seeds * check_int("n_configs", n_configs), device)


def two_view_batches(
    images: Tensor,
    n_models: int,
    batch_size: int,
    strategy: str | list[str],
    generator: torch.Generator,
    *,
    n_streams: int | None = None,
) -> Callable[[int], tuple[Tensor, Tensor]]:
    """step ↦ (view1, view2), each (n_models, batch_size, C, H, W): ``batch_size``
    distinct images drawn uniformly from ``images``, each transformed twice,
    independently.

    ``n_streams`` (dividing ``n_models``; default ``n_models``) independent batches are
    drawn and tiled config-major (model i gets stream i mod n_streams), matching
    :func:`tiled_model`. ``strategy`` may be a list with one strategy name
    (:data:`ccl_helpers.data.STRATEGIES`) per stream.
    """
    _check_images("images", images)
    check_int("n_models", n_models)
    n_streams = n_models if n_streams is None else check_int("n_streams", n_streams)
    if n_models % n_streams:
        raise ValueError(
            f"n_streams must divide n_models = {n_models}, got {n_streams}"
        )
    check_int("batch_size", batch_size, 2, images.shape[0])
    strategies = strategy if isinstance(strategy, list) else [strategy] * n_streams
    if len(strategies) != n_streams:
        raise ValueError(
            f"strategy must be one strategy name or a list of n_streams = "
            f"{n_streams}, got {len(strategies)}"
        )
    for name in strategies:
        check_choice("strategy", name, STRATEGIES)

    groups = {}
    for i, s in enumerate(strategies):
        groups.setdefault(s, []).append(i)
    groups = [
        (s, torch.tensor(rows, device=images.device)) for s, rows in groups.items()
    ]

    def sample(step: int) -> tuple[Tensor, Tensor]:
        index = torch.rand(
            n_streams, images.shape[0], generator=generator, device=images.device
        ).argsort(-1)
        batch = images[index[:, :batch_size]]  # (streams, B, C, H, W)
        views = []
        for _ in range(2):
            view = torch.empty_like(batch)
            for s, rows in groups:  # one call per distinct strategy
                view[rows] = augment(batch[rows], s, generator)
            views.append(view)
        reps = n_models // n_streams
        return tuple(v.repeat(reps, *([1] * (v.ndim - 1))) for v in views)

    return sample


MEMBER_LOSSES = ("generalized", "balanced", "cross_view")
"""Loss kinds of :func:`member_loss`, by code 0, 1, 2: generalized NT-Xent (positive
among the negatives), the balanced loss eq. (17) and eq. (14) (negatives from the other
view only)."""


def member_loss(
    z1: Tensor, z2: Tensor, alpha, lam, loss_code: Tensor, similarity_code: Tensor
) -> Tensor:
    r"""The losses of Lee (2025), Section 6, with the kind and the similarity chosen by
    integer codes, so that members of one stacked model (vmapped) can differ in them.

    .. math::
        \ell_i = -s(z_i, z_{\operatorname{pos}(i)})
                 + \lambda\,\frac{1}{\alpha}\log\sum_{j \in N_i} e^{\alpha s(z_i, z_j)},

    mean over the 2m anchors of the views z1, z2 (m, d), with N_i every other view
    ``generalized`` (code 0, :func:`~ccl_helpers.losses.generalized_nt_xent_loss`),
    every other view but the positive ``balanced`` (1, eq. (17),
    :func:`~ccl_helpers.losses.balanced_contrastive_loss`), or the other view's
    samples but the positive ``cross_view`` (2, eq. (14) divided by α, symmetrised:
    the mean of :func:`~ccl_helpers.losses.bound_derived_loss` from each view). s is
    ``SIMILARITIES[similarity_code]``. The similarity matrix is selected (by
    ``torch.where``, so that the codes may be batched under vmap and grad) before the
    log-sum-exp, so an unselected similarity never enters the loss or its gradient;
    codes' values are not checked here (no data-dependent control flow under vmap): a
    code out of range selects the last kind or similarity. :func:`run_batches` checks
    them. Shapes, dtypes and real α, λ are checked (a tensor's value only outside
    vmap and grad).

    Args:
        alpha, lam: α, λ > 0 (reals or 0-dim tensors).
        loss_code, similarity_code: 0-dim integer tensors (under vmap, one per member).

    Returns the mean loss, 0-dim, in the dtype of z1 (float32 for float16; similarities
    and log-sum-exp in at least float32, as the losses'). A NaN propagates.
    """
    check_tensor("z1", z1, min_ndim=2, floating=True)
    check_tensor("z2", z2, min_ndim=2, floating=True)
    check_same_shape("z2", z2, "z1", z1)
    check_positive_or_scalar_tensor("alpha", alpha)
    check_positive_or_scalar_tensor("lam", lam)
    check_tensor("loss_code", loss_code, ndim=0, integer=True)
    check_tensor("similarity_code", similarity_code, ndim=0, integer=True)
    m = z1.shape[-2]
    views = torch.cat([z1, z2], dim=-2)  # (2m, d)
    sims = pairwise_similarity(views, views, SIMILARITIES[-1])
    for code in range(len(SIMILARITIES) - 2, -1, -1):  # torch.where: vmap-safe
        chosen = pairwise_similarity(views, views, SIMILARITIES[code])
        sims = torch.where(similarity_code == code, chosen, sims)
    eye = torch.eye(2 * m, dtype=torch.bool, device=sims.device)
    positive_mask = eye.roll(m, dims=-1)
    block = torch.ones(m, m, dtype=torch.bool, device=sims.device)
    same_view = torch.block_diag(block, block)
    excluded = torch.where(
        loss_code == 0,
        eye,
        torch.where(loss_code == 1, eye | positive_mask, same_view | positive_mask),
    )
    # (2m,): row i's positive, column i + m mod 2m (no boolean mask: no host read)
    positive = torch.cat([sims.diagonal(m, -2, -1), sims.diagonal(-m, -2, -1)], -1)
    logits = (alpha * sims).masked_fill(excluded, -torch.inf)
    per_anchor = -positive + lam * torch.logsumexp(logits, dim=-1) / alpha
    return per_anchor.mean().to(result_dtype(z1))


RUN_COLUMNS = ("pool", "seed", "strategy", "loss", "similarity", "alpha", "lam")
"""The columns of a runs table (one row per stacked member): the image pool's name, the
seed (initialisation and image stream), the augmentation strategy, the loss kind
(:data:`MEMBER_LOSSES`), the similarity (:data:`~ccl_helpers.losses.SIMILARITIES`), α
and λ."""


def _step_seed(*keys: int) -> int:
    """A 63-bit seed that is a function of ``keys`` only."""
    state = np.random.SeedSequence(list(keys)).generate_state(1, np.uint64)[0]
    return int(state >> np.uint64(1))


def run_batches(
    pools: Mapping[str, Tensor], runs: pd.DataFrame, batch_size: int, seed: int = 0
) -> Callable[[int], tuple[Tensor, ...]]:
    """step ↦ (view1, view2, alpha, lam, loss_code, similarity_code), each with the
    leading dimension S = ``len(runs)``: the batch of every member of a stacked model.

    A pure function of the step. The members that share (pool, seed) see the same
    ``batch_size`` distinct images of the pool (drawn uniformly, by a generator seeded
    from ``seed``, the step, the pool and the member's seed); those that also share the
    strategy see the same two views (:func:`~ccl_helpers.data.augment`, one call per
    strategy and view). So configurations that differ only in the loss, the similarity,
    α or λ are paired by seed.

    Args:
        pools: image pools by name, each (n, C, H, W) with one image shape, on one
            device.
        runs: one row per member with the columns :data:`RUN_COLUMNS`.
    """
    if not isinstance(pools, Mapping) or not pools:
        raise ValueError(f"pools must map names to image pools, got {pools!r}")
    check_frame("runs", runs, RUN_COLUMNS)
    check_int("batch_size", batch_size, 2)
    check_int("seed", seed, 0)
    shapes = {tuple(pool.shape[1:]) for pool in pools.values()}
    if len(shapes) > 1:
        raise ValueError(f"pools must hold images of one shape, got {sorted(shapes)}")
    for name, pool in pools.items():
        check_tensor(f"pools[{name!r}]", pool, min_ndim=4, floating=True)
        if not 2 <= batch_size <= pool.shape[0]:
            raise ValueError(
                f"batch_size must be in 2..{pool.shape[0]} (pool {name!r}), got "
                f"{batch_size}"
            )
    for column, names in (
        ("pool", list(pools)),
        ("strategy", STRATEGIES),
        ("loss", MEMBER_LOSSES),
        ("similarity", SIMILARITIES),
    ):
        unknown = sorted(set(runs[column]) - set(names))
        if unknown:
            raise ValueError(
                f"runs[{column!r}] must be in {tuple(names)}, got {unknown}"
            )
    for column in ("alpha", "lam"):
        if not (runs[column] > 0).all():
            raise ValueError(f"runs[{column!r}] must be > 0, got {list(runs[column])}")
    device = next(iter(pools.values())).device
    image_streams = runs[["pool", "seed"]].drop_duplicates().reset_index(drop=True)
    view_streams = runs[["pool", "seed", "strategy"]].drop_duplicates()
    view_streams = view_streams.reset_index(drop=True)

    def position(table, keys):
        lookup = {tuple(row): i for i, row in enumerate(table.itertuples(index=False))}
        return torch.tensor([lookup[tuple(k)] for k in keys], device=device)

    view_image = position(
        image_streams, view_streams[["pool", "seed"]].itertuples(index=False)
    )
    member_view = position(
        view_streams, runs[["pool", "seed", "strategy"]].itertuples(index=False)
    )
    by_strategy = {
        name: torch.tensor(rows.index.tolist(), device=device)
        for name, rows in view_streams.groupby("strategy", sort=True)
    }
    pool_index = {name: i for i, name in enumerate(pools)}
    constants = (
        torch.tensor(runs["alpha"].to_numpy(), dtype=torch.float32, device=device),
        torch.tensor(runs["lam"].to_numpy(), dtype=torch.float32, device=device),
        torch.tensor([MEMBER_LOSSES.index(v) for v in runs["loss"]], device=device),
        torch.tensor(
            [SIMILARITIES.index(v) for v in runs["similarity"]], device=device
        ),
    )

    def sample(step: int) -> tuple[Tensor, ...]:
        images = []
        for pool, member_seed in image_streams.itertuples(index=False):
            images_of = pools[pool]
            g = torch.Generator(device=device).manual_seed(
                _step_seed(seed, step, 0, pool_index[pool], int(member_seed))
            )
            pick = torch.randperm(images_of.shape[0], generator=g, device=device)
            images.append(images_of[pick[:batch_size]])
        batch = torch.stack(images)[view_image]  # (view streams, B, C, H, W)
        views = []
        for view in range(2):
            out = torch.empty_like(batch)
            for index, (name, rows) in enumerate(by_strategy.items()):
                g = torch.Generator(device=device).manual_seed(
                    _step_seed(seed, step, 1, view, index)
                )
                out[rows] = augment(batch[rows], name, g)
            views.append(out[member_view])
        return (*views, *constants)

    return sample


def run_loss(forward: Encoder, batch: tuple[Tensor, ...]) -> Tensor:
    """The training loss of one member on its slice of a :func:`run_batches` batch
    (view1, view2, α, λ, loss_code, similarity_code): :func:`member_loss` of
    f(view1), f(view2) (m, d). A ``loss_fn`` for :func:`~ccl_helpers.train.train`
    (shape checks only: it runs under vmap)."""
    check_callable("forward", forward)
    view1, view2, *rest = check_batch(
        "batch", batch, ("floating",) * 4 + ("integer",) * 2
    )
    return member_loss(forward(view1), forward(view2), *rest)


def train_runs(
    runs: pd.DataFrame,
    pools: Mapping[str, Tensor],
    make_module: Callable[[], torch.nn.Module],
    n_steps: int,
    *,
    batch_size: int,
    lr: float = 1e-3,
    seed: int = 0,
    evaluate=None,
    eval_steps=(),
    desc: str | None = "runs",
):
    """Every member of ``runs`` trained together (vmapped) by
    :func:`~ccl_helpers.train.train` on :func:`run_loss` with :func:`run_batches`,
    from :func:`seeded_model`'s initialisations (member i from seed ``runs.seed[i]``).

    Returns the trained StackedModel and its tidy history, with the runs table's
    columns joined on the member (the history's ``seed`` column is the member index,
    renamed ``member``)."""
    from .train import train

    sample = run_batches(pools, runs, batch_size, seed)
    device = next(iter(pools.values())).device
    model = seeded_model(make_module, [int(v) for v in runs["seed"]], device)
    history = train(
        model,
        run_loss,
        sample,
        n_steps,
        lr=lr,
        evaluate=evaluate,
        eval_steps=eval_steps,
        desc=desc,
    ).rename(columns={"seed": "member"})
    table = runs.reset_index(drop=True).rename_axis("member").reset_index()
    return model, history.merge(table, on="member", how="left")


def downstream(
    encoder: Encoder,
    fit_images: Tensor,
    fit_labels: Tensor,
    test_images: Tensor,
    test_labels: Tensor,
    *,
    k: Sequence[int] = (5,),
    max_iter: int = 100,
    chunk_size: int = 1000,
    per_class: bool = False,
) -> pd.DataFrame:
    """The standard evaluations of a representation, one row per member: the accuracy
    of the linear probe over all classes (fitted on the fit images' features
    standardised by :func:`~ccl_helpers.metrics.standardise`, evaluated on the test
    images), the cosine k-NN accuracy for each k (on the raw features), the mean feature
    norm on the fit images, and ``finite``. A member whose features are not all finite
    (a diverged run) is kept, with ``finite`` False and NaN accuracies. With
    ``per_class``, also the probe's accuracy on the test images of each class c,
    ``linear_probe_class_<c>`` (on a balanced test set their mean is ``linear_probe``).
    """
    from . import metrics

    if not isinstance(per_class, bool):
        raise ValueError(f"per_class must be True or False, got {per_class!r}")

    for name, images, labels in (
        ("fit", fit_images, fit_labels),
        ("test", test_images, test_labels),
    ):
        _check_images(f"{name}_images", images, min_ndim=2)
        check_labels(f"{name}_labels", labels, n=images.shape[0])
    fit = metrics.embed(encoder, fit_images, chunk_size=chunk_size)
    test = metrics.embed(encoder, test_images, chunk_size=chunk_size)
    if fit.ndim == 2:
        fit, test = fit[None], test[None]
    finite = (
        torch.isfinite(fit).all((-2, -1)) & torch.isfinite(test).all((-2, -1))
    ).cpu()
    table = pd.DataFrame(
        {"finite": finite.numpy(), "norm_mean": fit.norm(dim=-1).mean(-1).cpu().numpy()}
    )
    columns = ["linear_probe", *(f"knn_{n}" for n in k)]
    table[columns] = np.nan
    if bool(finite.any()):
        ok = finite.to(fit.device)
        fit_s, test_s = metrics.standardise(fit[ok], test[ok])
        probe = metrics.linear_probe(
            fit_s,
            fit_labels,
            test_s,
            test_labels,
            task_size=int(torch.unique(fit_labels).numel()),
            max_iter=max_iter,
        )["accuracy"]
        table.loc[finite.numpy(), "linear_probe"] = probe.cpu().numpy()
        if per_class:
            n_classes = int(max(fit_labels.max(), test_labels.max())) + 1
            tasks = metrics.all_tasks(n_classes, n_classes, fit.device)
            rows = metrics.fit_linear_classifiers(
                fit_s, fit_labels, tasks, max_iter=max_iter
            )[..., 0, :, :]  # (S, C, d): the one task of all classes
            predicted = (test_s @ rows.transpose(-1, -2)).argmax(-1)  # (S, n)
            hit = (predicted == test_labels).to(torch.float64)
            for c in range(n_classes):
                column = f"linear_probe_class_{c}"
                chosen = test_labels == c
                table[column] = np.nan
                if bool(chosen.any()):
                    found = hit[:, chosen].mean(-1).cpu().numpy()
                    table.loc[finite.numpy(), column] = found
        for n in k:
            accuracy = metrics.knn_accuracy(
                fit[ok], fit_labels, test[ok], test_labels, k=n
            )
            table.loc[finite.numpy(), f"knn_{n}"] = accuracy.cpu().numpy()
    return table.rename_axis("member")


# ---------------------------------------------------------------- claims: arms of runs


def arm_values(results: pd.DataFrame, metric: str, arm: Mapping) -> np.ndarray:
    """The values of ``metric`` of the members of one arm, one per seed in seed order.

    results: one row per member with the columns :data:`RUN_COLUMNS` and ``metric``;
    arm: column → value for the columns that define the arm (the others are free, but
    the arm must hold one member per seed)."""
    check_frame("results", results)
    unknown = set(arm) - set(results.columns)
    if unknown or metric not in results.columns:
        raise ValueError(
            f"arm and metric must name columns of results, got {sorted(unknown)} and "
            f"{metric!r}"
        )
    chosen = results
    for column, value in arm.items():
        chosen = chosen[chosen[column] == value]
    if chosen.empty or chosen["seed"].duplicated().any():
        raise ValueError(
            f"arm {dict(arm)} must select one member per seed, got seeds "
            f"{chosen['seed'].tolist()}"
        )
    return chosen.sort_values("seed")[metric].to_numpy(dtype=np.float64)


def seed_matrix(
    results: pd.DataFrame, metric: str, arms: Sequence[Mapping]
) -> np.ndarray:
    """:func:`arm_values` of each of ``arms``, stacked: (len(arms), n_seeds). Every arm
    must hold the same seeds."""
    if not arms:
        raise ValueError("arms must hold at least one arm")
    check_frame("results", results)
    seeds = [arm_values(results, "seed", arm) for arm in arms]
    if any(not np.array_equal(seeds[0], other) for other in seeds[1:]):
        raise ValueError(f"the arms must hold the same seeds, got {seeds}")
    return np.stack([arm_values(results, metric, arm) for arm in arms])


def arm_contrast(
    results: pd.DataFrame, metric: str, terms: Sequence[tuple[Mapping, float]]
) -> np.ndarray:
    """A contrast of arms, one number per seed: d_s = Σ_j c_j · value_j,s over the
    ``terms`` (arm, coefficient c_j), e.g. [(A, 1), (B, −1)] for "A beats B", four
    terms for an interaction, [(A, 1)] + [(B_j, −1/5)] for "A beats the mean of five".
    Every arm must hold the same seeds; returns (n_seeds,) in seed order."""
    if isinstance(terms, str | bytes) or not isinstance(terms, Sequence) or not terms:
        raise ValueError(
            f"terms must be a non-empty list of (arm, coefficient), got {terms!r}"
        )
    for i, term in enumerate(terms):
        if not (isinstance(term, tuple) and len(term) == 2):
            raise ValueError(f"terms[{i}] must be (arm, coefficient), got {term!r}")
        check_instance(f"terms[{i}][0]", term[0], Mapping)
        coefficient = term[1]
        if (
            isinstance(coefficient, bool)
            or not isinstance(coefficient, int | float | np.integer | np.floating)
            or not math.isfinite(coefficient)
        ):
            raise ValueError(
                f"terms[{i}][1] must be a finite real number, got {coefficient!r}"
            )
    matrix = seed_matrix(results, metric, [arm for arm, _ in terms])
    coefficients = np.array([float(c) for _, c in terms], dtype=np.float64)
    return coefficients @ matrix


def contrast_values(
    results: pd.DataFrame,
    contrasts: Mapping[str, Sequence[tuple[Mapping, float]]],
    metrics: Sequence[str],
) -> pd.DataFrame:
    """:func:`arm_contrast` of each named contrast (name → terms) for each of
    ``metrics``: a frame indexed by (contrast, metric), one column per seed."""
    if not isinstance(contrasts, Mapping) or not contrasts:
        raise ValueError(
            f"contrasts must be a non-empty mapping name → terms, got {contrasts!r}"
        )
    if (
        isinstance(metrics, str | bytes)
        or not isinstance(metrics, Sequence)
        or not metrics
    ):
        raise ValueError(
            f"metrics must be a non-empty list of columns, got {metrics!r}"
        )
    check_frame("results", results)
    unknown = [m for m in metrics if m not in results.columns]
    if unknown:
        raise ValueError(f"metrics must name columns of results, got {unknown}")
    rows = {
        (name, metric): arm_contrast(results, metric, terms)
        for name, terms in contrasts.items()
        for metric in metrics
    }
    first = next(iter(contrasts.values()))[0][0]
    seeds = arm_values(results, "seed", first).astype(int)
    frame = pd.DataFrame(list(rows.values()), columns=pd.Index(seeds, name="seed"))
    frame.index = pd.MultiIndex.from_tuples(list(rows), names=["contrast", "metric"])
    return frame


def estimates_table(values: pd.DataFrame) -> pd.DataFrame:
    """:func:`ccl_helpers.verdicts.estimate` of each row of ``values`` (one value per
    seed in each column, e.g. :func:`contrast_values`): a frame with the same index
    and the columns estimate, se, low, high (the 95 % t interval) and n."""
    check_frame("values", values)
    found = [estimate(row.to_numpy(dtype=np.float64)) for _, row in values.iterrows()]
    columns = ["estimate", "se", "low", "high", "n"]
    table = pd.DataFrame([[getattr(f, c) for c in columns] for f in found])
    table.columns, table.index = columns, values.index
    return table


def seed_rank_correlations(x, y) -> np.ndarray:
    """Spearman's rank correlation of x and y across the groups (e.g. augmentation
    strategies), computed within each seed: one number per seed.

    x, y: arrays (groups ≥ 3, seeds ≥ 2) of finite values, the same seed in the same
    column of both (e.g. :func:`seed_matrix`); within each seed neither may be constant
    over the groups (the correlation would be undefined). Returns (seeds,)."""
    from scipy import stats

    a, b = (
        np.asarray(v.cpu() if isinstance(v, Tensor) else v, dtype=np.float64)
        for v in (x, y)
    )
    if a.ndim != 2 or a.shape != b.shape or a.shape[0] < 3 or a.shape[1] < 2:
        raise ValueError(
            "x and y must be arrays (groups ≥ 3, seeds ≥ 2) of one shape, got "
            f"{a.shape} and {b.shape}"
        )
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("x and y must be finite")
    if (np.ptp(a, axis=0) == 0).any() or (np.ptp(b, axis=0) == 0).any():
        raise ValueError("x and y must not be constant over the groups of a seed")
    return np.array(
        [stats.spearmanr(a[:, s], b[:, s]).statistic for s in range(a.shape[1])]
    )


class CurveShape(NamedTuple):
    """The shape of one curve per seed (arrays (seeds,)), each change divided by the
    seed's largest value ``scale``: ``peak`` (index of the checkpoint where the mean
    curve of the *other* seeds peaks), ``drop`` ((last value − value at ``peak``) /
    scale), ``late_change`` ((last value − the value at checkpoint ``settle_from``) /
    scale) and ``overall`` ((last value − the value at checkpoint ``first``) /
    scale)."""

    peak: np.ndarray
    drop: np.ndarray
    late_change: np.ndarray
    scale: np.ndarray
    overall: np.ndarray


def curve_shape(curves, *, first: int = 0, settle_from: int = -2) -> CurveShape:
    """The source's "decrease, then stabilise" (its Figure 6) as numbers per seed, all
    as fractions of the seed's largest value: the change over the whole curve, from
    checkpoint ``first`` to the end (``overall``); the change over its last stretch,
    from checkpoint ``settle_from`` to the end (``late_change``); and the fall from the
    peak to the end (``drop``). The peak of seed s is located on the mean curve of the
    other seeds (leave one seed out), so that seed s's own noise does not choose the
    point its fall is measured from (the maximum of one noisy curve is biased upwards).

    curves: array (seeds ≥ 2, checkpoints ≥ 2) of finite values, each seed's largest
    value > 0 (a gap Δ = RHS − LHS at the checkpoints, in order); first, settle_from:
    indices of checkpoints before the last (negative counts from the end)."""
    c = np.asarray(
        curves.cpu() if isinstance(curves, Tensor) else curves, dtype=np.float64
    )
    if c.ndim != 2 or c.shape[0] < 2 or c.shape[1] < 2 or not np.isfinite(c).all():
        raise ValueError(
            "curves must be a finite array (seeds ≥ 2, checkpoints ≥ 2), got shape "
            f"{c.shape}"
        )
    n_points = c.shape[1]
    for name, index in (("first", first), ("settle_from", settle_from)):
        if (
            isinstance(index, bool)
            or not isinstance(index, int | np.integer)
            or not -n_points <= index < n_points
            or index % n_points == n_points - 1
        ):
            raise ValueError(
                f"{name} must index a checkpoint before the last (−{n_points} … "
                f"{n_points - 2}), got {index!r}"
            )
    scale = c.max(axis=1)
    if (scale <= 0).any():
        raise ValueError(f"curves must have a largest value > 0 per seed, got {scale}")
    n = c.shape[0]
    others = (c.sum(axis=0, keepdims=True) - c) / (n - 1)  # mean of the other seeds
    peak = others.argmax(axis=1)
    at_peak = c[np.arange(n), peak]
    return CurveShape(
        peak,
        (c[:, -1] - at_peak) / scale,
        (c[:, -1] - c[:, settle_from]) / scale,
        scale,
        (c[:, -1] - c[:, first]) / scale,
    )


def design_runs(
    arms: Mapping[str, Mapping],
    n_seeds: int,
    cells: Sequence[Mapping] = (),
    *,
    map_seeds: int = 1,
) -> pd.DataFrame:
    """The runs table of an experiment: each arm (name → its values of the columns of
    :data:`RUN_COLUMNS` but ``seed``) with seeds 0 … ``n_seeds`` − 1, then each of
    ``cells`` (e.g. an (α, λ) map) with seeds 0 … ``map_seeds`` − 1, unless an arm
    already runs it. Columns: ``arm`` (the arm's name, "map" for a cell), then
    :data:`RUN_COLUMNS`; the index is the member of the stacked model."""
    n_seeds = check_int("n_seeds", n_seeds)
    map_seeds = check_int("map_seeds", map_seeds)
    if not arms:
        raise ValueError("arms must hold at least one arm")
    keys = [c for c in RUN_COLUMNS if c != "seed"]
    for name, arm in [*arms.items(), *(("map", cell) for cell in cells)]:
        if set(arm) != set(keys):
            raise ValueError(
                f"arm {name!r} must set exactly the columns {keys}, got {sorted(arm)}"
            )
    rows = [
        {"arm": name, **arm, "seed": seed}
        for name, arm in arms.items()
        for seed in range(n_seeds)
    ]
    covered = {tuple(arm[k] for k in keys) for arm in arms.values()}
    rows += [
        {"arm": "map", **cell, "seed": seed}
        for cell in cells
        if tuple(cell[k] for k in keys) not in covered
        for seed in range(map_seeds)
    ]
    return pd.DataFrame(rows, columns=["arm", *RUN_COLUMNS]).rename_axis("member")


def pooled_seed_sd(results: pd.DataFrame, metric: str) -> tuple[float, int]:
    """The standard deviation of one run's ``metric`` pooled over the arms run with
    several seeds (arms: equal values in every column of :data:`RUN_COLUMNS` but
    ``seed``), and its degrees of freedom Σ (n_arm − 1)."""
    keys = [c for c in RUN_COLUMNS if c != "seed"]
    check_frame("results", results, keys)
    if metric not in results.columns:
        raise ValueError(
            f"metric must name a column of results, got {metric!r} (columns "
            f"{list(results.columns)})"
        )
    groups = results.groupby(keys)[metric]
    sizes = groups.count()
    variances = groups.var(ddof=1)[sizes >= 2]
    df = int((sizes[sizes >= 2] - 1).sum())
    if df == 0:
        raise ValueError("results must hold at least one arm with two seeds or more")
    pooled = float(((sizes[sizes >= 2] - 1) * variances).sum() / df)
    return math.sqrt(pooled), df


def bias_by_member(
    model,
    runs: pd.DataFrame,
    images: Tensor,
    labels: Tensor,
    seed: int,
    *,
    n_transforms: int = 8,
) -> pd.DataFrame:
    """The prototype representation bias (:func:`prototype_bias`) of the members of
    ``runs`` (its index: the members of the stacked ``model``), each under its own
    strategy, by the source's estimator eq. (51) (``bias_eq51``) and the plug-in of eq.
    (16) (``bias_plugin``, ``n_transforms`` views per image), and the distance between
    class prototypes (:func:`prototype_spread`, ``prototype_spread``, on the plug-in's
    views). The members of one strategy share the draws (a generator seeded by
    ``seed``)."""
    from .train import StackedModel

    check_instance("model", model, StackedModel)
    check_frame("runs", runs, ["strategy"])
    check_int("seed", seed, 0)
    check_int("n_transforms", n_transforms, 1)
    frames = []
    for name, rows in runs.groupby("strategy", sort=False):
        encoder = model_subset(model, rows.index.tolist())
        with torch.no_grad():
            eq51 = prototype_bias(
                encoder,
                images,
                labels,
                name,
                torch.Generator(device=images.device).manual_seed(seed),
                method="eq51",
            )
            # the plug-in bias and the spread share their views (one draw)
            surrogate, prototypes = _plugin_prototypes(
                encoder,
                images,
                labels,
                name,
                torch.Generator(device=images.device).manual_seed(seed),
                n_transforms,
            )
            plugin = (prototypes[..., labels, :] - surrogate).norm(dim=-1).mean(-1)
        values = {
            "bias_eq51": eq51,
            "bias_plugin": plugin,
            "prototype_spread": _spread(prototypes),
        }
        values = {key: value.cpu().numpy() for key, value in values.items()}
        frames.append(pd.DataFrame(values, index=rows.index))
    return pd.concat(frames).sort_index().rename_axis("member")


def bound_evaluator(
    members: Sequence[int],
    alphas: Sequence[float],
    images: Tensor,
    labels: Tensor,
    pool_images: Tensor,
    pool_labels: Tensor,
    strategy: str,
    seed: int,
    *,
    n_transforms_attract: int = 16,
    n_transforms_repel: int = 4,
    norm_members: Sequence[int] | None = None,
):
    """An ``evaluate`` for :func:`train_runs`: model ↦ quantities (S,) at a checkpoint.

    For the members ``members``, each with the α of Theorem 4.6 in ``alphas`` (its
    training α), :func:`summarise_bounds` of :func:`bound_terms` on ``images`` and the
    pool, the slacks of the repelling bound's steps included (NaN for the other
    members); for the members ``norm_members`` (default every member; NaN for the
    others), ``norm_mean``, the mean norm of the unnormalised representations of
    ``images`` (the dot product and the Euclidean distance see it). The draws are the
    same at every checkpoint (a generator seeded by ``seed``), so the checkpoints differ
    only by the encoder."""
    members = [check_int("members[i]", m, 0) for m in members]
    if not members or len(alphas) != len(members):
        raise ValueError(
            f"members and alphas must be non-empty and of one length, got "
            f"{len(members)} and {len(alphas)}"
        )
    alphas = torch.tensor([check_positive("alphas[i]", a) for a in alphas])
    for name, images_, labels_ in (
        ("", images, labels),
        ("pool_", pool_images, pool_labels),
    ):
        _check_images(f"{name}images", images_)
        check_labels(f"{name}labels", labels_, n=images_.shape[0])
    check_choice("strategy", strategy, STRATEGIES)
    check_int("seed", seed, 0)
    check_int("n_transforms_attract", n_transforms_attract, 2)
    check_int("n_transforms_repel", n_transforms_repel, 1)
    if norm_members is not None:
        norm_members = [check_int("norm_members[i]", m, 0) for m in norm_members]
        if not norm_members:
            raise ValueError("norm_members must be None or a non-empty list of members")

    def evaluate(model) -> dict[str, Tensor]:
        from . import metrics

        generator = torch.Generator(device=images.device).manual_seed(seed)
        with torch.no_grad():
            attract, repel, steps = bound_terms(
                model_subset(model, members),
                images,
                labels,
                pool_images,
                pool_labels,
                strategy,
                generator,
                alphas,
                n_transforms_attract=n_transforms_attract,
                n_transforms_repel=n_transforms_repel,
                chain=True,
            )
            if norm_members is None:
                norms = metrics.embed(model, images).norm(dim=-1).mean(-1)
            else:
                chosen_norms = metrics.embed(model_subset(model, norm_members), images)
                norms = torch.full(
                    (model.n_seeds,), math.nan, device=chosen_norms.device
                ).index_copy(
                    0,
                    torch.tensor(norm_members, device=chosen_norms.device),
                    chosen_norms.norm(dim=-1).mean(-1),
                )
        out = {"norm_mean": norms}
        chosen = torch.tensor(members, device=norms.device)
        for name, values in summarise_bounds(attract, repel, steps).items():
            full = torch.full_like(norms, math.nan)
            out[name] = full.index_copy(0, chosen, values.to(full.dtype))
        return out

    return evaluate


# ---------------------------------------------------------------- both bounds at once
# (trained encoders)


def bound_terms(
    encoder: Encoder,
    images: Tensor,
    labels: Tensor,
    pool_images: Tensor,
    pool_labels: Tensor,
    strategy: str,
    generator: torch.Generator,
    alphas: Tensor | float,
    *,
    n_transforms_attract: int = 16,
    n_transforms_repel: int = 4,
    chain: bool = False,
) -> (
    tuple[AttractingTerms, RepellingTerms]
    | tuple[AttractingTerms, RepellingTerms, RepellingChain]
):
    """Theorem 4.4 and Theorem 4.6 per sample for an encoder with leading model
    dimension S.

    One anchor view t(x) per image serves both theorems. ``alphas``: the α of Theorem
    4.6, a float or one per model (S,) (e.g. each model's training α). Returns
    (AttractingTerms, RepellingTerms), fields (S, n), and with ``chain`` the steps of
    the proof of Theorem 4.6 (:func:`repelling_chain`) on the same draws as a third.
    """
    if not isinstance(chain, bool):
        raise ValueError(f"chain must be True or False, got {chain!r}")
    check_callable("encoder", encoder)
    _check_images("images", images)
    _check_images("pool_images", pool_images)
    check_labels("labels", labels, n=images.shape[0])
    check_labels("pool_labels", pool_labels, n=pool_images.shape[0])
    check_int("n_transforms_attract", n_transforms_attract, 2)
    check_int("n_transforms_repel", n_transforms_repel, 1)
    views = _encode(
        encoder,
        augment(
            images.expand(n_transforms_attract + 1, *images.shape), strategy, generator
        ),
    )
    if views.ndim == 3:
        views = views.unsqueeze(0)
    anchors = views[:, 0]
    attract = attracting_terms(anchors, views[:, 1:])
    pool = augment(
        pool_images.expand(n_transforms_repel, *pool_images.shape),
        strategy,
        generator,
        param_shape=(n_transforms_repel, 1),
    )
    pool_z = _encode(encoder, pool)
    if pool_z.ndim == 3:
        pool_z = pool_z.unsqueeze(0)
    n_models = anchors.shape[0]
    alphas = torch.as_tensor(alphas, dtype=torch.float64).flatten().cpu()
    if alphas.numel() == 1:
        alphas = alphas.expand(n_models)
    if (
        alphas.numel() != n_models
        or not bool((alphas > 0).all())
        or not bool(torch.isfinite(alphas).all())
    ):
        raise ValueError(
            "alphas must be finite, > 0, one or one per model "
            f"({n_models}), got {alphas.tolist()}"
        )
    repel = steps = None
    for alpha in alphas.unique().tolist():
        chosen = (alphas == alpha).to(anchors.device)[:, None]

        def pick(kind, new, old, chosen=chosen):
            if old is None:
                return new
            return kind(*(torch.where(chosen, a, b) for a, b in zip(new, old)))

        terms = repelling_terms(anchors, labels, pool_z, pool_labels, alpha)
        repel = pick(RepellingTerms, terms, repel)
        if chain:
            found = repelling_chain(anchors, labels, pool_z, pool_labels, alpha)
            steps = pick(RepellingChain, found, steps)
    return (attract, repel, steps) if chain else (attract, repel)


def summarise_bounds(
    attract: AttractingTerms,
    repel: RepellingTerms,
    chain: RepellingChain | None = None,
) -> dict[str, Tensor]:
    """Per-model summaries (S,) of :func:`bound_terms`: mean gaps (Figure 6 of the
    source), smallest
    per-sample gaps (Theorem 4.4: over the samples that satisfy Assumption 4.3,
    f(t(x))·m̂ ≥ 0), the fraction of samples satisfying it and its smallest value, and
    the smallest gap of the corrected repelling form, the mean ν; with ``chain`` (the
    same draws), the mean slack of each step of the repelling bound,
    ``repel_slack_<step>`` (:meth:`RepellingChain.slacks`; they sum to ``repel_gap``).
    """
    check_instance("attract", attract, AttractingTerms)
    check_instance("repel", repel, RepellingTerms)
    if chain is not None:
        check_instance("chain", chain, RepellingChain)
    holds = attract.hemisphere >= 0
    slacks = {} if chain is None else chain.slacks()
    return {
        **{f"repel_slack_{name}": value.mean(-1) for name, value in slacks.items()},
        "attract_gap": attract.gap.mean(-1),
        "attract_min_gap": attract.gap.masked_fill(~holds, torch.inf).amin(-1),
        "hemisphere_fraction": holds.to(attract.gap.dtype).mean(-1),
        "hemisphere_min": attract.hemisphere.amin(-1),
        "repel_gap": repel.gap.mean(-1),
        "repel_min_gap": repel.gap.amin(-1),
        "repel_corrected_min_gap": (repel.rhs_corrected - repel.lhs).amin(-1),
        "smooth_min": repel.smooth.amin(-1),
        "nu_mean": repel.nu.mean(-1),
    }


def model_subset(model, indices: list[int]) -> Encoder:
    """The encoder x ↦ (len(indices), N, d) of the chosen copies of a
    :class:`~ccl_helpers.train.StackedModel` (only those are evaluated)."""
    from torch.func import vmap

    from .train import StackedModel

    check_instance("model", model, StackedModel)
    if (
        isinstance(indices, (str, bytes))
        or not isinstance(indices, Sequence)
        or not indices
    ):
        raise ValueError(
            "indices must be a non-empty list of model indices in "
            f"0..{model.n_seeds - 1}, got {indices!r}"
        )
    index = torch.tensor(
        [check_int("indices", i, 0, model.n_seeds - 1) for i in indices],
        dtype=torch.long,
    )
    call = model.functional()

    def encoder(x: Tensor) -> Tensor:
        params = {k: v[index.to(v.device)] for k, v in model.params.items()}
        buffers = {k: v[index.to(v.device)] for k, v in model.buffers.items()}
        return vmap(call, in_dims=(0, 0, None))(params, buffers, x)

    return encoder


# ---------------------------------------------------------------- the claims tested

_POINTS = (
    "half a point of accuracy, below what a reader would act on (10 of the 2,000 "
    "test images at standard scale)"
)
_SHAPE = (
    "a tenth of the gap's largest value: a smaller change over the stretch of training "
    "is not a trend a reader of Figure 6 would see"
)
_RANKS = (
    "a rank correlation under 0.1 in size ranks the strategies almost at random "
    "(ρ² < 1 %)"
)


CLAIMS: dict[str, Claim] = claims_by_key(
    # theorem rows (checked by asserts in the chapter)
    Claim(
        key="lemma_a1",
        source="Lee (2025), Lemma A.1 and eq. (18)",
        statement="max x ≤ (1/α) log Σ e^(α x_i) ≤ max x + log(n)/α; both gaps → 0 "
        "as α → ∞",
        metric="sympy identity (n = 3); random vectors at 9 values of α",
        section="ch5-lemma-a1",
    ),
    Claim(
        key="lemma_a2",
        source="Lee (2025), Lemma A.2",
        statement="u(x) = (1/α) log Σ e^(α x_i) is convex",
        metric="sympy Hessian = α Var_p; random chords at 9 values of α",
        section="ch5-lemmas-a2-a3",
    ),
    Claim(
        key="lemma_a3",
        source="Lee (2025), Lemma A.3",
        statement="max[g1 g2] ≤ max g1 · max g2 if g1 ≥ 0 and g2 ≥ 0 somewhere",
        metric="random function pairs; a counterexample without each hypothesis",
        section="ch5-lemmas-a2-a3",
    ),
    Claim(
        key="thm44_bound",
        source="Lee (2025), Theorem 4.4, eq. (8) (Appendix A.1.1)",
        statement="−s(f(t(x)), E_T f(T(x))) ≤ −E_T s(f(t(x)), f(T(x))) under "
        "Assumptions 4.1–4.3",
        metric="per-anchor gap RHS − LHS on trained encoders; exact gap "
        "f·m (1/‖m‖ − 1)",
        section="ch5-bounds",
    ),
    Claim(
        key="thm44_strict",
        source="Lee (2025), Theorem 4.4 as stated in Section 4.1",
        statement="eq. (8) with a strict “<”",
        metric="the gap under the identity augmentation (view invariance)",
        section="ch5-bounds",
    ),
    Claim(
        key="thm44_equality",
        source="Lee (2025), Appendix A.4.5",
        statement="equality in eq. (8) holds when ‖E_T f(T(x))‖ = 1 (view invariance)",
        metric="the exact gap: identity views; an anchor orthogonal to the mean of "
        "its views",
        section="ch5-bounds",
    ),
    Claim(
        key="thm46_bound",
        source="Lee (2025), Theorem 4.6, eq. (10)",
        statement="max_{y′≠y} s(f(t(x)), μ̂_{y′}) ≤ B/ν for any α > 0 under "
        "Assumptions 4.1, 4.2, 4.5",
        metric="per-anchor gap on trained encoders; a constructed configuration "
        "with B < 0",
        section="ch5-bounds",
    ),
    # Figure 6: the gaps along training, SimCLR arm
    *(
        Claim(
            key=f"f6_{gap}_{kind}",
            source="Lee (2025), Figure 6 (Appendix A.4.5)",
            statement=statement.format(name=name),
            metric=metric,
            expected=expected,
            margin=0.1,
            margin_reason=_SHAPE,
            section="ch5-bounds",
        )
        for gap, name in (
            ("attract", "attracting bound (8)"),
            ("repel", "repelling bound (10)"),
        )
        for kind, statement, metric, expected in (
            (
                "decreases",
                "the mean gap of the {name} decreases along training",
                "(gap at the end − gap at the first checkpoint, 5 % of training) / "
                "largest gap, per seed (SimCLR arm)",
                "less",
            ),
            (
                "settles",
                "… and then stabilises",
                "(gap at the end − gap at half of training) / largest gap, per seed "
                "(SimCLR arm)",
                "equal",
            ),
        )
    ),
    # Table 1
    Claim(
        key="t1_cos_dot",
        source="Lee (2025), Table 1",
        statement="cosine similarity with normalisation beats the dot product "
        "without (ImageNet: 65.98 against 0.43 %)",
        metric="linear-probe accuracy, cosine − dot product (points)",
        margin=0.5,
        margin_reason=_POINTS,
        source_effect=65.55,
        section="ch5-similarity",
    ),
    Claim(
        key="t1_cos_euc",
        source="Lee (2025), Table 1",
        statement="cosine similarity with normalisation beats the negative Euclidean "
        "distance without (65.98 against 10.63 %)",
        metric="linear-probe accuracy, cosine − negative Euclidean (points)",
        margin=0.5,
        margin_reason=_POINTS,
        source_effect=55.35,
        section="ch5-similarity",
    ),
    Claim(
        key="t1_euc_dot",
        source="Lee (2025), Table 1",
        statement="among the unnormalised, the negative Euclidean distance beats the "
        "dot product (10.63 against 0.43 %)",
        metric="linear-probe accuracy, negative Euclidean − dot product (points)",
        margin=0.5,
        margin_reason=_POINTS,
        source_effect=10.2,
        section="ch5-similarity",
    ),
    # Tables 2 and 5
    Claim(
        key="t2_simclr",
        source="Lee (2025), Table 2",
        statement="a uniform class distribution beats a long-tailed one of the same "
        "size (SimCLR, ImageNet subsets: 20.82 against 13.65 %)",
        metric="linear-probe accuracy, uniform − long-tailed pool, SimCLR (points)",
        margin=0.5,
        margin_reason=_POINTS,
        source_effect=7.17,
        section="ch5-balance",
    ),
    Claim(
        key="t2_balanced",
        source="Lee (2025), Table 5",
        statement="the same with the balanced loss at (α, λ) = (2, 1)",
        metric="linear-probe accuracy, uniform − long-tailed pool, balanced (2, 1) "
        "(points)",
        margin=0.5,
        margin_reason=_POINTS,
        section="ch5-balance",
    ),
    Claim(
        key="t2_rare_classes",
        source="this chapter, a reading of Table 2's smaller effect",
        statement="the long tail costs its rarest classes more accuracy than its most "
        "frequent ones",
        metric="linear-probe accuracy per class, [uniform − long-tailed] on the 3 "
        "rarest classes − the same on the 3 most frequent, mean over 3 class "
        "orderings (points)",
        margin=0.5,
        margin_reason=_POINTS,
        section="ch5-balance",
    ),
    # Figure 3
    Claim(
        key="f3_bias_accuracy",
        source="Lee (2025), Figure 3",
        statement="lower prototype representation bias goes with higher accuracy",
        metric="Spearman correlation of the bias (eq. 51) and the linear-probe "
        "accuracy over the six strategies, per seed",
        expected="less",
        margin=0.1,
        margin_reason=_RANKS,
        section="ch5-bias",
    ),
    Claim(
        key="f3_relative_bias_accuracy",
        source="Lee (2025), Figure 3, the bias read against the prototype spread",
        statement="lower bias relative to the distance between class prototypes goes "
        "with higher accuracy",
        metric="Spearman correlation of bias / spread (plug-in) and the linear-probe "
        "accuracy over the six strategies, per seed",
        expected="less",
        margin=0.1,
        margin_reason=_RANKS,
        section="ch5-bias",
    ),
    Claim(
        key="f3_base_accuracy",
        source="Lee (2025), Figure 3",
        statement="SimCLR's augmentation (base) is the most accurate of the six",
        metric="linear-probe accuracy, base − the mean of the other five strategies "
        "(points; a necessary condition of the claim)",
        margin=0.5,
        margin_reason=_POINTS,
        section="ch5-bias",
    ),
    Claim(
        key="f3_base_bias",
        source="Lee (2025), Figure 3",
        statement="SimCLR's augmentation (base) has the smallest bias of the six",
        metric="bias (eq. 51), the mean of the other five strategies − base (a "
        "necessary condition of the claim)",
        section="ch5-bias",
    ),
    # Figures 4 and 5, Section 4.3
    Claim(
        key="headline",
        source="Lee (2025), abstract and Section 7; Figure 5",
        statement="the balanced contrastive loss improves on SimCLR (CIFAR-10: 86.08 % "
        "at (α, λ) = (2, 4) against 84.95 % for SimCLR's (2, 1))",
        metric="linear-probe accuracy, balanced (2, 4) − SimCLR (points)",
        margin=0.5,
        margin_reason=_POINTS,
        source_effect=1.13,
        section="ch5-balancing",
    ),
    Claim(
        key="f45_balanced_lambda",
        source="Lee (2025), Figures 4–5 (i)",
        statement="balancing matters: the balanced loss is best away from λ = 1 "
        "(CIFAR-10: 86.08 % at (2, 4) against 84.07 % at (2, 1))",
        metric="linear-probe accuracy, balanced (2, 4) − balanced (2, 1) (points)",
        margin=0.5,
        margin_reason=_POINTS,
        source_effect=2.01,
        section="ch5-balancing",
    ),
    Claim(
        key="f45_generalized_lambda",
        source="Lee (2025), Figures 4–5 (i)",
        statement="the same for the generalized NT-Xent (CIFAR-10: 85.85 % at (2, 4) "
        "against 84.95 % at (2, 1))",
        metric="linear-probe accuracy, generalized (2, 4) − generalized (2, 1) "
        "(points)",
        margin=0.5,
        margin_reason=_POINTS,
        source_effect=0.9,
        section="ch5-balancing",
    ),
    Claim(
        key="f45_balanced_beats_generalized",
        source="Lee (2025), Figures 4–5 (ii)",
        statement="the balanced loss peaks higher than the generalized NT-Xent "
        "(CIFAR-10, both at (2, 4): 86.08 against 85.85 %)",
        metric="linear-probe accuracy, balanced − generalized at (2, 4) (points)",
        margin=0.1,
        margin_reason="a tenth of a point, under half the source's own effect of "
        "0.23 points",
        source_effect=0.23,
        section="ch5-balancing",
    ),
    Claim(
        key="f45_balanced_beats_generalized_21",
        source="Lee (2025), Table 5 (Appendix A.4.4); Yeh et al. (2022), cited in "
        "Section 5.1",
        statement="at SimCLR's (α, λ) = (2, 1), where the two losses differ only by "
        "the positive in the sum, the balanced loss improves on SimCLR",
        metric="linear-probe accuracy, balanced − generalized at (2, 1) (points)",
        margin=0.1,
        margin_reason="as at (2, 4): under half the source's effect of 0.23 points",
        section="ch5-balancing",
    ),
    Claim(
        key="f45_alpha_interaction",
        source="Lee (2025), Figures 4–5 (iii)",
        statement="the generalized NT-Xent prefers a smaller α than the balanced loss "
        "(CIFAR-10, α 2 → 4 at λ = 1: +1.95 against −0.12 points)",
        metric="linear-probe accuracy, [balanced (4, 1) − (2, 1)] − [generalized "
        "(4, 1) − (2, 1)] (points)",
        margin=0.5,
        margin_reason=_POINTS,
        source_effect=2.07,
        section="ch5-balancing",
    ),
    Claim(
        key="s43_eq15_vs_eq14",
        source="Lee (2025), Section 5.1 (a remark, not tested there)",
        statement="NT-Xent's second sum, the same view's other images as negatives "
        "(eq. (15)), “can be seen as” exploiting the representations more fully than "
        "eq. (14)",
        metric="linear-probe accuracy, eq. (15) (SimCLR) − eq. (14) (points)",
        margin=0.5,
        margin_reason=_POINTS,
        section="ch5-balancing",
    ),
)
"""The claims of the source that the chapter tests, by key, stated before the runs:
the theorem rows first (checked by asserts), then the empirical claims, each with the
linear probe (the source's own evaluation) as its primary metric where it is about
accuracy, paired by seed, with the margin below which it counts as absent."""
