"""Shared set-up of the unit tests: a non-interactive matplotlib backend, selected before
``ccl_helpers`` (which imports ``matplotlib.pyplot``) is imported by any test module."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import torch  # noqa: E402

# The unit tests use tiny tensors, for which intra-op threads only add synchronisation (on a
# busy 2-core machine a 2-thread bmm of a few hundred numbers can take milliseconds): one thread.
torch.set_num_threads(1)
