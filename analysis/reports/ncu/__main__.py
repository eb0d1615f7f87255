"""``python -m analysis.reports.ncu``: the child reader of :func:`analysis.reports.ncu.load_report_isolated`
and the units server of :mod:`analysis.reports.ncu.units` (:func:`analysis.reports.ncu.isolated._main`)."""

import sys

from analysis.reports.ncu.isolated import _main

sys.exit(_main(sys.argv[1:]))
