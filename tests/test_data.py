"""Tests of ccl_helpers.data: the latent-class samplers (shapes, class consistency,
frequencies, collision probability, Gaussian moments), the digits data, the stratified
split, validation; the fixed training sets of the convergence theorems (unit sphere,
separation δ, fixed triplets). The file readers are tested in test_data_files.py,
subsets and augmentations in their own files."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from bad_calls import bad_call
from scipy import stats

from ccl_helpers import data
from ccl_helpers.data import (
    EmpiricalClasses,
    GaussianClasses,
    fixed_triplets,
    hard_negatives,
    load_digits,
    separation,
    train_test_split,
    unit_sphere,
)
from ccl_helpers.data._latent import _duplicate_rows

RHO = torch.tensor([0.5, 0.3, 0.2])


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def indexed_set(counts=(3, 5, 2), width=2):
    """An EmpiricalClasses whose example i has every input entry equal to i (so a
    sampled input reveals its index, hence its class). Labels are interleaved, not
    sorted, to exercise the order."""
    labels = torch.cat([torch.full((n,), c) for c, n in enumerate(counts)])
    labels = labels[torch.randperm(labels.numel(), generator=gen(123))]
    inputs = (
        torch.arange(labels.numel(), dtype=torch.float64)[:, None, None]
        .expand(-1, width, 3)
        .clone()
    )
    return inputs, labels


def index_of(sampled, input_ndim=2):
    """The example index of sampled inputs (..., *input_shape), checking all entries
    agree."""
    flat = sampled.flatten(-input_ndim)
    assert torch.equal(flat.min(-1).values, flat.max(-1).values)
    return flat[..., 0].long()


# ---------------------------------------------------------------- shapes


@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 1, 3)])
@pytest.mark.parametrize("block_size", [None, 1, 4])
def test_empirical_sampler_shapes(shape, block_size):
    inputs, labels = indexed_set()
    latent = EmpiricalClasses(inputs, labels)
    anchor, positive, c_pos = latent.sample_sim(shape, gen(), block_size=block_size)
    negative, c_neg = latent.sample_neg(shape, gen(1), block_size=block_size)
    block = () if block_size is None else (block_size,)
    assert anchor.shape == (*shape, 2, 3)
    assert positive.shape == (*shape, *block, 2, 3)
    assert negative.shape == (*shape, *block, 2, 3)
    assert c_pos.shape == shape and c_neg.shape == shape
    assert c_pos.dtype == torch.long and c_neg.dtype == torch.long
    assert anchor.dtype == inputs.dtype


@pytest.mark.parametrize("shape", [(7,), (3, 4)])
@pytest.mark.parametrize("block_size", [None, 3])
def test_gaussian_sampler_shapes(shape, block_size):
    latent = GaussianClasses.random(4, 5, seed=1)
    anchor, positive, c_pos = latent.sample_sim(shape, gen(), block_size=block_size)
    negative, c_neg = latent.sample_neg(shape, gen(1), block_size=block_size)
    block = () if block_size is None else (block_size,)
    assert anchor.shape == (*shape, 5)
    assert positive.shape == negative.shape == (*shape, *block, 5)
    assert c_pos.shape == c_neg.shape == shape
    assert latent.sample_given(torch.zeros(*shape, dtype=torch.long), gen()).shape == (
        *shape,
        5,
    )


# ---------------------------------------------------------------- classes of the
# samples


@pytest.mark.parametrize("block_size", [None, 1, 5])
def test_empirical_samples_come_from_their_class(block_size):
    inputs, labels = indexed_set()
    latent = EmpiricalClasses(inputs, labels, class_probs=RHO)
    anchor, positive, c_pos = latent.sample_sim((40, 3), gen(2), block_size=block_size)
    negative, c_neg = latent.sample_neg((40, 3), gen(3), block_size=block_size)
    expand = (
        (lambda c: c)
        if block_size is None
        else (lambda c: c.unsqueeze(-1).expand(*c.shape, block_size))
    )
    assert torch.equal(labels[index_of(anchor)], c_pos)
    assert torch.equal(
        labels[index_of(positive)], expand(c_pos)
    )  # every positive of a block shares c⁺
    assert torch.equal(
        labels[index_of(negative)], expand(c_neg)
    )  # every negative of a block shares c⁻


def test_empirical_block_positives_are_independent_draws():
    inputs, labels = indexed_set(counts=(6, 6))
    latent = EmpiricalClasses(inputs, labels)
    _, positive, _ = latent.sample_sim((200,), gen(4), block_size=4)
    index = index_of(positive)
    # i.i.d. uniform over 6 examples: a block of 4 has 4 distinct members with
    # probability 6·5·4·3/6⁴.
    distinct = (
        torch.tensor([len(set(row.tolist())) == 4 for row in index]).double().mean()
    )
    p = 6 * 5 * 4 * 3 / 6**4
    assert abs(float(distinct) - p) < 4 * math.sqrt(p * (1 - p) / 200)


def test_gaussian_samples_come_from_their_class():
    latent = GaussianClasses.random(3, 4, separation=50.0, noise_std=0.01, seed=2)
    anchor, positive, c_pos = latent.sample_sim((30,), gen(5), block_size=3)
    negative, c_neg = latent.sample_neg((30,), gen(6), block_size=3)

    def nearest(x):
        return (
            torch.cdist(x.reshape(-1, 4), latent.means).argmin(-1).reshape(x.shape[:-1])
        )

    assert torch.equal(nearest(anchor), c_pos)
    assert torch.equal(nearest(positive), c_pos[:, None].expand(-1, 3))
    assert torch.equal(nearest(negative), c_neg[:, None].expand(-1, 3))


def test_empirical_uniform_within_class():
    inputs, labels = indexed_set(counts=(4, 7))
    latent = EmpiricalClasses(inputs, labels)
    n = 14_000
    drawn = index_of(latent.sample_given(torch.ones(n, dtype=torch.long), gen(7)))
    members = torch.nonzero(labels == 1).flatten()
    assert bool(torch.isin(drawn, members).all())
    observed = torch.bincount(drawn, minlength=labels.numel())[members].numpy()
    assert stats.chisquare(observed).pvalue > 1e-3


# ---------------------------------------------------------------- class frequencies and
# τ


@pytest.mark.parametrize("rho", [[0.5, 0.3, 0.2], [0.1, 0.1, 0.7, 0.1], [0.25, 0.75]])
def test_sample_classes_frequencies_match_rho(rho):
    rho = torch.tensor(rho)
    latent = GaussianClasses(rho, torch.randn(rho.numel(), 2, generator=gen()), 1.0)
    n = 20_000
    classes = latent.sample_classes((40, n // 40), gen(8))
    observed = torch.bincount(classes.flatten(), minlength=rho.numel()).numpy()
    assert stats.chisquare(observed, (rho.double() * n).numpy()).pvalue > 1e-3


def test_sample_sim_and_neg_classes_follow_rho():
    inputs, labels = indexed_set()
    latent = EmpiricalClasses(inputs, labels, class_probs=RHO)
    n = 20_000
    _, _, c_pos = latent.sample_sim((n,), gen(9))
    _, c_neg = latent.sample_neg((n,), gen(10))
    for classes in (c_pos, c_neg):
        observed = torch.bincount(classes, minlength=3).numpy()
        assert stats.chisquare(observed, (RHO.double() * n).numpy()).pvalue > 1e-3


def test_empirical_default_rho_is_label_frequencies():
    inputs, labels = indexed_set(counts=(3, 5, 2))
    latent = EmpiricalClasses(inputs, labels)
    torch.testing.assert_close(latent.class_probs, torch.tensor([0.3, 0.5, 0.2]))
    assert latent.n_classes == 3
    assert latent.counts.tolist() == [3, 5, 2]


@pytest.mark.parametrize(
    "rho, tau", [([0.5, 0.3, 0.2], 0.38), ([0.25] * 4, 0.25), ([0.9, 0.1], 0.82)]
)
def test_collision_probability_closed_form(rho, tau):
    latent = GaussianClasses(torch.tensor(rho), torch.zeros(len(rho), 1), 1.0)
    assert latent.collision_probability == pytest.approx(tau, abs=1e-6)
    assert latent.collision_probability == pytest.approx(
        sum(p * p for p in rho), abs=1e-6
    )


@pytest.mark.parametrize("block_size", [None, 2])
def test_collision_probability_matches_monte_carlo(block_size):
    inputs, labels = indexed_set()
    latent = EmpiricalClasses(inputs, labels, class_probs=RHO)
    n = 40_000
    _, _, c_pos = latent.sample_sim((n,), gen(11), block_size=block_size)
    _, c_neg = latent.sample_neg((n,), gen(12), block_size=block_size)
    collisions = (c_pos == c_neg).double()
    tau = latent.collision_probability
    assert abs(float(collisions.mean()) - tau) < 4 * math.sqrt(tau * (1 - tau) / n)


def test_samplers_are_deterministic_under_the_generator():
    latent = GaussianClasses.random(3, 2, seed=0)
    first = latent.sample_sim((5,), gen(3), block_size=2)
    second = latent.sample_sim((5,), gen(3), block_size=2)
    for a, b in zip(first, second):
        assert torch.equal(a, b)
    assert not torch.equal(first[0], latent.sample_sim((5,), gen(4))[0])


# ---------------------------------------------------------------- Gaussian moments


def test_gaussian_class_means_and_std():
    means = torch.tensor([[0.0, 1.0, -2.0], [3.0, -1.0, 0.5]])
    latent = GaussianClasses(torch.tensor([0.4, 0.6]), means, 0.7)
    n = 20_000
    for c in range(2):
        x = latent.sample_given(torch.full((n,), c), gen(20 + c)).double()
        assert torch.all((x.mean(0) - means[c].double()).abs() < 4 * 0.7 / math.sqrt(n))
        # the sample std of n normals has standard error ≈ σ/√(2n)
        assert torch.all((x.std(0) - 0.7).abs() < 4 * 0.7 / math.sqrt(2 * n))
    # independent coordinates
    x = latent.sample_given(torch.zeros(n, dtype=torch.long), gen(30)).double()
    corr = torch.corrcoef(x.T)
    assert torch.all(
        (corr - torch.eye(3, dtype=torch.float64)).abs() < 4 / math.sqrt(n)
    )


def test_gaussian_sim_residuals_are_noise():
    latent = GaussianClasses.random(3, 4, noise_std=0.5, seed=5)
    anchor, positive, classes = latent.sample_sim((5_000,), gen(31), block_size=2)
    residual = torch.cat(
        [
            (anchor - latent.means[classes]).flatten(),
            (positive - latent.means[classes][:, None]).flatten(),
        ]
    ).double()
    n = residual.numel()
    assert abs(float(residual.mean())) < 4 * 0.5 / math.sqrt(n)
    assert abs(float(residual.std()) - 0.5) < 4 * 0.5 / math.sqrt(2 * n)


def test_gaussian_random():
    latent = GaussianClasses.random(5, 400, separation=3.0, noise_std=0.2, seed=4)
    assert latent.means.shape == (5, 400)
    torch.testing.assert_close(latent.class_probs, torch.full((5,), 0.2))
    assert latent.noise_std == 0.2
    # ‖m_c‖² ~ separation² · χ²_dim / dim, whose std is separation² · √(2/dim) ≈ 0.64
    # here
    assert torch.all(
        (latent.means.norm(dim=1) ** 2 - 9.0).abs() < 4 * 9.0 * math.sqrt(2 / 400)
    )
    again = GaussianClasses.random(5, 400, separation=3.0, noise_std=0.2, seed=4)
    assert torch.equal(latent.means, again.means)
    assert not torch.equal(
        latent.means, GaussianClasses.random(5, 400, separation=3.0, seed=5).means
    )
    custom = GaussianClasses.random(2, 3, class_probs=torch.tensor([0.3, 0.7]))
    torch.testing.assert_close(custom.class_probs, torch.tensor([0.3, 0.7]))


# ---------------------------------------------------------------- digits and the split


def test_load_digits():
    from sklearn.datasets import load_digits as sklearn_digits

    images, labels = load_digits()
    assert images.shape == (1797, 1, 8, 8) and images.dtype == torch.float32
    assert labels.shape == (1797,) and labels.dtype == torch.long
    assert float(images.min()) == 0.0 and float(images.max()) == 1.0
    assert sorted(labels.unique().tolist()) == list(range(10))
    np.testing.assert_allclose(
        images[:, 0].numpy() * 16, sklearn_digits().images, atol=1e-5
    )
    double, _ = load_digits(dtype=torch.float64)
    assert double.dtype == torch.float64


def split_data(n_per_class=(20, 30, 10)):
    labels = torch.cat([torch.full((n,), c) for c, n in enumerate(n_per_class)])
    labels = labels[torch.randperm(labels.numel(), generator=gen(1))]
    inputs = torch.arange(labels.numel(), dtype=torch.float32)[:, None].repeat(1, 2)
    return inputs, labels


@pytest.mark.parametrize("test_fraction", [0.2, 0.3, 0.5])
def test_train_test_split_is_stratified_disjoint_and_complete(test_fraction):
    inputs, labels = split_data()
    x_train, y_train, x_test, y_test = train_test_split(
        inputs, labels, test_fraction, seed=3
    )
    train_index, test_index = x_train[:, 0].long(), x_test[:, 0].long()
    assert torch.equal(labels[train_index], y_train) and torch.equal(
        labels[test_index], y_test
    )
    assert set(train_index.tolist()).isdisjoint(test_index.tolist())
    assert sorted(train_index.tolist() + test_index.tolist()) == list(
        range(labels.numel())
    )
    assert y_test.numel() == math.ceil(test_fraction * labels.numel())
    for c, n_c in enumerate((20, 30, 10)):
        assert abs(int((y_test == c).sum()) - test_fraction * n_c) <= 1


def test_train_test_split_is_deterministic_under_the_seed():
    inputs, labels = split_data()
    first = train_test_split(inputs, labels, 0.3, seed=5)
    second = train_test_split(inputs, labels, 0.3, seed=5)
    for a, b in zip(first, second):
        assert torch.equal(a, b)
    other = train_test_split(inputs, labels, 0.3, seed=6)
    assert not torch.equal(first[2], other[2])


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "rho", [[0.5, 0.4], [0.6, 0.6], [1.2, -0.2], [1.0], [[0.5, 0.5]]]
)
def test_bad_class_probs_raise(rho):
    with pytest.raises(ValueError, match="class_probs"):
        GaussianClasses(torch.tensor(rho), torch.zeros(2, 3), 1.0)
    if torch.tensor(rho).ndim == 1 and len(rho) == 2:
        inputs, labels = split_data((2, 3))
        with pytest.raises(ValueError, match="class_probs"):
            EmpiricalClasses(inputs, labels, class_probs=torch.tensor(rho))


@pytest.mark.parametrize("means_shape", [(3, 2), (2,), (2, 2, 2)])
def test_gaussian_means_shape_mismatch_raises(means_shape):
    with pytest.raises(ValueError, match="means"):
        GaussianClasses(torch.tensor([0.5, 0.5]), torch.zeros(means_shape), 1.0)


@pytest.mark.parametrize("noise_std", [0.0, -1.0, float("nan")])
def test_gaussian_bad_noise_raises(noise_std):
    with pytest.raises(ValueError, match="noise_std"):
        GaussianClasses(torch.tensor([0.5, 0.5]), torch.zeros(2, 3), noise_std)


@pytest.mark.parametrize("n_classes, dim", [(1, 3), (0, 3), (3, 0)])
def test_gaussian_random_bad_sizes_raise(n_classes, dim):
    with pytest.raises(ValueError):
        GaussianClasses.random(n_classes, dim)


def test_empirical_bad_inputs_raise():
    inputs, labels = split_data((2, 3))
    with pytest.raises(ValueError, match="labels"):
        EmpiricalClasses(inputs[:-1], labels)  # n mismatch
    with pytest.raises(ValueError, match="labels"):
        EmpiricalClasses(inputs, labels[:, None])  # labels not a vector
    with pytest.raises(ValueError, match="labels"):
        EmpiricalClasses(inputs, labels.masked_fill(labels == 0, 2))  # class 0 missing
    with pytest.raises(ValueError, match="labels"):
        EmpiricalClasses(inputs, torch.zeros_like(labels))  # a single class
    with pytest.raises(ValueError, match="class_probs"):
        EmpiricalClasses(
            inputs, labels, class_probs=torch.tensor([0.2, 0.3, 0.5])
        )  # wrong length


@pytest.mark.parametrize("shape", [(0,), (3, 0), (-1, 2)])
def test_non_positive_shape_raises(shape):
    latent = GaussianClasses.random(2, 2)
    with pytest.raises(ValueError, match="shape"):
        latent.sample_classes(shape, gen())
    with pytest.raises(ValueError, match="shape"):
        latent.sample_sim(shape, gen())
    with pytest.raises(ValueError, match="shape"):
        latent.sample_neg(shape, gen())


@pytest.mark.parametrize("block_size", [0, -2])
def test_bad_block_size_raises(block_size):
    inputs, labels = split_data((2, 3))
    for latent in (GaussianClasses.random(2, 2), EmpiricalClasses(inputs, labels)):
        with pytest.raises(ValueError, match="block_size"):
            latent.sample_sim((3,), gen(), block_size=block_size)
        with pytest.raises(ValueError, match="block_size"):
            latent.sample_neg((3,), gen(), block_size=block_size)


@pytest.mark.parametrize("test_fraction", [0.0, 1.0, -0.1, 1.5])
def test_split_bad_fraction_raises(test_fraction):
    inputs, labels = split_data()
    with pytest.raises(ValueError, match="test_fraction"):
        train_test_split(inputs, labels, test_fraction)


def test_split_length_mismatch_raises():
    inputs, labels = split_data()
    with pytest.raises(ValueError, match="length"):
        train_test_split(inputs[:-1], labels)


# ---------------------------------------------------------------- unit sphere and
# separation δ


def test_unit_sphere_flattens_and_normalises():
    x = torch.randn(6, 2, 3, generator=gen(0), dtype=torch.float64)
    u = unit_sphere(x)
    assert u.shape == (6, 6) and u.dtype == torch.float64
    torch.testing.assert_close(u.norm(dim=1), torch.ones(6, dtype=torch.float64))
    # same direction: u_i = x_i / ‖x_i‖
    for i in range(6):
        flat = x[i].flatten()
        torch.testing.assert_close(u[i] * math.sqrt(float((flat**2).sum())), flat)
    torch.testing.assert_close(unit_sphere(3.0 * x), u)


def test_unit_sphere_rejects_zero_rows_and_integers():
    x = torch.randn(4, 3, generator=gen(1))
    x[2] = 0
    with pytest.raises(ValueError, match="x has 1 all-zero rows"):
        unit_sphere(x)
    with pytest.raises(ValueError, match="floating-point"):
        unit_sphere(torch.ones(3, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="finite"):
        unit_sphere(torch.tensor([[1.0, float("nan")]]))


def brute_force_separation(x):
    flat = x.reshape(x.shape[0], -1).double()
    best, pair = math.inf, None
    for i in range(flat.shape[0]):
        for j in range(i + 1, flat.shape[0]):
            d = math.sqrt(float(((flat[i] - flat[j]) ** 2).sum()))
            if d < best:
                best, pair = d, (i, j)
    return best, pair


@pytest.mark.parametrize(
    "n, dim, block_elements", [(2, 3, 2**24), (17, 5, 2**24), (40, 8, 50), (33, 4, 1)]
)
def test_separation_equals_brute_force(n, dim, block_elements):
    x = unit_sphere(torch.randn(n, dim, generator=gen(n), dtype=torch.float64))
    delta, pair = separation(x, return_pair=True, block_elements=block_elements)
    expected, expected_pair = brute_force_separation(x)
    assert delta.shape == () and delta.dtype == torch.float64
    assert float(delta) == pytest.approx(expected, rel=1e-12)
    assert tuple(pair.tolist()) == expected_pair
    assert float(separation(x.float())) == pytest.approx(expected, rel=1e-5)


def test_separation_counts_duplicates_as_zero_and_warns():
    x = torch.randn(10, 3, generator=gen(2))
    x[7] = x[2]
    x[9] = x[2]
    x[5] = x[4]
    with pytest.warns(UserWarning, match="3 exactly duplicated rows"):
        delta = separation(x)
    assert float(delta) == 0.0
    assert sorted(map(tuple, _duplicate_rows(x).tolist())) == [(2, 7), (2, 9), (4, 5)]
    assert _duplicate_rows(torch.randn(5, 2, generator=gen(3))).shape == (0, 2)


def test_duplicate_rows_equals_brute_force():
    x = torch.randint(0, 3, (30, 2), generator=gen(4)).double()
    expected = sorted(
        (min(i for i in range(j) if torch.equal(x[i], x[j])), j)
        for j in range(30)
        if any(torch.equal(x[i], x[j]) for i in range(j))
    )
    assert sorted(map(tuple, _duplicate_rows(x).tolist())) == expected


def test_separation_of_the_digits_is_positive():
    images, _ = load_digits()
    delta = separation(unit_sphere(images))
    assert 0 < float(delta) < 1
    assert _duplicate_rows(images).shape == (0, 2)


@pytest.mark.parametrize(
    "x", [torch.zeros(1, 3), torch.zeros(0, 3), torch.ones(3, 2, dtype=torch.long)]
)
def test_separation_bad_inputs_raise(x):
    with pytest.raises(ValueError, match="x must"):
        separation(x)


# ---------------------------------------------------------------- fixed triplets


def test_fixed_triplets_classes_distinctness_and_unit_norm():
    inputs, labels = indexed_set(counts=(40, 50, 45), width=2)
    inputs = inputs + 1.0  # no all-zero example
    triplets = fixed_triplets(inputs, labels, 20, gen(5))
    n = 20
    for tensor in (triplets.anchor, triplets.positive, triplets.negative):
        assert tensor.shape == (n, 6)
        torch.testing.assert_close(
            tensor.norm(dim=1), torch.ones(n, dtype=torch.float64)
        )
    index = triplets.index
    assert index.shape == (n, 3) and index.dtype == torch.long
    assert len(set(index.flatten().tolist())) == 3 * n  # no example used twice
    assert torch.equal(labels[index[:, 0]], triplets.anchor_class)
    assert torch.equal(
        labels[index[:, 1]], triplets.anchor_class
    )  # the positive shares the class
    assert torch.equal(labels[index[:, 2]], triplets.negative_class)
    expected = inputs.flatten(1)[index] / inputs.flatten(1)[index].norm(
        dim=-1, keepdim=True
    )
    torch.testing.assert_close(
        torch.stack([triplets.anchor, triplets.positive, triplets.negative], 1),
        expected,
    )
    assert triplets.inputs().shape == (3 * n, 6)
    assert float(separation(triplets.inputs())) > 0


def test_fixed_triplets_negative_classes():
    inputs, labels = indexed_set(counts=(400, 400), width=1)
    inputs = inputs + 1.0
    n = 200
    rho = fixed_triplets(inputs, labels, n, gen(6))
    other = fixed_triplets(inputs, labels, n, gen(6), negatives="other_class")
    assert bool((other.negative_class != other.anchor_class).all())
    # c⁻ ~ ρ independently of c⁺: collisions with probability τ = Σρ² = 1/2
    collisions = float((rho.negative_class == rho.anchor_class).double().mean())
    assert abs(collisions - 0.5) < 4 * math.sqrt(0.25 / n)


def test_fixed_triplets_class_probs_and_determinism():
    inputs, labels = indexed_set(counts=(500, 300, 300), width=1)
    inputs = inputs + 1.0
    first = fixed_triplets(
        inputs, labels, 150, gen(7), class_probs=torch.tensor([0.8, 0.1, 0.1])
    )
    second = fixed_triplets(
        inputs, labels, 150, gen(7), class_probs=torch.tensor([0.8, 0.1, 0.1])
    )
    for a, b in zip(first, second):
        assert torch.equal(a, b)
    assert not torch.equal(
        first.index, fixed_triplets(inputs, labels, 150, gen(8)).index
    )
    share = float((first.anchor_class == 0).double().mean())
    assert abs(share - 0.8) < 4 * math.sqrt(0.16 / 150)


def test_fixed_triplets_bad_arguments_raise():
    inputs, labels = indexed_set(counts=(4, 5), width=1)
    inputs = inputs + 1.0
    with pytest.raises(ValueError, match="n must"):
        fixed_triplets(inputs, labels, 0, gen())
    with pytest.raises(ValueError, match="n must be ≤ N/3"):
        fixed_triplets(inputs, labels, 4, gen())
    with pytest.raises(ValueError, match="negatives"):
        fixed_triplets(inputs, labels, 2, gen(), negatives="hard")
    with pytest.raises(ValueError, match="labels"):
        fixed_triplets(inputs[:-1], labels, 2, gen())
    with pytest.raises(ValueError, match="lower n"):  # class 0 cannot give 3·2 examples
        fixed_triplets(inputs, labels, 3, gen(), class_probs=torch.tensor([1.0, 0.0]))


def gaussian_triplets(n=10, dim=30, seed=0):
    """n triplets of independent Gaussian directions on the unit sphere (well
    separated in 30 dimensions)."""
    x = unit_sphere(torch.randn(9 * n, dim, generator=gen(seed), dtype=torch.float64))
    labels = torch.arange(9 * n) % 2
    return fixed_triplets(x, labels, n, gen(seed + 1))


@pytest.mark.parametrize("delta", [0.05, 0.3])
def test_hard_negatives_set_the_distance_and_the_separation(delta):
    triplets = gaussian_triplets()
    hard = hard_negatives(triplets, delta)
    torch.testing.assert_close(
        (hard.negative - hard.positive).norm(dim=1), torch.full((10,), delta).double()
    )
    torch.testing.assert_close(hard.negative.norm(dim=1), torch.ones(10).double())
    assert delta <= separation(triplets.inputs()).item() / 2
    torch.testing.assert_close(separation(hard.inputs()), torch.tensor(delta).double())
    # the negative stays in the plane of the original x⁺, x⁻, on x⁻'s side of x⁺
    plane = torch.stack([triplets.positive, triplets.negative], 1)  # (n, 2, D)
    coef = torch.linalg.lstsq(plane.transpose(1, 2), hard.negative).solution
    torch.testing.assert_close(torch.einsum("nk,nkd->nd", coef, plane), hard.negative)
    assert (coef[:, 1] > 0).all()
    assert torch.equal(hard.anchor, triplets.anchor)
    assert torch.equal(hard.index, triplets.index)


def test_hard_negatives_bad_arguments_raise():
    triplets = gaussian_triplets()
    for delta in (0.0, -0.1, 2.5, float("nan")):
        with pytest.raises(ValueError, match="delta"):
            hard_negatives(triplets, delta)
    parallel = triplets._replace(negative=triplets.positive.clone())
    with pytest.raises(ValueError, match="parallel"):
        hard_negatives(parallel, 0.1)


def test_sample_given_rejects_a_class_out_of_range_and_negative_separation():
    latent = GaussianClasses.random(3, 2)
    for classes in (torch.tensor([-1, 0]), torch.tensor([3])):
        with pytest.raises(ValueError, match=r"classes must hold classes in 0\.\.N_C"):
            latent.sample_given(classes, gen())
    for bad in (math.nan, math.inf, -1.0):
        with pytest.raises(ValueError, match="separation"):
            GaussianClasses.random(3, 2, separation=bad)


def test_sample_sim_draws_as_sample_given_does():
    latent = GaussianClasses.random(3, 2, seed=1)
    x, _, classes = latent.sample_sim((5,), gen(3))
    again = gen(3)
    latent.sample_classes((5,), again)
    assert torch.equal(x, latent.sample_given(classes, again))


# ---------------------------------------------------------------- bad calls

_RHO2 = torch.tensor([0.5, 0.5])
_INPUTS, _LABELS = split_data((4, 5))
_TRIPLETS = gaussian_triplets(n=2)

BAD_CALLS = [
    bad_call(
        data.GaussianClasses, "class_probs", torch.tensor([0.6, 0.6]), _INPUTS[:2], 1.0
    ),
    bad_call(data.GaussianClasses, "means", _RHO2, torch.zeros(3, 2), 1.0),
    bad_call(data.GaussianClasses, "noise_std", _RHO2, torch.zeros(2, 3), 0.0),
    bad_call(data.GaussianClasses.random, "separation", 3, 2, separation=-1.0),
    bad_call(data.GaussianClasses.random, "n_classes", 1, 2),
    bad_call(data.EmpiricalClasses, "labels", _INPUTS[:-1], _LABELS),
    bad_call(data.EmpiricalClasses, r"pass labels\.long\(\)", _INPUTS, _LABELS.int()),
    bad_call(data.EmpiricalClasses, "inputs", _INPUTS.long(), _LABELS),
    bad_call(
        data.EmpiricalClasses,
        "class_probs",
        _INPUTS,
        _LABELS,
        class_probs=torch.tensor([0.2, 0.3, 0.5]),
    ),
    # the abstract base's samplers, through a subclass
    bad_call(
        data.LatentClassModel.sample_given,
        "classes",
        GaussianClasses.random(3, 2),
        torch.tensor([3]),
        gen(),
    ),
    bad_call(
        data.LatentClassModel.sample_given,
        r"pass classes\.long\(\)",
        GaussianClasses.random(3, 2),
        torch.tensor([1, 0], dtype=torch.uint8),
        gen(),
    ),
    bad_call(
        data.LatentClassModel.sample_classes,
        "shape",
        GaussianClasses.random(3, 2),
        (0,),
        gen(),
    ),
    bad_call(
        data.LatentClassModel.sample_sim,
        "block_size",
        GaussianClasses.random(3, 2),
        (3,),
        gen(),
        block_size=0,
    ),
    bad_call(data.load_digits, "device", device="bogus"),
    bad_call(data.load_digits, "dtype", dtype=torch.int64),
    bad_call(data.train_test_split, "test_fraction", _INPUTS, _LABELS, 1.0),
    bad_call(data.train_test_split, "seed", _INPUTS, _LABELS, 0.3, seed=-1),
    bad_call(data.train_test_split, "inputs", _INPUTS.long(), _LABELS),
    bad_call(data.train_test_split, "labels", _INPUTS, _LABELS.double()),
    bad_call(data.train_test_split, "length", _INPUTS[:-1], _LABELS),
    bad_call(
        data.unit_sphere,
        "x has 1 all-zero rows",
        torch.tensor([[1.0, 0.0], [0.0, 0.0]]),
    ),
    bad_call(
        data.unit_sphere,
        "x must be a floating-point",
        torch.ones(3, 2, dtype=torch.long),
    ),
    bad_call(data.separation, "x must", torch.zeros(1, 3)),
    bad_call(data.separation, "x must", torch.ones(3, 2, dtype=torch.long)),
    bad_call(data.separation, "x must be finite", torch.tensor([[0.0], [math.nan]])),
    bad_call(data.separation, "block_elements", torch.zeros(2, 3), block_elements=0),
    bad_call(data.fixed_triplets, "n must", _INPUTS + 1, _LABELS, 0, gen()),
    bad_call(data.fixed_triplets, r"n must be ≤ N/3", _INPUTS + 1, _LABELS, 4, gen()),
    bad_call(
        data.fixed_triplets,
        "negatives",
        _INPUTS + 1,
        _LABELS,
        2,
        gen(),
        negatives="hard",
    ),
    bad_call(data.fixed_triplets, "inputs", _INPUTS.long(), _LABELS, 2, gen()),
    bad_call(data.hard_negatives, "delta", _TRIPLETS, 2.5),
    bad_call(data.hard_negatives, "delta", _TRIPLETS, 0.0),
    bad_call(data.hard_negatives, "triplets", tuple(_TRIPLETS), 0.1),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
