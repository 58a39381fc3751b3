"""Print the wall time nbval spent on each chapter, from its JUnit XML report.

Usage: python tests/chapter_times.py _build/nbval.xml
(The report's test cases are the notebooks' cells; their times are summed per notebook.)
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import defaultdict


def chapter_times(report: str) -> dict[str, float]:
    """Seconds per notebook, summed over its cells."""
    totals: dict[str, float] = defaultdict(float)
    for case in ET.parse(report).getroot().iter("testcase"):
        totals[case.get("classname") or "?"] += float(case.get("time", 0))  # e.g. "book.01_curl_framework.ipynb"
    return dict(totals)


def main() -> int:
    times = chapter_times(sys.argv[1] if len(sys.argv) > 1 else "_build/nbval.xml")
    for name, seconds in sorted(times.items()):
        print(f"{name}: {seconds / 60:.1f} min")
    print(f"all chapters: {sum(times.values()) / 60:.1f} min at CCL_SCALE=standard")
    return 0


if __name__ == "__main__":
    sys.exit(main())
