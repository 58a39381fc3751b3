"""One API-wide test of argument checking: every public callable of the package (each
module's ``__all__``, else the public names it defines) has a small valid call, its
baseline (``tests/bad_inputs/<module>.py``); each argument of it is then replaced, one
at a time, by each bad value, and the call must raise a ``ValueError`` or ``TypeError``
whose message names the argument (both arguments for a shape mismatch). A call that
returns is *silent*; one that raises another error, or a message without the name, is
*cryptic*. Each case must raise within :data:`CASE_SECONDS` (2 s): a "huge size" (the
bad value of every argument declared with ``checks.Sized``) must fail at the entry,
before anything is allocated; a longer case is a problem, interrupted by a timer, and
:data:`HARD_SECONDS` after its start a case still running (a size check missing before a
long computation in C, which no timer interrupts) ends the run with the stacks printed,
so that no case hangs the suite.

Where the bad values come from:

- an argument with a declared rule (``ccl_helpers.checks.checked``): the values the rule
  lists (``Rule.bad_values``), so that a rule and its test are one declaration, next
  to the parameter;
- any other argument: the name-keyed choices of ``tests/bad_inputs/legacy.py``, from
  its valid value (until its callable declares its rules).

Every public callable has a baseline or a reason in ``tests/bad_inputs/excluded.py`` (a
test checks it). Hypothesis feeds the shared checkers anything.
"""

from __future__ import annotations

import collections
import contextlib
import faulthandler
import importlib
import inspect
import math
import pkgutil
import signal
import time

import bad_inputs
import numpy as np
import pandas as pd
import pytest
import torch
from bad_inputs.common import PUBLIC
from bad_inputs.excluded import EXCLUDED
from bad_inputs.legacy import ANY_DTYPE, HOT_PATHS, VALUES_UNCHECKED, mutations
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ccl_helpers import checks

SHARED = {"common", "excluded", "legacy"}
"""The modules of ``tests/bad_inputs`` that hold no baselines."""
BASELINES = {}
for _info in pkgutil.iter_modules(bad_inputs.__path__):
    if _info.name not in SHARED:
        BASELINES |= importlib.import_module(f"bad_inputs.{_info.name}").BASELINES

FLOOR = {"callables": 306, "cases": 3279, "huge sizes": 126}
"""The coverage the test must keep. Before the rules were declared: 307 callables, 2,227
cases. Since: the timing of the exact expectation is a benchmark (its bad inputs in
tests/test_benchmarks.py), the three model-stacking functions are StackedModel's
``from_seeds``, ``tiled`` and ``subset`` (tests/test_train.py); the losses' shared
masked terms and ``verdicts.Claim`` joined. With the size estimates (``checks.Sized``):
3,227 cases, 88 of them a huge size; with the time limit (``checks.Steps``,
``checks.Duration``) and the former hard caps declared as estimates: 3,279 cases, 126 of
them a huge size."""


CASE_SECONDS = 2.0
"""The longest a bad call may run before it raises."""
HARD_SECONDS = 60
"""After this, a case still running ends the test run (stacks printed)."""


class TooSlow(BaseException):
    """Raised by the timer in a case that runs longer than :data:`CASE_SECONDS` (a
    ``BaseException``: no ``except Exception`` of the package swallows it)."""


@contextlib.contextmanager
def time_bound():
    """Interrupt the block with :class:`TooSlow` after :data:`CASE_SECONDS`, and end
    the process after :data:`HARD_SECONDS`."""

    def interrupt(signum, frame):
        raise TooSlow

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    faulthandler.dump_traceback_later(HARD_SECONDS, exit=True)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        faulthandler.cancel_dump_traceback_later()
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(autouse=True)
def default_limits(monkeypatch):
    """The cases run under the default memory and time limits, whatever the environment
    says."""
    monkeypatch.delenv(checks.MEMORY_LIMIT_VARIABLE, raising=False)
    monkeypatch.delenv(checks.TIME_LIMIT_VARIABLE, raising=False)


