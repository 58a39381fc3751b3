"""The public callables the bad-input test leaves out, each with its reason."""

from __future__ import annotations

# Callables left out, each with its reason.
EXCLUDED = {
    "train.Forward": "a type alias (an encoder's signature), not a function",
    "train.Stages": "a type alias (a schedule's signature), not a function",
    "glue": "records a value for the book (myst-nb); no numeric argument",
    "under_ci": "no argument",
    "checks.check_feature_dims": "shape-only helper (dtype and values are its callers' "
    "checks; names given by the caller): tests/test_checks.py",
    "checks.check_same_shape": "shape-only helper (dtype and values are its callers' "
    "checks; names given by the caller): tests/test_checks.py",
    "by_scale": "returns one of its three arguments, of any type: nothing to check",
    "evals": "returns one of its three arguments, of any type (as by_scale): nothing "
    "to check",
    "setup": "sets global state (seeds, threads) for the whole session",
    "checks.mps_available": "no argument",
    "checks.check_available": "the availability half of the Device rule and of "
    "CCL_DEVICE, given a parsed device: every declared device argument tries a device "
    "this machine lacks, and the environment's table CCL_DEVICE's",
    "distributed.cleanup": "no argument",
    "checks.memory_limit": "no argument (a bad CCL_MEMORY_LIMIT: the environment's "
    "table, and tests/test_checks.py)",
    "checks.time_limit": "no argument (a bad CCL_TIME_LIMIT: the environment's table, "
    "and tests/test_checks.py)",
    "checks.check_planned": "the body half of an estimate, called by the package with "
    "amounts it computed; tests/test_checks.py tests its message",
    "distributed.is_distributed": "no argument",
    "distributed.rank": "no argument",
    "distributed.world_size": "no argument",
    "models.MaxPool2x2": "a layer without constructor arguments; the network that "
    "holds it checks the input (ConvNet.forward)",
}

