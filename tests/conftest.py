"""Fixtures built from the real, committed H200 profile set."""

from __future__ import annotations

import json
import lzma
import os
from pathlib import Path

import pandas as pd
import pytest

from analysis.gpu.device import detect_gpu
from analysis.reports.ncu import ReportName
from analysis.reports.parse import parse_reports

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SET = "h200_580.159.04_ncu2025.3.1"
SET_DIR = REPO / "profiles" / DEFAULT_SET
REPORTS = sorted((SET_DIR / "reports").glob("*.ncu-rep.xz"))


def pytest_collection_modifyitems(config, items):
    if detect_gpu() is not None:
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU and driver (none found)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def set_dir() -> Path:
    return SET_DIR


@pytest.fixture(scope="session")
def set_metadata() -> dict:
    return json.loads((SET_DIR / "metadata.json").read_text())


@pytest.fixture(scope="session")
def timings() -> pd.DataFrame:
    return pd.read_csv(SET_DIR / "timings.csv")


@pytest.fixture(scope="session")
def parsed_set():
    """Every committed report of the default set, read once as the workflow reads it
    (analysis.reports.parse: a pool of reader processes, one per core)."""
    got = parse_reports(REPORTS, workers=os.cpu_count() or 1)
    got.raise_errors(DEFAULT_SET)
    return got


@pytest.fixture(scope="session")
def other_set() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The committed nvcc 13.5 set: (set table, per-opcode instances), read once."""
    from analysis.reports.tables import set_table

    d = REPO / "profiles" / f"{DEFAULT_SET}_nvcc13.5"
    got = parse_reports(sorted((d / "reports").glob("*.ncu-rep.xz")), workers=os.cpu_count() or 1)
    got.raise_errors(d.name)
    table = set_table(got.metrics, d.name, json.loads((d / "metadata.json").read_text()))
    return table, pd.concat(got.instances, ignore_index=True)


@pytest.fixture(scope="session")
def report_tables(parsed_set) -> dict[ReportName, pd.DataFrame]:
    """Every committed report of the default set, parsed once."""
    return {ReportName.parse(p): m for p, m in zip(REPORTS, parsed_set.metrics)}


@pytest.fixture(scope="session")
def report_instances(parsed_set) -> pd.DataFrame:
    """The per-opcode instanced metrics of every report (what the workflow keeps)."""
    return pd.concat(parsed_set.instances, ignore_index=True)


@pytest.fixture(scope="session")
def small_report() -> Path:
    """The smallest committed report, for tests that damage a copy of it."""
    return min(REPORTS, key=lambda p: p.stat().st_size)


@pytest.fixture(scope="session")
def table(report_tables, set_metadata):
    """The default set's long table, built from the committed reports."""
    from analysis.reports.tables import set_table

    return set_table(list(report_tables.values()), DEFAULT_SET, set_metadata)


@pytest.fixture(scope="session")
def summ(table, report_instances, timings):
    """The default set's summary (one row per kernel and N), as the workflow builds it."""
    from analysis.reports.tables import summary

    return summary(table, report_instances, timings)


@pytest.fixture(scope="session")
def references() -> pd.DataFrame:
    return pd.read_csv(SET_DIR / "references.csv")


@pytest.fixture(scope="session")
def registry(repo) -> dict:
    import yaml

    return yaml.safe_load((repo / "config" / "config.yaml").read_text())["kernels"]


@pytest.fixture(scope="session")
def static(repo) -> pd.DataFrame:
    return pd.read_csv(repo / "figures" / "sass" / "static_summary.csv")


#: Real reports made by other people (other GPUs, Nsight Compute 2020.2-2026.2), kept beside
#: the project, with their provenance in INDEX.tsv (repository, path, commit, blob).
FOREIGN = REPO.parent / "shared" / "foreign-reports"


@pytest.fixture(scope="session")
def foreign_dir() -> Path:
    """The folder of other people's reports; the test is skipped where it is absent, and
    fails where it is absent under ``CI=true`` (CI must run these tests)."""
    if not (FOREIGN / "INDEX.tsv").is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{FOREIGN} is absent, and CI must run the tests of other people's reports")
        pytest.skip(f"{FOREIGN} is absent (other people's reports)")
    return FOREIGN


@pytest.fixture
def flipped_plain(foreign_dir, tmp_path) -> Path:
    """``tmp_path/flipped/profile.ncu-rep``: a real plain report of one launch (LakshyaSingh354's
    matmul_tiled) with the byte in its middle inverted. Its block headers read whole; ncu's
    reader opens a launch without a function name or metrics."""
    data = bytearray(lzma.decompress((foreign_dir / "LakshyaSingh354__CudaCode__report__164f986e.ncu-rep.xz")
                                     .read_bytes()))
    data[len(data) // 2] ^= 0xFF
    path = tmp_path / "flipped" / "profile.ncu-rep"
    path.parent.mkdir()
    path.write_bytes(bytes(data))
    return path


@pytest.fixture(scope="session")
def foreign_index(foreign_dir) -> pd.DataFrame:
    """INDEX.tsv of the other people's reports: one row per file (file, repo, path, commit,
    blob, bytes, gpu, ncu_version, launches, kernels, first_kernels)."""
    return pd.read_csv(foreign_dir / "INDEX.tsv", sep="\t", dtype={"ncu_version": "string"})
