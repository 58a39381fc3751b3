"""Tests of ccl_helpers.data's augmentations (kornia): every strategy on 8×8 and 28×28
images (shape, range, dtype, device), determinism under a seed, independent parameters
per image, shared parameters along chosen dimensions, the parts of the recipe
(identity, noise level, cutout area), bad calls."""

from __future__ import annotations

import pytest
import torch
from bad_calls import bad_call

from ccl_helpers import data


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def images(size, n=6, seed=0):
    return torch.rand(n, 1, size, size, generator=gen(seed))


@pytest.mark.parametrize("size", [8, 28])
@pytest.mark.parametrize("name", data.STRATEGIES)
def test_every_strategy_shape_range_and_determinism(name, size):
    x = images(size)
    a = data.augment(x, name, gen(3))
    assert a.shape == x.shape and a.dtype == x.dtype and a.device == x.device
    assert float(a.min()) >= 0 and float(a.max()) <= 1
    torch.testing.assert_close(a, data.augment(x, name, gen(3)), rtol=0, atol=0)
    if name == "none":
        torch.testing.assert_close(a, x, rtol=0, atol=0)
    else:
        assert not torch.equal(a, data.augment(x, name, gen(4)))


def test_the_generator_advances_and_leaves_the_global_generator_alone():
    x, generator = images(8), gen(5)
    torch.manual_seed(123)
    before = torch.get_rng_state()
    first = data.augment(x, "base", generator)
    assert torch.equal(torch.get_rng_state(), before)
    assert not torch.equal(first, data.augment(x, "base", generator))


@pytest.mark.parametrize("name", ["base", "+rotation", "+cutout", "+noise"])
def test_images_of_a_batch_get_different_parameters(name):
    same = images(28, n=1).expand(8, 1, 28, 28)
    views = data.augment(same, name, gen(6))
    distinct = {tuple(v.flatten()[:200].tolist()) for v in views}
    assert len(distinct) == 8


def test_param_shape_shares_one_transformation_along_a_dimension():
    same = images(8, n=1).expand(3, 4, 1, 8, 8)
    shared = data.augment(same, "+noise", gen(4), param_shape=(3, 1))
    assert all(
        torch.equal(shared[k, 0], shared[k, j]) for k in range(3) for j in range(4)
    )
    assert not torch.equal(shared[0, 0], shared[1, 0])
    columns = data.augment(same, "base", gen(4), param_shape=(1, 4))
    assert all(
        torch.equal(columns[0, j], columns[k, j]) for k in range(3) for j in range(4)
    )
    # the same t on different images: equal to transforming them one by one with t
    pair = torch.stack([images(8, n=5, seed=1), images(8, n=5, seed=2)])
    out = data.augment(pair, "+rotation", gen(9), param_shape=(1, 5))
    one_by_one = data.augment(pair[0], "+rotation", gen(9))
    torch.testing.assert_close(out[0], one_by_one)


def test_noise_level_and_cutout_area():
    flat = torch.full((64, 1, 28, 28), 0.5)
    noisy = data.augment(flat, "+noise", gen(1))  # the rest keeps a flat image flat
    spread = noisy.flatten(1).std(1)
    assert 0.17 < float(spread.median()) < 0.205
    ones = torch.ones(64, 1, 28, 28)
    holes = (data.augment(ones, "+cutout", gen(2)) == 0).float().mean((1, 2, 3))
    assert float(holes.min()) > 0.05 and float(holes.max()) < 0.25
    assert float(holes.mean()) == pytest.approx(0.15, abs=0.03)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_augment_stays_on_the_gpu_and_is_deterministic_there():
    x = images(28).cuda()
    a = data.augment(x, "+noise", torch.Generator(device="cuda").manual_seed(0))
    b = data.augment(x, "+noise", torch.Generator(device="cuda").manual_seed(0))
    assert a.device == x.device and torch.equal(a, b)


IMAGES = torch.rand(6, 1, 8, 8, generator=torch.Generator().manual_seed(0))

BAD_CALLS = [
    bad_call(data.augment, "images", IMAGES[0, 0], "base", gen()),
    bad_call(data.augment, "images", (IMAGES * 255).long(), "base", gen()),
    bad_call(data.augment, "strategy", IMAGES, "blur", gen()),
    bad_call(data.augment, "generator", IMAGES, "base", 0),
    bad_call(
        data.augment,
        "param_shape",
        IMAGES.expand(2, 6, 1, 8, 8),
        "base",
        gen(),
        param_shape=(3, 1),
    ),
    bad_call(data.pipeline, "strategy", "none", 8, 8),
    bad_call(data.pipeline, "strategy", "rotation", 8, 8),
    bad_call(data.pipeline, "height", "base", 0, 8),
    bad_call(data.pipeline, "width", "base", 8, 2.5),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=str)
def test_bad_calls_are_refused_by_name(call):
    call.check()