def shape_mismatch(kwargs, pair):
    """kwargs with the first argument of ``pair`` (first, second, dim) one entry short
    along ``dim``."""
    first, _, dim = pair
    value = kwargs[first]
    return {**kwargs, first: value.narrow(dim, 0, value.shape[dim] - 1)}


def cases_of(name):
    """[(argument, label, keyword arguments, names the message must show)] of callable
    ``name``: the bad values of its declared rules, the name-keyed ones of its other
    arguments, and the shape mismatches of its baseline."""
    kwargs, pairs = BASELINES[name]()
    rules = checks.declarations(PUBLIC[name])

    # The check helpers (checks.*, train.check_stages) report the name they are given,
    # not their own argument's (check_features, check_inputs: labels under
    # labels_name).
    def shown(arg):
        if not name.startswith("checks.") and name != "train.check_stages":
            return arg
        if arg == "labels" and name in ("checks.check_features", "checks.check_inputs"):
            return kwargs.get("labels_name", "labels")
        return kwargs["name"]

    cases = [
        (
            arg,
            bad.label,
            {**BASELINES[name]()[0], arg: bad.value},
            (arg, *bad.also),
        )
        for arg, rule in rules.items()
        for bad in rule.bad_values(kwargs.get(arg))
    ]
    cases += [
        (arg, label, {**kwargs, arg: bad}, (shown(arg),))
        for arg in kwargs
        if arg not in rules
        for label, bad in mutations(
            name, arg, BASELINES[name]()[0][arg], name in HOT_PATHS, name in ANY_DTYPE
        )
    ]
    cases += [
        (
            pair[0],
            "shape mismatch",
            shape_mismatch(BASELINES[name]()[0], pair),
            tuple(map(shown, pair[:2])),
        )
        for pair in pairs
    ]
    return cases


def run_case(fn, kwargs, must_name) -> tuple[str, str]:
    """The outcome of one bad call ("clear", "cryptic", "silent" or "slow") and what
    is wrong with it, the call bounded by :func:`time_bound`."""
    try:
        with time_bound():
            fn(**kwargs)
    except TooSlow:
        return "slow", f"still running after {CASE_SECONDS} s"
    except (ValueError, TypeError) as error:
        if all(n in str(error) for n in must_name):
            return "clear", ""
        return "cryptic", f"message without {must_name}: {error}"
    except Exception as error:  # noqa: BLE001 - the point: a cryptic error
        return "cryptic", f"{type(error).__name__}: {error}"
    return "silent", "returned silently"


def outcomes_of(name):
    """({"clear", "cryptic", "silent", "huge sizes"}: count, [problem], the slowest
    case (seconds, description)) over the cases of callable ``name``, after checking
    that its baseline is a valid call. A case that runs longer than
    :data:`CASE_SECONDS` is a problem ("slow") whatever it ends with."""
    fn = PUBLIC[name]
    kwargs, _ = BASELINES[name]()
    parameters = inspect.signature(fn).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        assert set(kwargs) <= set(parameters), f"unknown arguments in {name}'s baseline"
    fn(**kwargs)  # the baseline is valid
    counts = collections.Counter(clear=0, cryptic=0, silent=0, slow=0)
    problems = []
    slowest = (0.0, "")
    for arg, label, call_kwargs, must_name in cases_of(name):
        counts["huge sizes"] += label == "huge size"
        start = time.perf_counter()
        outcome, detail = run_case(fn, call_kwargs, must_name)
        seconds = time.perf_counter() - start
        slowest = max(slowest, (seconds, f"{name}({arg}={label})"))
        if outcome == "clear" and seconds > CASE_SECONDS:
            outcome, detail = "slow", f"raised after {seconds:.1f} s"
        if outcome != "clear":
            problems.append(f"{arg}={label}: {detail}")
        counts[outcome] += 1
    return counts, problems, slowest


_OUTCOMES = {}


def outcomes(name):
    """:func:`outcomes_of`, computed once per callable and session."""
    if name not in _OUTCOMES:
        _OUTCOMES[name] = outcomes_of(name)
    return _OUTCOMES[name]


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_bad_input_raises_a_clear_error(name):
    _, problems, _ = outcomes(name)
    assert not problems, f"{name}:\n" + "\n".join(problems)


