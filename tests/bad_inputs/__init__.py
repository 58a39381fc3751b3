"""The valid calls (baselines) of the API-wide bad-input test, one module per module of
the package: each defines ``BASELINES``, name → a function returning (the keyword
arguments of a valid call, pairs (argument, argument it must agree with, the dimension
shortened in a mismatch)). Fresh tensors for every case. ``common`` holds the builders
they share, ``excluded`` the callables left out and ``legacy`` the bad values of
arguments without a declared rule."""
