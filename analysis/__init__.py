"""Profile tensor-core GEMM kernels with Nsight Compute and turn the reports into tidy tables.

Public entry point: :func:`load_report` (a ``.ncu-rep`` or ``.ncu-rep.xz`` -> a tidy
pandas DataFrame, one row per launch x metric). The readers are imported on first use,
so that importing a light submodule (the Snakefile does at start-up) does not import pandas.
"""

from analysis.errors import AnalysisError, CheckFailedError, ConfigError, ReportError, ToolNotFoundError

__all__ = ["load_report", "load_instances", "AnalysisError", "ReportError", "CheckFailedError",
           "ConfigError", "ToolNotFoundError"]


def __getattr__(name: str):
    if name in ("load_report", "load_instances"):
        from analysis.reports import ncu

        return getattr(ncu, name)
    raise AttributeError(f"module 'analysis' has no attribute {name!r}")