def test_bad_input_counts():
    """Over every callable with a baseline: no silent and no cryptic outcome, and at
    least the coverage of :data:`FLOOR` (run with ``-s`` to see the counts)."""
    totals = collections.Counter()
    for name in BASELINES:
        totals.update(outcomes(name)[0])
    slowest = max(outcomes(name)[2] for name in BASELINES)
    declared = [name for name in BASELINES if checks.declarations(PUBLIC[name])]
    sized = [
        name
        for name in BASELINES
        if any(
            rule.estimate is not None
            for rule in checks.declarations(PUBLIC[name]).values()
        )
    ]
    cases = totals["clear"] + totals["cryptic"] + totals["silent"] + totals["slow"]
    print(
        f"\nbad inputs: {len(BASELINES)} callables ({len(declared)} with declared "
        f"rules, {len(sized)} with a size estimate), {cases} cases "
        f"({totals['huge sizes']} huge sizes): {totals['clear']} clear, "
        f"{totals['cryptic']} cryptic, {totals['silent']} silent, {totals['slow']} "
        f"slow; the slowest case {slowest[0]:.2f} s: {slowest[1]}"
    )
    assert (totals["silent"], totals["cryptic"], totals["slow"]) == (0, 0, 0)
    assert slowest[0] <= CASE_SECONDS
    assert len(BASELINES) >= FLOOR["callables"] and cases >= FLOOR["cases"]
    assert totals["huge sizes"] >= FLOOR["huge sizes"]


def has_nan(out) -> bool:
    """Whether a result (a tensor, a frame, or a dict, tuple or list of them) holds a
    NaN among its floating-point values."""
    if isinstance(out, torch.Tensor):
        return out.is_floating_point() and bool(out.isnan().any())
    if isinstance(out, pd.DataFrame):
        return bool(out.select_dtypes("number").isna().any().any())
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (tuple, list)):
        return any(has_nan(value) for value in out)
    return isinstance(out, float) and math.isnan(out)


def values_unchecked(name, arg) -> bool:
    """Whether the values of argument ``arg`` of callable ``name`` are left unchecked:
    a floating tensor whose declared rule does not read values, or (undeclared) one
    named in :data:`VALUES_UNCHECKED` or of a callable of :data:`HOT_PATHS`."""
    rule = checks.declarations(PUBLIC[name]).get(arg)
    if rule is not None:
        return isinstance(rule, checks.TensorOf) and not rule.reads_values
    return f"{name}.{arg}" in VALUES_UNCHECKED or name in HOT_PATHS


def unchecked_nan_cases():
    """(callable, argument or batch element, kwargs with a NaN in that floating tensor)
    for every value left unchecked (:func:`values_unchecked`)."""
    cases = []
    for name in sorted(BASELINES):
        kwargs = BASELINES[name]()[0]
        for arg, value in kwargs.items():
            if not values_unchecked(name, arg):
                continue
            elements = value if type(value) is tuple else (value,)
            for i, element in enumerate(elements):
                if isinstance(element, torch.Tensor) and element.is_floating_point():
                    bad = element.clone()
                    bad.view(-1)[0] = math.nan
                    if type(value) is tuple:
                        label = f"{arg}[{i}]"
                        changed = (*value[:i], bad, *value[i + 1 :])
                    else:
                        label, changed = arg, bad
                    cases.append((name, label, {**kwargs, arg: changed}))
    return cases


def nan_result_or_error(name: str, kwargs: dict) -> str:
    """The outcome of a call: "nan" if it gives a NaN, "error" if it raises a ValueError
    (a hyperparameter tensor's value is read outside vmap), else "finite"."""
    try:
        return "nan" if has_nan(PUBLIC[name](**kwargs)) else "finite"
    except ValueError:
        return "error"


