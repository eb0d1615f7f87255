"""Version strings of Nsight Compute, drivers and CUDA, as numbers: ``2025.3.1.0`` and
``2025.3.1`` are one release, ``580.159.04`` is 580.159.4."""

from __future__ import annotations

import re

_LEADING = re.compile(r"\d+(?:\.\d+)*")


def version_numbers(version: object, whole: bool = False) -> tuple[int, ...] | None:
    """The dotted numbers a version string starts with (all of it with ``whole``), trailing
    zero parts dropped (``"2025.3.1.0 (build 36398880)"`` -> (2025, 3, 1)); None where it
    starts with none (or, with ``whole``, holds anything else)."""
    text = "" if version is None else str(version).strip()
    m = _LEADING.fullmatch(text) if whole else _LEADING.match(text)
    if not m:
        return None
    parts = [int(v) for v in m.group(0).split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)
