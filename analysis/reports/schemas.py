"""Declared schemas of the tidy tables, checked where a table is written and where it is
read (pandera). A violation raises :class:`SchemaError` naming the table and the cause."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.errors import SchemaError as _PanderaSchemaError
from pandera.errors import SchemaErrors as _PanderaSchemaErrors

from analysis.errors import AnalysisError
from analysis.precision import precision_of
from analysis.reports.hotspots import SAMPLES, SUMMED


class SchemaError(AnalysisError):
    """A table does not have the declared columns, types or constraints."""


_METRIC_TYPES = ["counter", "ratio", "throughput", "other"]

#: One row per (report, launch, metric) (analysis.reports.ncu.load_report).
TIDY = pa.DataFrameSchema(
    {
        "kernel": pa.Column("string", pa.Check.str_matches(r"^\S+$")),
        "precision": pa.Column("string", pa.Check.isin(["fp16", "int8", "int4"]), nullable=True),
        "n": pa.Column("Int64", pa.Check.gt(0), nullable=True),
        "repeat": pa.Column(int, pa.Check.ge(0)),
        "launch": pa.Column(int, pa.Check.ge(0)),
        "metric": pa.Column("string", pa.Check.str_length(min_value=1)),
        "value": pa.Column(float, nullable=True),
        "value_str": pa.Column("string", nullable=True),
        "unit": pa.Column("string", nullable=True),
        "metric_type": pa.Column("string", pa.Check.isin(_METRIC_TYPES)),
        "instances": pa.Column(int, pa.Check.ge(0)),
        "report": pa.Column("string", pa.Check.str_length(min_value=1)),
        "range": pa.Column(int, pa.Check.ge(0)),
        "function": pa.Column("string", nullable=True),
        "demangled": pa.Column("string", nullable=True),
        "mangled": pa.Column("string", nullable=True),
        "occurrence": pa.Column(int, pa.Check.ge(0)),
        "grid": pa.Column("string", pa.Check.str_matches(r"^\d+,\d+,\d+$"), nullable=True),
        "block": pa.Column("string", pa.Check.str_matches(r"^\d+,\d+,\d+$"), nullable=True),
        "profiling_failed": pa.Column(bool),
        "range_name": pa.Column("string", nullable=True),
        "nvtx": pa.Column("string", nullable=True),
    },
    unique=["report", "launch", "metric"],
    strict=False,
    ordered=False,
)

#: A profile set's table: the per-report columns plus the set's.
SET = TIDY.add_columns({
    "set": pa.Column("string", pa.Check.str_length(min_value=1)),
    "gpu": pa.Column("string", nullable=True),
    "cc": pa.Column("string", nullable=True),
    "driver": pa.Column("string", nullable=True),
    "cuda_version": pa.Column("string", nullable=True),
    "ncu_version": pa.Column("string", nullable=True),
})

#: The summary the figures read: one row per launch (one per kernel and N for this
#: workflow's own reports).
SUMMARY = pa.DataFrameSchema(
    {
        "set": pa.Column(str),
        "kernel": pa.Column(str),
        "precision": pa.Column(str, nullable=True),
        "n": pa.Column("Int64", pa.Check.gt(0), nullable=True),
        "report": pa.Column(str),
        "launch": pa.Column(int, pa.Check.ge(0)),
        # values outside a nominal range are kept and named in flags (analysis.reports.tables.range_flags)
        "throughput": pa.Column(float, nullable=True),
        "throughput_unit": pa.Column(str, pa.Check.isin(["TFLOP/s", "TOP/s"]), nullable=True),
        "throughput_source": pa.Column(str),
        "gpu__time_duration.sum": pa.Column(float, nullable=True),
        "sm__warps_active.avg.pct_of_peak_sustained_active": pa.Column(float, nullable=True),
        "flags": pa.Column(str, nullable=True, required=False),
    },
    unique=["set", "report", "launch"],
    strict=False,
    coerce=True,
)


#: Guided-analysis findings, one row per launch and rule result (analysis.reports.findings).
FINDINGS = pa.DataFrameSchema(
    {
        "report": pa.Column("string", pa.Check.str_length(min_value=1)),
        "launch": pa.Column("int64", pa.Check.ge(0)),
        "kernel": pa.Column("string", nullable=True),
        "mangled": pa.Column("string", nullable=True),
        "rule": pa.Column("string", nullable=True),
        "section": pa.Column("string", nullable=True),
        "name": pa.Column("string", nullable=True),
        "title": pa.Column("string", nullable=True),
        "message": pa.Column("string", pa.Check(lambda s: ~s.fillna("").str.contains(r"@[a-z_]+:"), element_wise=False,
                                                 error="GUI markup left in a message")),
        "kind": pa.Column("string", pa.Check.isin(["none", "ok", "optimization", "warning", "error", "unreadable"])),
        "speedup_pct": pa.Column(float, nullable=True),
        "speedup_type": pa.Column("string", pa.Check.isin(["unknown", "local", "global"]), nullable=True),
        "focus_metrics": pa.Column("string", nullable=True),
    },
    strict=True,
    ordered=True,
)


def validate_findings(df: pd.DataFrame, what: object = "findings") -> pd.DataFrame:
    """Check a findings table (analysis.reports.findings.load_findings)."""
    return _validate(FINDINGS, df, str(what))


#: The identity of a launch in a set's findings and hot-spot tables (taken from its metric
#: table by report and launch): the workflow's kernel name, N and the launch's place.
_SET_IDENTITY = {
    "set": pa.Column("string", pa.Check.str_length(min_value=1)),
    "precision": pa.Column("string", nullable=True),
    "n": pa.Column("Int64", nullable=True),
    "demangled": pa.Column("string", nullable=True),
    "occurrence": pa.Column("int64", pa.Check.ge(0)),
    "range_name": pa.Column("string", nullable=True),
}

#: A set's findings: FINDINGS (``kernel`` the set's kernel name) and the launch identity.
SET_FINDINGS = FINDINGS.add_columns(_SET_IDENTITY)

#: One launch's most-sampled SASS instructions (analysis.reports.hotspots.hotspots_of).
HOTSPOTS = pa.DataFrameSchema(
    {
        "report": pa.Column("string", pa.Check.str_length(min_value=1)),
        "launch": pa.Column("int64", pa.Check.ge(0)),
        "rank": pa.Column("int64", pa.Check.ge(1)),
        "pc": pa.Column("int64", pa.Check.ge(0)),
        "pc_offset": pa.Column("int64", pa.Check.ge(0)),
        "sass": pa.Column("string"),
        "file": pa.Column("string", nullable=True),
        "line": pa.Column("Int64", nullable=True),
        "samples": pa.Column(float, pa.Check.gt(0)),
        "samples_share": pa.Column(float, pa.Check.in_range(0, 1)),
        "reasons": pa.Column("string"),
        "samples_metric": pa.Column("string", pa.Check.isin([SAMPLES, SUMMED])),
    },
    strict=True,
    ordered=True,
)

#: A set's hot spots: HOTSPOTS, the set's kernel name and the launch identity.
SET_HOTSPOTS = HOTSPOTS.add_columns({"kernel": pa.Column("string"), **_SET_IDENTITY})


def validate_set_findings(df: pd.DataFrame, what: object = "set findings") -> pd.DataFrame:
    """Check a set's findings table (analysis.reports.parse.write_set_tables)."""
    return _validate(SET_FINDINGS, df, str(what))