def test_unchecked_values_propagate_nan():
    """Where values are not checked (a per-step hot path, or a quantity recorded along
    training), a NaN input must give a NaN result or an error, never a finite wrong one
    (as NaN compared with anything is False, a count of wins would read 0)."""
    found = {
        f"{name}({arg}=NaN)": nan_result_or_error(name, kwargs)
        for name, arg, kwargs in unchecked_nan_cases()
    }
    silent = [case for case, outcome in found.items() if outcome == "finite"]
    assert not silent, silent
    assert len(found) >= 98  # 100 before the timing of the exact expectation moved
    errors = sum(outcome == "error" for outcome in found.values())
    print(f"\nunchecked values: {len(found)} NaN cases, {errors} of them an error")


def test_every_public_callable_has_a_baseline_or_a_reason():
    missing = sorted(set(PUBLIC) - set(BASELINES) - set(EXCLUDED))
    print(f"\n{len(missing)} of {len(PUBLIC)} public callables without a baseline")
    assert not missing, missing


def test_baselines_and_exclusions_name_public_callables():
    assert set(BASELINES) | set(EXCLUDED) <= set(PUBLIC)


def test_the_name_keyed_choices_name_no_declared_argument():
    """The name-keyed sets of ``bad_inputs/legacy.py`` serve undeclared arguments only:
    a callable all of whose baseline arguments are declared leaves :data:`HOT_PATHS`,
    and a declared argument leaves every "callable.argument" entry."""
    from bad_inputs import legacy

    stale = []
    for name in BASELINES:
        declared = checks.declarations(PUBLIC[name])
        if (
            name in HOT_PATHS
            and declared
            and set(BASELINES[name]()[0]) <= set(declared)
        ):
            stale.append(name)
    for names in (
        legacy.VALUES_UNCHECKED,
        legacy.NON_NEGATIVE_INTS,
        legacy.POSITIVE_REALS,
        legacy.NON_NEGATIVE_REALS,
        legacy.FREE_STRINGS,
    ):
        for key in names:
            callable_name, _, argument = key.rpartition(".")
            if argument in checks.declarations(PUBLIC.get(callable_name)):
                stale.append(key)
    assert not stale, stale


def defaults(obj) -> dict:
    """The default of each argument of a function (or of a class's ``__init__``)."""
    parameters = inspect.signature(
        obj.__init__ if inspect.isclass(obj) else obj
    ).parameters
    return {
        name: parameter.default
        for name, parameter in parameters.items()
        if parameter.default is not parameter.empty
    }


def test_declared_rules_name_their_callables_arguments():
    """A declared rule's bad values are rejected by the rule itself (a huge size by
    the call's estimate) with the argument named, and every declared callable's
    baseline passes its rules."""
    for name in BASELINES:
        for arg, rule in checks.declarations(PUBLIC[name]).items():
            for bad in rule.bad_values(BASELINES[name]()[0].get(arg)):
                with pytest.raises(ValueError, match=arg):
                    rule.check(arg, bad.value, BASELINES[name]()[0])
                    if bad.label == "huge size":  # rejected by the call's estimate
                        arguments = {**defaults(PUBLIC[name]), **BASELINES[name]()[0]}
                        rule.estimate.check({**arguments, arg: bad.value})


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


def test_every_name_keyed_entry_serves_an_undeclared_argument():
    """Each entry of the name-keyed sets names an argument that some baseline passes and
    no rule declares: a bare name, an argument of that name; a "callable.argument", that
    callable's argument. A renamed or newly declared parameter thus fails here instead
    of silently leaving its cases."""
    from bad_inputs import legacy

    undeclared = {
        (name, argument)
        for name, baseline in BASELINES.items()
        for argument in baseline()[0]
        if argument not in checks.declarations(PUBLIC[name])
    }
    served = {argument for _, argument in undeclared} | {
        f"{name}.{argument}" for name, argument in undeclared
    }
    stale = [
        key
        for names in (
            legacy.VALUES_UNCHECKED,
            legacy.NON_NEGATIVE_INTS,
            legacy.POSITIVE_REALS,
            legacy.NON_NEGATIVE_REALS,
            legacy.FREE_STRINGS,
            legacy.COUNT_NAMES,
        )
        for key in names
        if key not in served
    ]
    assert not stale, stale


