"""``python -m ccl_helpers.verdicts``: the command line (:func:`main`)."""

from ._records import main

main()
