"""Exception types raised by the package, one per kind of failure a user can act on."""

from __future__ import annotations


class AnalysisError(Exception):
    """Base class of every error this package raises on purpose."""


class ReportError(AnalysisError):
    """An Nsight Compute report cannot be used: the message names the file and the cause.

    Raised by :func:`analysis.reports.ncu.load_report` for a missing, empty, truncated, corrupt or
    non-report file, and for a report without the kernel launch that was expected.
    """

    def __init__(self, path: object, cause: str, hint: str = "") -> None:
        self.path = str(path)
        self.cause = cause
        self.hint = hint
        msg = f"{self.path}: {cause}"
        if hint:
            msg += f" ({hint})"
        super().__init__(msg)


class ToolNotFoundError(AnalysisError):
    """A required executable (nvcc, cuobjdump, ncu) is not installed where we look."""


class CheckFailedError(AnalysisError):
    """A kernel's output disagreed with the reference beyond the stated tolerance."""


class ConfigError(AnalysisError):
    """The workflow configuration or a requested (kernel, N, architecture) is invalid."""


class SetFileError(AnalysisError):
    """A file of a profile set is missing what it must hold; the message names the file,
    the place and the fix."""

    def __init__(self, path: object, cause: str, fix: str) -> None:
        self.path, self.cause, self.fix = str(path), cause, fix
        super().__init__(f"{path}: {cause} ({fix})")
