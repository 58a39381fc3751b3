"""Unit tests of ccl_helpers.checks: each checker returns the value it accepts and
raises ValueError naming the argument and the allowed range otherwise."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from ccl_helpers import checks


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
    with pytest.raises(ValueError, match=r"kinds\[0\]"):
        checks.check_batch("batch", (x,), ("float",))


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


# ---------------------------------------------------------------- declared rules


@checks.checked(
    x=checks.TensorOf(min_ndim=1, floating=True),
    y=checks.TensorOf(min_ndim=1, floating=True, like="x"),
    k=checks.Int(1),
    t=checks.Positive(),
    mode=checks.Choice(("a", "b")),
    chunk=checks.Optional(checks.Int(2)),
)
def _declared(x, y, k=1, t=1.0, mode="a", chunk=None):
    """A function with declared rules."""
    return x, y, k, t, mode, chunk


def test_checked_keeps_the_name_docstring_and_signature():
    import inspect

    assert _declared.__name__ == "_declared"
    assert _declared.__doc__ == "A function with declared rules."
    assert list(inspect.signature(_declared).parameters) == [
        "x",
        "y",
        "k",
        "t",
        "mode",
        "chunk",
    ]
    assert set(checks.declarations(_declared)) == {"x", "y", "k", "t", "mode", "chunk"}


def test_checked_passes_valid_calls_and_converts_integers():
    x = torch.zeros(2, 3)
    out = _declared(x, x, np.int64(3), 2, chunk=np.int64(4))
    assert out[0] is x and out[1] is x
    assert type(out[2]) is int and type(out[5]) is int and out[3] == 2


@pytest.mark.parametrize("argument", ["x", "y", "k", "t", "mode", "chunk"])
def test_every_bad_value_of_a_rule_is_rejected_naming_the_argument(argument):
    valid = dict(x=torch.zeros(2, 3), y=torch.ones(2, 3), k=1, t=1.0, mode="a", chunk=2)
    rule = checks.declarations(_declared)[argument]
    bad_values = rule.bad_values(valid[argument])
    assert bad_values
    for bad in bad_values:
        with pytest.raises(ValueError, match=argument) as error:
            _declared(**{**valid, argument: bad.value})
        assert all(name in str(error.value) for name in bad.also)


def test_a_rule_for_an_unknown_argument_fails_when_declared():
    with pytest.raises(TypeError, match="no argument"):
        checks.checked(z=checks.Int())(lambda x: x)


def test_sizes_checks_each_entry():
    rule = checks.Sizes()
    assert rule.check("hidden", (4, 5), {}) == (4, 5)
    with pytest.raises(ValueError, match="hidden"):
        rule.check("hidden", (4, 0), {})


@pytest.mark.parametrize(
    "rule, valid",
    [
        (checks.PositiveOrScalarTensor(), torch.tensor(0.5)),
        (checks.Probabilities(), torch.tensor([0.25, 0.75])),
        (checks.Function(), len),
        (checks.Instance(checks.BadValue), checks.BadValue("a", 1)),
        (checks.Device(), "cpu"),
        (checks.FloatingDtype(), torch.float32),
        (checks.Sizes(), (4, 5)),
        (checks.Labels(min_size=1), torch.tensor([0, 1, 1])),
        (checks.OpenUnit(), 0.95),
        (checks.TensorOf(ndim=2, floating=True, finite=True), torch.zeros(2, 3)),
        (checks.TensorOf(min_ndim=2, floating=True, min_size=1), torch.zeros(2, 3)),
        (checks.Optional(checks.Int(0, 5)), 3),
        (checks.Frame(["step"]), pd.DataFrame({"step": [0, 1], "value": [1.0, 2.0]})),
    ],
    ids=repr,
)
def test_each_rule_accepts_its_valid_value_and_rejects_its_bad_values(rule, valid):
    rule.check("arg", valid, {})
    assert rule.bad_values(valid)
    for bad in rule.bad_values(valid):
        with pytest.raises(ValueError, match="arg"):
            rule.check("arg", bad.value, {})


def test_tensor_of_same_dtype_as_names_both_arguments_and_their_dtypes():
    rule = checks.TensorOf(floating=True, same_dtype_as="anchor")
    anchor = torch.zeros(3, dtype=torch.float64)
    positive = torch.ones(3, dtype=torch.float64)
    assert rule.check("positive", positive, {"anchor": anchor}) is positive
    with pytest.raises(ValueError, match="positive.*anchor.*float64.*float32"):
        rule.check("positive", torch.ones(3), {"anchor": anchor})
    (bad,) = [bad for bad in rule.bad_values(anchor) if bad.label == "other dtype"]
    assert bad.value.dtype == torch.float32 and bad.also == ("anchor",)
    assert rule.check("positive", torch.ones(3), {"anchor": None}) is not None


def test_tensor_of_min_size_rejects_an_empty_set_along_the_sample_axis():
    rule = checks.TensorOf(min_ndim=2, min_size=1, sample_dim=-2)
    rule.check("features", torch.zeros(1, 3), {})
    with pytest.raises(ValueError, match="features must hold at least 1 example"):
        rule.check("features", torch.zeros(0, 3), {})
    (bad,) = [
        bad for bad in rule.bad_values(torch.zeros(4, 3)) if bad.label == "empty set"
    ]
    assert bad.value.shape == (0, 3)


def test_labels_min_size_rejects_no_labels():
    with pytest.raises(ValueError, match="labels must hold at least 1 example"):
        checks.Labels(min_size=1).check("labels", torch.zeros(0, dtype=torch.long), {})


# ------------------------------------------------------------- sizes: the memory limit


def test_memory_limit_default_and_environment(monkeypatch):
    monkeypatch.delenv("CCL_MEMORY_LIMIT", raising=False)
    assert checks.memory_limit() == 256 * 2**30
    for text, limit in [
        ("1TB", 1e12),
        ("1 TiB", 2**40),
        ("2e12", 2e12),
        ("500gb", 5e11),
        ("inf", math.inf),
    ]:
        monkeypatch.setenv("CCL_MEMORY_LIMIT", text)
        assert checks.memory_limit() == limit
    for text in ("lots", "-1GB", "0", "12 parsecs"):
        monkeypatch.setenv("CCL_MEMORY_LIMIT", text)
        with pytest.raises(ValueError, match="CCL_MEMORY_LIMIT"):
            checks.memory_limit()


PAIR_BYTES = checks.Estimate(
    "pair's table", ("n", "width"), lambda a: 8 * a["n"] * a["width"]
)


@checks.checked(
    n=checks.Sized(checks.Int(), PAIR_BYTES),
    width=checks.Sized(checks.Int(), PAIR_BYTES),
)
def _table(n, width=4):
    return torch.zeros(n, width, dtype=torch.float64)


def test_a_sized_call_is_checked_with_its_defaults_before_its_body(monkeypatch):
    monkeypatch.delenv("CCL_MEMORY_LIMIT", raising=False)
    assert _table(3).shape == (3, 4)
    assert checks.estimated_bytes(_table, 3) == 8 * 3 * 4 == _table(3).nbytes
    with pytest.raises(ValueError) as error:
        _table(2**40)  # 8.8 TB with the default width 4
    message = str(error.value)
    for part in ("pair's table", "n=1099511627776", "width=4", "35.2 TB", "275 GB"):
        assert part in message
    assert "CCL_MEMORY_LIMIT" in message
    monkeypatch.setenv("CCL_MEMORY_LIMIT", "100")
    with pytest.raises(ValueError, match="above the memory limit of 100 bytes"):
        _table(4)


def test_sized_rules_add_a_huge_size_naming_the_estimates_arguments():
    rule = checks.declarations(_table)["n"]
    assert rule.converts and rule.estimate is PAIR_BYTES
    huge = [bad for bad in rule.bad_values(3) if bad.label == "huge size"]
    assert huge == [checks.BadValue("huge size", 2**50, ("n", "width"))]
    assert checks.Optional(rule).estimate is PAIR_BYTES
    rows = checks.Sized(checks.TensorOf(), PAIR_BYTES).bad_values(torch.ones(2, 3))
    assert rows[-1].value.shape == (2**20, 3) and rows[-1].value.stride(0) == 0


# --------------------------------------------------------------- sizes: the time limit


def test_time_limit_default_and_environment(monkeypatch):
    monkeypatch.delenv("CCL_TIME_LIMIT", raising=False)
    assert checks.time_limit() == 24 * 3600
    for text, limit in [
        ("90", 90),
        ("90s", 90),
        ("30min", 1800),
        ("12 h", 43200),
        ("7d", 7 * 86400),
        ("inf", math.inf),
    ]:
        monkeypatch.setenv("CCL_TIME_LIMIT", text)
        assert checks.time_limit() == limit
    for text in ("soon", "-1h", "0", "3 fortnights", "1GB"):
        monkeypatch.setenv("CCL_TIME_LIMIT", text)
        with pytest.raises(ValueError, match="CCL_TIME_LIMIT"):
            checks.time_limit()


@pytest.mark.parametrize(
    "seconds, shown",
    [(45, "45 s"), (150, "2.5 min"), (86400, "24 h"), (3 * 86400, "3 days")],
)
def test_format_seconds(seconds, shown):
    assert checks._limits.format_seconds(seconds) == shown


PAIR_TIME = checks.Duration(
    "pair's scan", ("n",), lambda a: a["n"] ** 2 * checks.SECONDS_PER_STEP
)


@checks.checked(n=checks.Sized(checks.Int(), PAIR_TIME), n_steps=checks.Steps())
def _scan(n, n_steps=10):
    return n * n_steps


def test_durations_and_steps_are_checked_on_the_time_limit(monkeypatch):
    monkeypatch.delenv("CCL_TIME_LIMIT", raising=False)
    assert _scan(1000, n_steps=10**6) == 10**9
    assert checks.estimated_bytes(_scan, 1000) == 0  # a duration counts no bytes
    with pytest.raises(ValueError) as error:
        _scan(10**6)  # 10¹² pairs at 1 µs: 11.6 days
    message = str(error.value)
    for part in ("pair's scan", "n=1000000", "11.6 days", "24 h", "CCL_TIME_LIMIT"):
        assert part in message
    with pytest.raises(
        ValueError, match=r"n_steps=100,000,000,000 would run for at least 27.8 h"
    ):
        _scan(3, n_steps=10**11)
    monkeypatch.setenv("CCL_TIME_LIMIT", "2d")
    assert _scan(3, n_steps=10**11) == 3 * 10**11
    monkeypatch.setenv("CCL_TIME_LIMIT", "1s")
    with pytest.raises(ValueError, match="above the time limit of 1 s"):
        _scan(3, n_steps=2 * 10**6)
    steps = checks.declarations(_scan)["n_steps"]
    assert checks.BadValue("huge size", checks.HUGE) in steps.bad_values(10)


def test_check_planned_names_the_sizes_and_the_variable(monkeypatch):
    monkeypatch.delenv("CCL_MEMORY_LIMIT", raising=False)
    checks.check_planned("a table", "n=3", 24, ("n",))
    with pytest.raises(ValueError) as error:
        checks.check_planned("a table", "n=2**50", 2**53, ("n",))
    message = str(error.value)
    for part in ("a table: n=2**50 would allocate 9.01 PB", "reduce n, or lift", "1TB"):
        assert part in message
