"""``python -m analysis.reports.ncu``: the child reader of :func:`analysis.reports.ncu.load_report_isolated`,
the units server of :mod:`analysis.reports.ncu.units` and the launch check of
:func:`analysis.reports.ncu.launch_problems` (:func:`analysis.reports.ncu.isolated._main`)."""

import sys

from analysis.reports.ncu.isolated import _main

sys.exit(_main(sys.argv[1:]))