RECORDS = (
    "curl.BlockSamples",
    "curl.TunedRun",
    "data.Triplets",
    "verdicts.Estimate",
    "verdicts.PowerLawFit",
    "metrics.UnsupervisedSamples",
    "multimodal.DataModel",
    "multimodal.ODEState",
    "multimodal.Pairs",
    "multimodal.Reparametrised",
    "multineg.TargetDescent",
    "supervised_approx.AttractingTerms",
    "supervised_approx.RepellingChain",
    "supervised_approx.RepellingTerms",
    "supervised_approx.CurveShape",
    "train.Descent",
    "train.Evaluation",
)
EXCLUDED |= dict.fromkeys(
    RECORDS,
    "a NamedTuple of results: built by the package's functions, which check their "
    "inputs; its consumers check its fields",
)
EXCLUDED["distributed.init_from_env"] = (
    "initialises a process group under torchrun (opens ports, which these tests must "
    "not); backend and timeout_s are checked before"
)
EXCLUDED |= dict.fromkeys(
    (
        "plotting.finish",
        "plotting.plain_log_ticks",
        "plotting.PlainLogFormatter",
        "plotting.legend_below",
        "plotting.heatmap",
        "plotting.runs_and_mean",
        "plotting.runs_with_limit",
        "plotting.figure",
        "multineg.draw_lemma_curves",
        "multineg.draw_stored_runs",
    ),
    "a drawing helper: forwards a figure, an Axes and a DataFrame's named columns to "
    "matplotlib and seaborn (sizes by figsize, which has a baseline)",
)
EXCLUDED |= dict.fromkeys(
    ("launch.parse_args", "launch.main"),
    "the command line: argparse reports an unknown or malformed option with the usage "
    "and exit status 2, and check_options (a baseline) the options' ranges; "
    "tests/test_launch.py runs it",
)
EXCLUDED["runtime.plain_number"] = (
    "returns any value unchanged, a NumPy scalar or one-element tensor as a number"
)
EXCLUDED["plotting.use_style"] = "sets matplotlib's global style; no argument"
EXCLUDED["encoder_report.Row"] = (
    "a NamedTuple of report's row descriptions (REPORT_ROWS), which "
    "tests/test_encoder_report.py checks against the table"
)
EXCLUDED["plotting.Quantity"] = (
    "a NamedTuple of the palette's constants (QUANTITIES), which test_plotting checks "
    "entry by entry"
)
EXCLUDED |= dict.fromkeys(
    ("losses.at_least_float32", "losses.widen_float16", "losses.result_dtype"),
    "a dtype helper of the losses' hot path: any tensor, chosen by its dtype alone",
)
EXCLUDED["losses.nt_xent_per_anchor"] = (
    "the per-anchor kernel of nt_xent_loss and nt_xent_loss_distributed, which check "
    "its arguments (documented: unchecked here, a hot path)"
)
EXCLUDED |= dict.fromkeys(
    ("train.member_norms", "train.combined_norm"),
    "a norm of the training loop's hot path (every step): dtype and shape checked, "
    "values not (a NaN norm is what the loop's finiteness check reports; "
    "tests/test_train.py)",
)
EXCLUDED["results.save_paper_results"] = (
    "writes a chapter's stored results into the repository; chapter and numbers are "
    "checked first (tests/test_results.py)"
)
EXCLUDED["verdicts.ReaderTable"] = (
    "a display of reader_table's frame (which has a baseline); no checks of its own"
)
EXCLUDED["results.write_json"] = "writes a file; its record comes from jsonable"
EXCLUDED["verdicts.write_scorecard"] = "writes a file; scorecard_page has a baseline"
EXCLUDED["verdicts.load_records"] = "reads a folder; tests/test_verdicts.py"
EXCLUDED["verdicts.chapter_titles"] = "reads _toc.yml; tests/test_verdicts.py"
EXCLUDED["verdicts.main"] = "argparse's command line: exits with the usage"
EXCLUDED["verdicts.Verdicts"] = "a collector: its methods declare their rules "
EXCLUDED["verdicts.Verdicts"] += "(tests/test_verdicts.py)"
EXCLUDED["verdicts.claims_by_key"] = "takes *claims, which the walk cannot name; "
EXCLUDED["verdicts.claims_by_key"] += "its errors are tested in tests/test_verdicts.py"
EXCLUDED["results.jsonable"] = "any JSON data is valid (an empty dict too); `where` "
EXCLUDED["results.jsonable"] += "is any label of its error messages"
EXCLUDED["data.DataNotFoundError"] = "an exception class: its argument is a message"
EXCLUDED["data.LatentClassModel"] = "an abstract base class without arguments (its "
EXCLUDED["data.LatentClassModel"] += "subclasses GaussianClasses, EmpiricalClasses "
EXCLUDED["data.LatentClassModel"] += "have baselines)"
EXCLUDED |= dict.fromkeys(
    ("data.download", "data.fetch"),
    "downloads (tested offline against local servers in tests/test_data_files.py, a "
    "bad CCL_DATA_MIRROR included); dataset is checked first by the function that "
    "cache_dir and search_path use (baselines)",
)

EXCLUDED |= dict.fromkeys(
    (
        "checks.checked",
        "checks.declarations",
        "checks.BadValue",
        "checks.Rule",
        "checks.Function",
        "checks.Choice",
        "checks.Device",
        "checks.FloatingDtype",
        "checks.Instance",
        "checks.Int",
        "checks.Optional",
        "checks.Positive",
        "checks.PositiveOrScalarTensor",
        "checks.Probabilities",
        "checks.TensorOf",
        "checks.Sizes",
        "checks.Frame",
        "checks.Labels",
        "checks.OpenUnit",
        "checks.Sized",
        "checks.Steps",
        "checks.Estimate",
        "checks.Duration",
        "checks.estimated_bytes",
    ),
    "a rule and its declaration: written beside the code, not called by a user; each "
    "rule's bad values are checked against the rule (test_declared_rules_name_their_"
    "callables_arguments) and tests/test_checks.py tests them",
)
