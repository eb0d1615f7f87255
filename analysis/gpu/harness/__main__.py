"""``python -m analysis.gpu.harness``: :func:`analysis.gpu.harness.cli.main`."""

import sys

from analysis.gpu.harness.cli import main

sys.exit(main())
