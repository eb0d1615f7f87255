"""Units that convert into one another, and the factor between two of them: shared by the
comparisons (:mod:`analysis.compare.diff`) and the set's summary (:mod:`analysis.reports.tables`)."""

from __future__ import annotations

import csv
import functools
from importlib import resources

import pandas as pd

#: Units that convert into one another, as (dimension, factor to the dimension's base
#: unit). ncu gives durations in ns in every version seen, but a table from another tool
#: may not; ``sector`` and ``sectors`` both occur (study notes).
UNITS = {
    "ns": ("time", 1.0), "nsecond": ("time", 1.0), "us": ("time", 1e3), "usecond": ("time", 1e3),
    "ms": ("time", 1e6), "msecond": ("time", 1e6), "s": ("time", 1e9), "second": ("time", 1e9),
    "byte": ("bytes", 1.0), "Kbyte": ("bytes", 1e3), "Mbyte": ("bytes", 1e6), "Gbyte": ("bytes", 1e9),
    "Tbyte": ("bytes", 1e12), "KB": ("bytes", 1e3), "MB": ("bytes", 1e6), "GB": ("bytes", 1e9),
    "KiB": ("bytes", 1024.0), "MiB": ("bytes", 1024.0 ** 2), "GiB": ("bytes", 1024.0 ** 3),
    "byte/s": ("byte rate", 1.0), "byte/second": ("byte rate", 1.0), "Kbyte/s": ("byte rate", 1e3),
    "Kbyte/second": ("byte rate", 1e3), "Mbyte/s": ("byte rate", 1e6), "Mbyte/second": ("byte rate", 1e6),
    "Gbyte/s": ("byte rate", 1e9), "Gbyte/second": ("byte rate", 1e9), "Tbyte/s": ("byte rate", 1e12),
    "Tbyte/second": ("byte rate", 1e12),
    "sector": ("sectors", 1.0), "sectors": ("sectors", 1.0), "cycle": ("cycles", 1.0), "cycles": ("cycles", 1.0),
}


def unit_factor(unit_from: str | None, unit_to: str | None) -> float | None:
    """The factor that takes a value in ``unit_from`` to ``unit_to`` (1 for equal units),
    or None when they do not convert (:data:`UNITS`)."""
    a = "" if unit_from is None or pd.isna(unit_from) else str(unit_from)
    b = "" if unit_to is None or pd.isna(unit_to) else str(unit_to)
    if a == b:
        return 1.0
    if a in UNITS and b in UNITS and UNITS[a][0] == UNITS[b][0]:
        return UNITS[a][1] / UNITS[b][1]
    return None


#: How a unit a report does not give (NA) is written in tables, lists and messages.
UNKNOWN_UNIT = "(unknown)"


def unit_text(unit) -> str:
    """A unit as tables write it: :data:`UNKNOWN_UNIT` for NA or None, else the text (ncu's
    empty unit of a dimensionless count stays empty)."""
    return UNKNOWN_UNIT if unit is None or pd.isna(unit) else str(unit)


def listed_units(units) -> str:
    """Several units (each as :func:`unit_text` writes it) as one cell, ``"; "``-joined, with
    ncu's empty unit written ``(none)`` so that it shows; a single unit as it is."""
    units = list(units)
    return "; ".join(u or "(none)" for u in units) if len(units) > 1 else units[0]


@functools.lru_cache(maxsize=1)
def device_attribute_units() -> dict[str, str]:
    """The units of the ``device__attribute_*`` metrics that have one, which Nsight Compute
    reports without a unit (empty in every report of ``foreign-reports``): metric name ->
    unit (``kHz``, ``bit``, ``byte``), from ``analysis/data/device_attribute_units.csv``,
    where each entry names its source (the CUDA Runtime API's ``cudaDeviceProp``). They label
    values; no value is converted."""
    with resources.files("analysis").joinpath("data/device_attribute_units.csv").open(encoding="utf-8") as fh:
        return {row["metric"]: row["unit"] for row in csv.DictReader(fh)}