# ------------------------------------------------------------ the environment variables


def environment_outcome(case, call) -> tuple[str, str]:
    """("clear" | "accepted" | "cryptic" | "silent", the problem) of one call under
    ``case`` (:mod:`bad_inputs.environment`)."""
    from bad_inputs.environment import ALLOWED

    function, kwargs = call
    try:
        function(**kwargs)
    except ValueError as error:
        if case.accepted:
            return "cryptic", f"raised on an accepted value: {error}"
        shown = (case.variable, ALLOWED[case.variable])
        if all(text in str(error) for text in shown):
            return "clear", ""
        return "cryptic", f"message without {shown}: {error}"
    except Exception as error:  # noqa: BLE001 - the point: a cryptic error
        return "cryptic", f"{type(error).__name__}: {error}"
    if case.accepted:
        return "accepted", ""
    return "silent", "returned silently"


def test_environment_variables_fail_clearly(monkeypatch, tmp_path):
    """Every variable the package reads × its bad values × the public callables that
    read it (``tests/bad_inputs/environment.py``): a ValueError naming the variable
    and what is allowed, or, for a value legitimately taken, a return (run with ``-s``
    to see the counts)."""
    from bad_inputs.environment import CALLS, VARIABLES, cases

    state = (
        torch.get_num_threads(),
        torch.are_deterministic_algorithms_enabled(),
        torch.get_rng_state(),
    )
    counts = collections.Counter(clear=0, accepted=0, cryptic=0, silent=0)
    problems = []
    try:
        for case in cases(tmp_path):
            for name in case.callables:
                with monkeypatch.context() as patch:
                    for variable in VARIABLES:
                        patch.delenv(variable, raising=False)
                    for variable, value in {
                        **case.also,
                        case.variable: case.value,
                    }.items():
                        patch.setenv(variable, value)
                    outcome, problem = environment_outcome(case, CALLS[name])
                counts[outcome] += 1
                if problem:
                    where = f"{case.variable}={case.value!r} ({case.label}), {name}"
                    problems.append(f"{where}: {problem}")
    finally:
        torch.set_num_threads(state[0])
        torch.use_deterministic_algorithms(state[1])
        torch.set_rng_state(state[2])
    print(
        f"\nenvironment: {sum(counts.values())} cases: {counts['clear']} clear, "
        f"{counts['accepted']} accepted (the table says why), {counts['cryptic']} "
        f"cryptic, {counts['silent']} silent"
    )
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------- the methods' indices


def test_method_indices_fail_clearly(monkeypatch):
    """The public methods taking a member's index (``bad_inputs.train.METHODS``), run
    as the callables are (:func:`outcomes_of`, their bound method the callable): their
    declared rules' bad values (negative, bool, float, out of range) raise a ValueError
    naming the argument; so does the index one past the model's last member (run with
    ``-s`` to see the counts)."""
    from bad_inputs.train import METHODS

    totals = collections.Counter()
    problems = []
    for name, baseline in METHODS.items():
        method, kwargs, out_of_range = baseline()
        monkeypatch.setitem(PUBLIC, name, method)
        monkeypatch.setitem(BASELINES, name, lambda kwargs=kwargs: (kwargs, ()))
        counts, found, _ = outcomes_of(name)
        counts.pop("huge sizes", None)  # a label of some cases, not an outcome
        totals += counts
        problems += [f"{name}: {problem}" for problem in found]
        for arg, _, value in out_of_range:
            with pytest.raises(ValueError, match=arg):
                method(**{**kwargs, arg: value})
            totals["clear"] += 1
    print(
        f"\nmethods: {len(METHODS)} methods, {sum(totals.values())} cases: "
        f"{totals['clear']} clear, {totals['cryptic']} cryptic, {totals['silent']} "
        "silent"
    )
    assert not problems, "\n".join(problems)
    assert sum(totals.values()) >= 10
