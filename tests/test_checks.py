"""Unit tests of ccl_helpers._checks, the plain argument checks: each checker returns
the value it accepts and raises ValueError naming the argument and the allowed range
otherwise; on anything (hypothesis), never another error."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ccl_helpers import _checks as checks


@pytest.mark.parametrize(
    "value, minimum, maximum, expected",
    [(3, 1, None, 3), (np.int64(0), 0, 5, 0), (5, 0, 5, 5)],
)
def test_check_int_accepts_integers_in_range(value, minimum, maximum, expected):
    result = checks.check_int("k", value, minimum, maximum)
    assert result == expected and type(result) is int


@pytest.mark.parametrize(
    "value, maximum", [(0, None), (True, None), (2.0, None), ("3", None), (6, 5)]
)
def test_check_int_rejects_others_naming_the_argument(value, maximum):
    with pytest.raises(ValueError, match=r"k must be an integer (≥ 1|1\.\.5)"):
        checks.check_int("k", value, 1, maximum)


@pytest.mark.parametrize(
    "value, allow_zero, expected",
    [(0.5, False, 0.5), (3, False, 3.0), (0, True, 0.0), (np.float32(2.0), False, 2.0)],
)
def test_check_positive_accepts_finite_positive_reals(value, allow_zero, expected):
    result = checks.check_positive("lr", value, allow_zero)
    assert result == expected and type(result) is float


@pytest.mark.parametrize(
    "value, allow_zero",
    [
        (0, False),
        (-1e-3, True),
        (float("inf"), False),
        (float("nan"), True),
        (True, False),
        ("0.1", False),
        (torch.tensor(0.1), False),
    ],
)
def test_check_positive_rejects_others_naming_the_argument(value, allow_zero):
    with pytest.raises(ValueError, match=r"lr must be a finite real number (> 0|≥ 0)"):
        checks.check_positive("lr", value, allow_zero)


def test_check_tensor_accepts_and_returns_matching_tensors():
    x = torch.zeros(2, 3)
    assert checks.check_tensor("x", x, ndim=2, floating=True) is x
    assert checks.check_tensor("x", x, min_ndim=1) is x
    labels = torch.zeros(4, dtype=torch.int32)
    assert checks.check_tensor("y", labels, ndim=1, integer=True) is labels


@pytest.mark.parametrize(
    "value, options",
    [
        ([1.0, 2.0], {}),
        (torch.zeros(3), {"ndim": 2}),
        (torch.zeros(3), {"min_ndim": 2}),
        (torch.zeros(3, dtype=torch.long), {"floating": True}),
        (torch.zeros(3), {"integer": True}),
    ],
)
def test_check_tensor_rejects_others_naming_the_argument(value, options):
    with pytest.raises(ValueError, match="x must be an? .*torch.Tensor"):
        checks.check_tensor("x", value, **options)


def test_check_tensor_works_under_vmap():
    def first(x):
        checks.check_tensor("x", x, ndim=1, floating=True)
        return x[0]

    assert torch.equal(torch.vmap(first)(torch.eye(3)), torch.tensor([1.0, 0, 0]))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_check_finite(bad):
    x = torch.tensor([0.0, 1.0])
    assert checks.check_finite("x", x) is x
    with pytest.raises(ValueError, match="x must be finite"):
        checks.check_finite("x", torch.tensor([0.0, bad]))


def test_check_same_shape():
    checks.check_same_shape("b", torch.zeros(2, 3), "a", torch.ones(2, 3))
    with pytest.raises(ValueError, match=r"b must have the shape of a, \(2, 3\)"):
        checks.check_same_shape("b", torch.zeros(3, 2), "a", torch.ones(2, 3))


def test_check_choice():
    assert checks.check_choice("mode", "sum", ("mean", "sum")) == "sum"
    with pytest.raises(ValueError, match=r"mode must be one of \('mean', 'sum'\)"):
        checks.check_choice("mode", "max", ["mean", "sum"])


@pytest.mark.parametrize("value", [0.5, -2, np.float64(1.5), torch.tensor([0.5, 1.0])])
def test_check_finite_real_accepts_reals_and_floating_tensors(value):
    result = checks.check_finite_real("loss", value)
    if isinstance(value, torch.Tensor):
        assert result is value
    else:
        assert result == float(value) and type(result) is float


@pytest.mark.parametrize(
    "value",
    [
        float("nan"),
        float("inf"),
        True,
        "1",
        torch.tensor([1, 2]),
        torch.tensor([0.0, np.nan]),
    ],
)
def test_check_finite_real_rejects_others(value):
    with pytest.raises(ValueError, match="loss must be"):
        checks.check_finite_real("loss", value)


def test_check_positive_or_scalar_tensor():
    alpha = torch.tensor(2.0)
    assert checks.check_positive_or_scalar_tensor("alpha", alpha) is alpha
    assert checks.check_positive_or_scalar_tensor("alpha", 2) == 2.0
    # under vmap a tensor's value may vary per member: unchecked
    negative = torch.tensor([-1.0, 1.0])
    torch.func.vmap(lambda a: checks.check_positive_or_scalar_tensor("alpha", a))(
        negative
    )
    for bad in (
        0.0,
        torch.ones(2),
        torch.tensor(1),
        torch.tensor(-1.0),
        torch.tensor(0.0),
        torch.tensor(float("nan")),
    ):
        with pytest.raises(ValueError, match="alpha must be"):
            checks.check_positive_or_scalar_tensor("alpha", bad)


def test_check_device():
    assert checks.check_device("device", "cpu") == torch.device("cpu")
    for bad in ("bogus", 0.5, None):
        with pytest.raises(ValueError, match="device must be a torch.device"):
            checks.check_device("device", bad)


def test_check_floating_dtype():
    assert checks.check_floating_dtype("dtype", torch.float64) is torch.float64
    for bad in (torch.int64, torch.bool, "float32"):
        with pytest.raises(ValueError, match="dtype must be a floating-point"):
            checks.check_floating_dtype("dtype", bad)


def test_check_labels_checks_n_classes():
    for bad in (2.5, True, 0):
        with pytest.raises(ValueError, match="n_classes must be an integer"):
            checks.check_labels("labels", torch.tensor([0, 1]), n_classes=bad)


def test_check_probabilities_accepts_probability_vectors():
    rho = torch.tensor([0.25, 0.75], dtype=torch.float64)
    assert checks.check_probabilities("rho", rho) is rho
    checks.check_probabilities("rho", torch.tensor([0.0, 1.0]))


@pytest.mark.parametrize(
    "value, positive, match",
    [
        (torch.tensor([1.0]), False, "at least 2"),
        (torch.tensor([[0.5, 0.5]]), False, "1 dimension"),
        (torch.tensor([1, 0]), False, "floating-point"),
        (torch.tensor([0.5, float("nan")]), False, "finite"),
        (torch.tensor([-0.5, 1.5]), False, "≥ 0"),
        (torch.tensor([0.0, 1.0]), True, "> 0"),
        (torch.tensor([0.5, 0.6]), False, "sum to 1"),
    ],
)
def test_check_probabilities_rejects_others(value, positive, match):
    with pytest.raises(ValueError, match=f"rho must .*{match}"):
        checks.check_probabilities("rho", value, positive=positive)


def test_check_labels():
    labels = torch.tensor([0, 2, 1])
    assert checks.check_labels("labels", labels, n=3, n_classes=3) is labels
    bad = [
        (torch.tensor([0.0, 1.0]), {}, "integer"),
        (torch.tensor([0, 1]), {"n": 3}, "n = 3"),
        (torch.tensor([0, -1]), {}, r"0\.\.N_C − 1"),
        (torch.tensor([0, 3]), {"n_classes": 3}, r"0\.\.2, got values in 0\.\.3"),
        # uint8 and bool tensors index as masks: labels of those dtypes, and int32
        # ones, get the conversion
        *(
            (torch.tensor([0, 1]).to(dtype), {}, rf"int64.*{dtype}: pass labels\.long")
            for dtype in (torch.int32, torch.uint8, torch.bool)
        ),
    ]
    for value, options, match in bad:
        with pytest.raises(ValueError, match=f"labels must .*{match}"):
            checks.check_labels("labels", value, **options)


def test_check_classes_in_any_number_of_dimensions():
    tasks = torch.tensor([[0, 1], [1, 2]])
    assert checks.check_classes("tasks", tasks, ndim=2, n_classes=3) is tasks
    with pytest.raises(ValueError, match=r"tasks must be classes in 0\.\.1"):
        checks.check_classes("tasks", tasks, ndim=2, n_classes=2)
    with pytest.raises(ValueError, match="tasks must"):
        checks.check_classes("tasks", tasks[0], ndim=2)
    with pytest.raises(ValueError, match="n_classes must be an integer"):
        checks.check_classes("tasks", tasks, ndim=2, n_classes=2.5)


def test_check_features():
    labels = torch.tensor([0, 1, 1])
    assert checks.check_features("f", torch.zeros(2, 3, 4), labels) == 3
    bad = [torch.zeros(2, 4), torch.zeros(3), torch.zeros(3, 2, dtype=torch.long), [0]]
    for features in bad:
        with pytest.raises(ValueError, match=r"f must be .*\(\.\.\., n, d\).* = 3"):
            checks.check_features("f", features, labels)
    with pytest.raises(ValueError, match="y must be an integer"):
        checks.check_features("f", torch.zeros(3, 2), labels.float(), "y")
    for value in (math.nan, math.inf):
        features = torch.zeros(3, 2)
        features[1, 0] = value
        with pytest.raises(ValueError, match="f must be finite"):
            checks.check_features("f", features, labels)
    # inside a torch.func transform the values are not read
    batched = torch.zeros(2, 3, 2)
    batched[0, 0, 0] = math.nan
    counts = torch.func.vmap(
        lambda f: f.new_full((), checks.check_features("f", f, labels))
    )
    assert counts(batched).tolist() == [3.0, 3.0]


def test_check_feature_dims():
    checks.check_feature_dims("test", torch.zeros(5, 3), "train", torch.zeros(2, 4, 3))
    checks.check_feature_dims("test", torch.zeros(2, 5, 3), "train", torch.zeros(4, 3))
    for features in (torch.zeros(5, 2), torch.zeros(3, 5, 3)):
        with pytest.raises(ValueError, match=r"test must .* of train, .*\(2, 4, 3\)"):
            checks.check_feature_dims("test", features, "train", torch.zeros(2, 4, 3))


def test_check_steps():
    assert checks.check_steps("steps", (0, np.int64(3), 2)) == [0, 3, 2]
    assert checks.check_steps("steps", []) == []
    assert checks.check_steps("steps", [0, 9], 9) == [0, 9]
    for bad in (2.5, "12", [1, 2.5], [True], [-1]):
        with pytest.raises(ValueError, match="steps"):
            checks.check_steps("steps", bad)
    with pytest.raises(
        ValueError, match=r"steps\[1\] must be an integer 0\.\.9, got 10"
    ):
        checks.check_steps("steps", [9, 10], 9)


def test_check_callable():
    assert checks.check_callable("f", len) is len
    with pytest.raises(ValueError, match="f must be callable, got str"):
        checks.check_callable("f", "len")


def test_check_instance_names_the_class():
    comparison = checks.check_instance("c", (1, 2), tuple)
    assert comparison == (1, 2)
    with pytest.raises(ValueError, match="c must be a DataFrame .*got list"):
        checks.check_instance("c", [1], pd.DataFrame)


def test_check_frame():
    frame = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
    assert checks.check_frame("t", frame, ["a"]) is frame
    assert checks.check_frame("t", frame.iloc[:0], min_rows=0).empty
    for bad, match in [
        ({"a": [1]}, "t must be a DataFrame"),
        (frame.iloc[:0], r"t must have at least 1 row\(s\), got 0"),
        (frame[["b"]], r"t lacks the columns \['a'\]; it has \['b'\]"),
    ]:
        with pytest.raises(ValueError, match=match):
            checks.check_frame("t", bad, ["a"])
    with pytest.raises(ValueError, match=r"t lacks the columns \['c'\] named by by"):
        checks.check_frame("t", frame, ["a", "c"], columns_from="by")


def test_check_batch_checks_length_and_dtypes_only():
    x, y = torch.tensor([[math.nan, 1.0]]), torch.tensor([-1])
    assert checks.check_batch("batch", [x, y], ("floating", "integer")) == (x, y)
    for bad, match in [
        ((x,), r"batch must be a tuple of 2 tensors, got tuple of length 1"),
        (x, r"batch must be a tuple of 2 tensors, got shape"),
        ((y, y), r"batch\[0\] must be a floating-point"),
        ((x, x), r"batch\[1\] must be an integer"),
    ]:
        with pytest.raises(ValueError, match=match):
            checks.check_batch("batch", bad, ("floating", "integer"))


def test_check_batch_works_under_vmap():
    def loss(x, y):
        a, b = checks.check_batch("batch", (x, y), ("floating", "integer"))
        return a.sum() + b.sum()

    out = torch.func.vmap(loss)(torch.ones(3, 2), torch.ones(3, 2, dtype=torch.long))
    assert out.tolist() == [4.0, 4.0, 4.0]


def test_check_inputs():
    labels = torch.tensor([0, 1, 1])
    assert checks.check_inputs("x", torch.zeros(3, 2, 2), labels) == 3
    for inputs, labels_, match in [
        (torch.zeros(2, 2), labels, r"x must have n = len\(y\) = 3 rows"),
        (torch.zeros(3, dtype=torch.long), labels, "x must be a floating-point"),
        (torch.full((3,), math.nan), labels, "x must be finite"),
        (torch.zeros(3), torch.tensor([0, -1, 1]), "y must be classes"),
    ]:
        with pytest.raises(ValueError, match=match):
            checks.check_inputs("x", inputs, labels_, "y")


def test_check_open_unit():
    assert checks.check_open_unit("level", 0.95) == 0.95
    for bad in (0, 1, 1.5, -0.1, math.nan, True, "0.5"):
        with pytest.raises(ValueError, match=r"level must be in \(0, 1\)"):
            checks.check_open_unit("level", bad)


def test_check_sizes_checks_each_entry():
    assert checks.check_sizes("widths", [3, 4]) == [3, 4]
    assert checks.check_sizes("widths", 2) == 2
    for bad in (0, [3, 0], [3, 2.5], True, "3"):
        with pytest.raises(ValueError, match="widths must be an integer"):
            checks.check_sizes("widths", bad)


def test_check_size_along_names_both_arguments():
    a, b = torch.zeros(3, 4), torch.zeros(5, 4)
    checks.check_size_along("a", a, "b", b, -1)
    with pytest.raises(
        ValueError, match=r"a must have the size of b along dimension 0"
    ):
        checks.check_size_along("a", a, "b", b, 0)


def test_check_same_dtype_names_both_arguments_except_under_autocast():
    a, b = torch.zeros(2), torch.zeros(2, dtype=torch.float64)
    checks.check_same_dtype("a", a, "b", a)
    with pytest.raises(ValueError, match="a must have the dtype of b, torch.float64"):
        checks.check_same_dtype("a", a, "b", b)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        checks.check_same_dtype("a", a, "b", b)


def test_check_min_size_refuses_an_empty_set_along_its_axis():
    checks.check_min_size("x", torch.zeros(1, 0), 1, 0)
    with pytest.raises(ValueError, match=r"x must hold at least 1 example\(s\) along"):
        checks.check_min_size("x", torch.zeros(1, 0), 1, 1)


def test_check_count_refuses_by_name_from_a_count():
    assert checks.check_count("tasks", math.comb(10, 3), 1000, "n_classes=10") == 120
    with pytest.raises(ValueError, match=r"n_classes=100, m=5 give 75,287,520 tasks"):
        checks.check_count("tasks", math.comb(100, 5), 10**6, "n_classes=100, m=5")


def test_check_device_refuses_a_device_this_machine_lacks():
    assert checks.check_device("device", "cpu") == torch.device("cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device must name a device available"):
            checks.check_device("device", "cuda")


# ---------------------------------------------------------------- the shared checkers
# on anything (hypothesis): each returns the value it accepts or raises a ValueError
# naming the argument, never another error.

ANYTHING = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
    st.lists(st.integers(-3, 3), max_size=3),
    st.lists(st.floats(allow_nan=True), max_size=3).map(torch.tensor),
    st.integers(-3, 3).map(np.int64),
)


def accepted_or_named(check, *args):
    """check(*args), or None after a ValueError whose message names the argument."""
    try:
        return check(*args)
    except ValueError as error:
        assert "arg" in str(error)
        return None


@settings(max_examples=300, deadline=None)
@given(value=ANYTHING, minimum=st.integers(-3, 3))
def test_check_int_on_anything(value, minimum):
    out = accepted_or_named(checks.check_int, "arg", value, minimum)
    if out is not None:
        assert type(out) is int and out == value and out >= minimum
        assert not isinstance(value, bool)


@settings(max_examples=300, deadline=None)
@given(value=ANYTHING, allow_zero=st.booleans())
def test_check_positive_on_anything(value, allow_zero):
    out = accepted_or_named(checks.check_positive, "arg", value, allow_zero)
    if out is not None:
        assert type(out) is float and out == float(value) and math.isfinite(out)
        assert out > 0 or (allow_zero and out == 0)


@settings(max_examples=300, deadline=None)
@given(
    steps=st.one_of(ANYTHING, st.lists(ANYTHING, max_size=3)), last=st.integers(0, 5)
)
def test_check_steps_on_anything(steps, last):
    out = accepted_or_named(checks.check_steps, "arg", steps, last)
    if out is not None:
        assert all(type(s) is int and 0 <= s <= last for s in out)


@settings(max_examples=300, deadline=None)
@given(
    value=st.one_of(
        ANYTHING,
        st.lists(
            st.one_of(st.floats(-1, 2), st.just(math.nan)), min_size=1, max_size=4
        ).map(lambda p: torch.tensor(p, dtype=torch.float64)),
    )
)
@example(value=torch.tensor([0.25, 0.75], dtype=torch.float64))
def test_check_probabilities_on_anything(value):
    out = accepted_or_named(checks.check_probabilities, "arg", value)
    if out is not None:
        assert bool((out >= 0).all()) and abs(float(out.sum()) - 1) <= 1e-5
