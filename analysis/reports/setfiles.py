"""Read and check the files of a profile set beside its reports: ``metadata.json``,
``timings.csv`` and ``references.csv``.

A set may come from elsewhere (another machine, another program, a hand edit), so every
file is checked where it is read, and an error names the file, the row or column at
fault and what to do. A JSON byte-order mark is accepted (RFC 8259 lets a parser ignore
it); nothing else is repaired silently.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.errors import SchemaError as _PanderaSchemaError
from pandera.errors import SchemaErrors as _PanderaSchemaErrors

from analysis.errors import AnalysisError, SetFileError  # noqa: F401 (raised here, named here too)
from analysis.precision import PAIRED_REFERENCES


#: What metadata.json may hold; every field is optional (sets from elsewhere carry few),
#: but a field that is there must have this type.
METADATA_SCHEMA = {
    "type": "object",
    "properties": {
        "set": {"type": "string"},
        "gpu": {"type": "string"},
        "cc": {"type": "string", "pattern": r"^\d+\.\d+$"},
        "arch": {"type": "string", "pattern": r"^sm_\d+a?$"},
        "driver": {"type": "string"},
        "cuda_version": {"type": "string"},
        "ncu_version": {"type": "string"},
        "nvcc_version": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        "section_set": {"type": "string"},
        "clock_control": {"type": "string"},
        "tiling": {"type": "object"},
        "kernel_tilings": {"type": "object", "additionalProperties": {"type": "object"}},
        "date": {"type": "string"},
    },
}

_METADATA_FIX = "write it as one JSON object, e.g. {\"gpu\": \"NVIDIA H200\", \"ncu_version\": \"2025.3.1\"}, or remove it"


def read_metadata(path: str | Path | None) -> dict:
    """A set's ``metadata.json`` as a dict; {} when ``path`` is None or absent.

    Raises:
        SetFileError: empty, not JSON, not a JSON object, or a field of the wrong type
            (the message names the file and the field).
    """
    if path is None or not Path(path).exists():
        return {}
    raw = Path(path).read_bytes()
    if not raw.strip():
        raise SetFileError(path, "file is empty", _METADATA_FIX)
    try:
        meta = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise SetFileError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})", _METADATA_FIX) from None
    except json.JSONDecodeError as exc:
        raise SetFileError(path, f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
                           _METADATA_FIX) from None
    if not isinstance(meta, dict):
        raise SetFileError(path, f"holds a JSON {type(meta).__name__}, not an object", _METADATA_FIX)
    err = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(METADATA_SCHEMA).iter_errors(meta))
    if err is not None:
        field = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        raise SetFileError(path, f"field {field}: {err.message}", "correct the field or remove it")
    return meta


#: timings.csv: one row per kernel and N, event timings in ns (analysis.gpu.harness records).
TIMINGS = pa.DataFrameSchema(
    {
        "kernel": pa.Column(str, pa.Check.str_length(min_value=1)),
        "n": pa.Column(int, pa.Check.gt(0)),
        "median_ns": pa.Column(float, pa.Check.gt(0)),
        "p25_ns": pa.Column(float, pa.Check.gt(0)),
        "p75_ns": pa.Column(float, pa.Check.gt(0)),
        "repeats": pa.Column(int, pa.Check.gt(0)),
    },
    checks=[pa.Check(lambda d: (d["p25_ns"] <= d["median_ns"]) & (d["median_ns"] <= d["p75_ns"]),
                     error="p25_ns <= median_ns <= p75_ns")],
    unique=["kernel", "n"],
    strict=False,
    coerce=True,
)


def read_csv_checked(path: str | Path, schema: pa.DataFrameSchema, what: str, fix: str) -> pd.DataFrame:
    """Read a set's CSV file and check it against ``schema``.

    Raises:
        SetFileError: empty file, a required column missing (named), or values the
            schema refuses (the first failing rows, numbered as in the file: header = 1).
    """
    try:
        df = pd.read_csv(path)
    except (IsADirectoryError, PermissionError) as exc:
        raise SetFileError(path, f"cannot be read as a file ({exc.strerror})", fix) from None
    except pd.errors.EmptyDataError:
        raise SetFileError(path, "file is empty", fix) from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise SetFileError(path, f"not a CSV table ({exc})", fix) from None
    missing = [c for c in schema.columns if c not in df.columns]
    if missing:
        raise SetFileError(path, f"no column {', '.join(missing)} (columns: {', '.join(map(str, df.columns))})",
                           fix)
    try:
        return schema.validate(df, lazy=True)
    except (_PanderaSchemaError, _PanderaSchemaErrors) as exc:
        cases = getattr(exc, "failure_cases", None)
        if isinstance(cases, pd.DataFrame) and len(cases):
            parts = []
            table_level = cases.get("schema_context", pd.Series(index=cases.index, dtype=object)) == "DataFrameSchema"
            for (col, check), g in cases[~table_level].groupby(["column", "check"], dropna=False, sort=False):
                rows = sorted({int(i) + 2 for i in g["index"].dropna()})
                where = f" in row{'s' if len(rows) > 1 else ''} {', '.join(map(str, rows[:5]))}" if rows else ""
                vals = ", ".join(repr(v) for v in g["failure_case"].head(3))
                parts.append(f"{col}: {check} fails{where} ({vals})")
            for check, g in cases[table_level].groupby("check", sort=False):
                rows = sorted({int(i) + 2 for i in g["index"].dropna()})
                where = f" in row{'s' if len(rows) > 1 else ''} {', '.join(map(str, rows[:5]))}" if rows else ""
                parts.append(f"{check} fails{where}")
            cause = "; ".join(dict.fromkeys(parts))
        else:
            cause = str(exc)
        raise SetFileError(path, f"{what}: {cause}", fix) from None


def read_timings(path: str | Path) -> pd.DataFrame:
    """A set's ``timings.csv`` (event timings, ns), checked (:data:`TIMINGS`).

    Raises:
        SetFileError: as :func:`read_csv_checked`; a negative or zero duration, or a
            median outside its quartiles, is refused.
    """
    return read_csv_checked(path, TIMINGS, "event timings",
                            "timings.csv holds one row per kernel and N with kernel, n, median_ns, p25_ns, "
                            "p75_ns, repeats (ns, as the check_time rule writes them); fix the row or remove the file")


#: timing_samples.csv: every event-timed launch (rule timings), ns.
TIMING_SAMPLES = pa.DataFrameSchema(
    {
        "kernel": pa.Column(str, pa.Check.str_length(min_value=1)),
        "n": pa.Column(int, pa.Check.gt(0)),
        "sample": pa.Column(int, pa.Check.ge(0)),
        "ns": pa.Column(float, [pa.Check.gt(0), pa.Check(np.isfinite, element_wise=True, error="finite")]),
    },
    unique=["kernel", "n", "sample"],
    strict=False,
    coerce=True,
)


def read_timing_samples(path: str | Path) -> pd.DataFrame:
    """A set's ``timing_samples.csv`` (every event-timed launch, ns), checked
    (:data:`TIMING_SAMPLES`).

    Raises:
        SetFileError: as :func:`read_csv_checked`; a duration that is not a finite number > 0,
            or a sample given twice, is refused.
    """
    return read_csv_checked(path, TIMING_SAMPLES, "timing samples",
                            "timing_samples.csv is written by the timings rule on a GPU (kernel, n, sample, ns); "
                            "fix the row or remove the file")


def read_references(path: str | Path) -> pd.DataFrame:
    """A set's ``references.csv`` (ceilings and library GEMMs), checked
    (:data:`analysis.reports.schemas.REFERENCES`).

    Raises:
        SetFileError: as :func:`read_csv_checked`.
    """
    from analysis.reports.schemas import REFERENCES

    return read_csv_checked(path, REFERENCES, "reference rates",
                            "references.csv is written by the references rule on a GPU; fix the row or remove "
                            "the file")


#: paired.csv: one row per kernel, N and round of a kernel timed in pairs with its library
#: GEMM (analysis.gpu.paired.PairedRound), durations in ns.
PAIRED = pa.DataFrameSchema(
    {
        "kernel": pa.Column(str, pa.Check.str_matches(r"^[A-Za-z0-9_]+$")),
        "precision": pa.Column(str, pa.Check.isin(["fp16", "int8"])),
        "n": pa.Column(int, pa.Check.gt(0)),
        "library": pa.Column(str, pa.Check.isin(sorted({n for names in PAIRED_REFERENCES.values() for n in names}))),
        "round": pa.Column(int, pa.Check.ge(0)),
        "first": pa.Column(str, pa.Check.isin(["kernel", "library"])),
        "kernel_median_ns": pa.Column(float, [pa.Check.gt(0), pa.Check(np.isfinite, element_wise=True,
                                                                       error="finite")]),
        "library_median_ns": pa.Column(float, [pa.Check.gt(0), pa.Check(np.isfinite, element_wise=True,
                                                                        error="finite")]),
        "repeats": pa.Column(int, pa.Check.gt(0)),
    },
    checks=[pa.Check(lambda d: (d["first"] == "kernel") == (d["round"] % 2 == 0),
                     error="first is kernel in even rounds and library in odd ones"),
            pa.Check(lambda d: pd.Series([lib in PAIRED_REFERENCES.get(p, ())
                                          for lib, p in zip(d["library"], d["precision"])], index=d.index),
                     error="library is one of the precision's references ("
                           + ", ".join(f"{', '.join(names[:-1])} or {names[-1]} for {p}"
                                       for p, names in PAIRED_REFERENCES.items()) + ")")],
    unique=["kernel", "n", "library", "round"],
    strict=False,
    coerce=True,
)

_PAIRED_FIX = "paired.csv is written by the references rule on a GPU; fix the row or remove the file"


def read_paired(path: str | Path) -> pd.DataFrame:
    """A set's ``paired.csv`` (kernels timed in pairs with their library GEMM, ns), checked
    (:data:`PAIRED`).

    Raises:
        SetFileError: as :func:`read_csv_checked`; a zero, negative, infinite or missing
            duration, a round timed twice, a round whose ``first`` breaks the alternation, a
            library other than the precision's, a fractional N, round or repeat count, one
            kernel under two precisions, or a kernel and N without a round in each position
            (no ratio could be matched) is refused, naming the kernel and N.
    """
    try:  # the fractional-number check needs the values as written; read_csv_checked reports unreadable files
        raw = pd.read_csv(path)
    except Exception:  # noqa: BLE001
        raw = None
    if raw is not None:
        for col in ("n", "round", "repeats"):
            if col in raw.columns:
                v = pd.to_numeric(raw[col], errors="coerce")
                frac = raw[v.notna() & (v % 1 != 0)]
                if len(frac):
                    raise SetFileError(path, f"{col}: not a whole number in row {int(frac.index[0]) + 2} "
                                             f"({frac[col].iloc[0]!r})", _PAIRED_FIX)
    df = read_csv_checked(path, PAIRED, "paired timings", _PAIRED_FIX)
    precisions = df.groupby("kernel")["precision"].nunique()
    if (precisions > 1).any():
        k = precisions[precisions > 1].index[0]
        raise SetFileError(path, f"kernel {k} is given more than one precision "
                                 f"({', '.join(sorted(df.loc[df['kernel'] == k, 'precision'].unique()))})", _PAIRED_FIX)
    positions = df.groupby(["kernel", "n"])["first"].nunique()
    if (positions < 2).any():
        k, n = positions[positions < 2].index[0]
        raise SetFileError(path, f"{k} N={n}: every round has the {df.loc[(df['kernel'] == k) & (df['n'] == n), 'first'].iloc[0]} "
                                 "first, so no ratio can be matched by position (needs rounds with each first)",
                           _PAIRED_FIX)
    return df