def validate_set_hotspots(df: pd.DataFrame, what: object = "set hot spots") -> pd.DataFrame:
    """Check a set's hot-spot table (analysis.reports.parse.write_set_tables)."""
    return _validate(SET_HOTSPOTS, df, str(what))


def _positive_finite() -> list:
    """A number > 0 that is not infinite (NaN fails the first check)."""
    return [pa.Check.gt(0), pa.Check(np.isfinite, element_wise=True, error="finite")]


#: Relative tolerance of a references.csv row's rate against work / median_ns (every row the
#: references rule wrote agrees within 5e-10: the rate is computed from the two).
RATE_RTOL = 1e-6
#: The unit a reference's precision is measured in (Precision.throughput_unit; the DRAM copy,
#: precision none, in TB/s).
REFERENCE_UNIT = {**{p: precision_of(p).throughput_unit for p in ("fp16", "int8", "int4")}, "none": "TB/s"}

#: A set's measured reference rates (analysis.gpu.references): ceilings and library GEMMs.
REFERENCES = pa.DataFrameSchema(
    {
        "name": pa.Column(str, pa.Check.str_length(min_value=1)),
        "kind": pa.Column(str, pa.Check.isin(["ceiling", "library"])),
        "precision": pa.Column(str, pa.Check.isin(["fp16", "int8", "int4", "none"])),
        "n": pa.Column(int, pa.Check.ge(0)),
        "work": pa.Column(float, _positive_finite()),
        "median_ns": pa.Column(float, _positive_finite()),
        "p25_ns": pa.Column(float, _positive_finite()),
        "p75_ns": pa.Column(float, _positive_finite()),
        "repeats": pa.Column(int, pa.Check.gt(0)),
        "rate": pa.Column(float, _positive_finite()),
        "unit": pa.Column(str, pa.Check.isin(["TFLOP/s", "TOP/s", "TB/s"])),
    },
    checks=[
        # work per ns / 1e3 is the rate in T.../s (work in operations or bytes)
        pa.Check(lambda d: pd.Series(np.isclose(d["rate"], d["work"] / d["median_ns"] / 1e3, rtol=RATE_RTOL,
                                                atol=0.0), index=d.index),
                 error=f"rate = work / median_ns / 1e3 (within {RATE_RTOL:g})"),
        pa.Check(lambda d: d["unit"] == d["precision"].map(REFERENCE_UNIT),
                 error="unit is the precision's: TFLOP/s for fp16, TOP/s for int8 and int4, TB/s for none"),
    ],
    unique=["name", "n"],
    strict=False,
    coerce=True,
)


