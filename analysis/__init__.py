"""Profile tensor-core GEMM kernels with Nsight Compute and turn the reports into tidy tables.

Public entry point: :func:`load_report` (a ``.ncu-rep`` or ``.ncu-rep.xz`` -> a tidy
pandas DataFrame, one row per launch x metric).
"""

from .errors import AnalysisError, CheckFailedError, ConfigError, ReportError, ToolNotFoundError
from .ncu import load_instances, load_report

__all__ = ["load_report", "load_instances", "AnalysisError", "ReportError", "CheckFailedError",
           "ConfigError", "ToolNotFoundError"]