#: The next step after a schema error of a table the workflow made from reports.
_SCHEMA_FIX = ("the table is made from the reports named above: re-read them (delete results/tidy/ and run the "
               "workflow again), or remove a report that is not an Nsight Compute report of kernel launches "
               "from its set")


def _validate(schema: pa.DataFrameSchema, df: pd.DataFrame, what: str) -> pd.DataFrame:
    """``schema.validate`` of ``df``; a failure names ``what``, the failing checks and, for
    each failing row, its report and launch where the table has them, then what to do."""
    try:
        return schema.validate(df, lazy=True)
    except (_PanderaSchemaError, _PanderaSchemaErrors) as exc:
        detail = getattr(exc, "failure_cases", None)
        if not isinstance(detail, pd.DataFrame):
            raise SchemaError(f"{what}: table does not match its declared schema:\n{exc}") from None
        shown = detail.head(5).copy()
        where = []
        if {"report", "launch"} <= set(df.columns) and "index" in shown:
            for i in shown["index"]:
                if i is not None and not pd.isna(i) and i in df.index:
                    row = df.loc[i]
                    where.append(f"report {row['report']}, launch {row['launch']}")
                else:
                    where.append("")
            shown["where"] = where
        cols = [c for c in ("column", "check", "failure_case", "where") if c in shown]
        cause = shown[cols].to_string(index=False)
        raise SchemaError(f"{what}: table does not match its declared schema:\n{cause}\n({_SCHEMA_FIX})") from None


def validate_tidy(df: pd.DataFrame, what: object = "tidy table") -> pd.DataFrame:
    """Check a per-report table (columns of analysis.reports.ncu.TIDY_COLUMNS)."""
    return _validate(TIDY, df, str(what))


def validate_set(df: pd.DataFrame, what: object = "set table") -> pd.DataFrame:
    """Check a profile set's table (analysis.reports.tables.set_table)."""
    return _validate(SET, df, str(what))


def validate_summary(df: pd.DataFrame, what: object = "summary") -> pd.DataFrame:
    """Check a summary (analysis.reports.tables.summary); returns it with columns coerced."""
    return _validate(SUMMARY, df, str(what))


#: The summary's text columns: read as written, never as numbers, booleans or missing values
#: (those of the summary's schema, and the launch identity it carries from the set's table:
#: ``gpu``, ``mangled``, ``demangled``...).
SUMMARY_TEXT = sorted({name for schema in (SUMMARY, SET) for name, col in schema.columns.items()
                       if str(col.dtype).startswith("string")})


def read_summary(path: str | Path) -> pd.DataFrame:
    """A summary CSV (analysis.reports.tables.summary, ``results/tables/{set}/summary.csv``),
    checked against its schema. The text columns (:data:`SUMMARY_TEXT`: set, kernel, report, ...)
    keep what was written: a report file named ``None``, ``NA`` or ``01`` stays that name, where
    pandas' default guessing would read missing values or numbers (``1`` and ``01`` alike). Only
    an empty field is missing, in every column (pandas writes a missing value as an empty field).

    Raises:
        SchemaError: the table does not match :data:`SUMMARY`, naming ``path``.
    """
    dtype = {c: str for c in SUMMARY_TEXT}
    df = pd.read_csv(path, dtype=dtype, keep_default_na=False, na_values=[""])
    return validate_summary(df, path)


def validate_references(df: pd.DataFrame, what: object = "references") -> pd.DataFrame:
    """Check a set's references.csv (analysis.gpu.references); returns it with columns coerced."""
    return _validate(REFERENCES, df.reset_index(drop=True), str(what))

