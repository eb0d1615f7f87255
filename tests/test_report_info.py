"""What a report says of where it was recorded (analysis.reports.report_info), on real reports: the
other people's reports of Nsight Compute 2020.2-2026.2 beside the project, this project's
H200 reports and the small ones in tests/data."""

from __future__ import annotations

import json
import lzma
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from analysis.errors import ReportError
from analysis.reports.report_info import METADATA_KEYS, report_metadata

from .conftest import REPO, REPORTS

DATA = REPO / "tests" / "data"
#: The machine the reports of tests/data were recorded on, as the workflow wrote it.
DATA_METADATA = DATA / "h200_580.159.04_ncu2025.3.1_multi" / "metadata.json"


#: Run in a child process: ncu_report asked for values of many chips here, outside the reader's
#: bookkeeping (analysis.reports.ncu.units), would change the metric types a later in-process
#: load_report of this pytest worker gets.
_DEVICES = """
import json, lzma, sys, tempfile
from pathlib import Path
import ncu_report
out = {}
with tempfile.TemporaryDirectory() as tmp:
    for name in sys.argv[1:]:
        path = Path(name)
        plain = Path(tmp) / path.name.removesuffix(".xz")
        plain.write_bytes(lzma.decompress(path.read_bytes()))
        ctx = ncu_report.load_report(str(plain))
        got = set()
        for r in range(ctx.num_ranges()):
            rng = ctx.range_by_idx(r)
            for a in range(rng.num_actions()):
                action = rng.action_by_idx(a)
                major = action.metric_by_name("device__attribute_compute_capability_major").value()
                minor = action.metric_by_name("device__attribute_compute_capability_minor").value()
                got.add((action.metric_by_name("device__attribute_display_name").value(), f"{major}.{minor}"))
        out[name] = sorted(got)
        plain.unlink()
print(json.dumps(out))
"""


def _launch_devices(paths) -> dict[str, set[tuple[str, str]]]:
    """(device__attribute_display_name, "major.minor") of every launch of each report, read by
    ncu_report in a child process (:data:`_DEVICES`)."""
    proc = subprocess.run([sys.executable, "-c", _DEVICES, *map(str, paths)], capture_output=True, text=True,
                          check=True)
    return {name: {tuple(d) for d in devices} for name, devices in json.loads(proc.stdout).items()}


def test_ncu_version_is_the_one_index_read_for_every_foreign_report(foreign_dir, foreign_index):
    """INDEX.tsv's ncu_version was read from each report's system information: the same
    string for every file that has one, None for the one that has none."""
    got = {f: report_metadata(foreign_dir / f)["ncu_version"] for f in foreign_index["file"]}
    want = {f: (None if pd.isna(v) else v) for f, v in zip(foreign_index["file"], foreign_index["ncu_version"])}
    assert got == want
    assert sum(v is not None for v in got.values()) == len(got) - 1  # the V100 report has none


def test_gpu_and_cc_are_those_of_every_launch(foreign_dir, foreign_index):
    """The session's device is the device of every launch (ncu_report's device attributes),
    and INDEX.tsv's GPU, on 21 GPUs of compute capability 7.0-12.0."""
    ccs = set()
    devices = _launch_devices(foreign_dir / f for f in foreign_index["file"])
    for f, gpu in zip(foreign_index["file"], foreign_index["gpu"]):
        meta = report_metadata(foreign_dir / f)
        assert meta["gpu"] == gpu, f
        assert devices[str(foreign_dir / f)] == {(meta["gpu"], meta["cc"])}, f
        ccs.add(meta["cc"])
    assert {"7.0", "9.0", "12.0"} <= ccs


@pytest.mark.parametrize("file, driver, cuda, ncu", [
    # Linux driver and the CUDA version it supports, ncu 2021.2
    ("ZSL98__bitwise_spgemm__profiling_results_sgemm__9966c431.ncu-rep.xz", "470.57.02", "11.4", "2021.2.2.0"),
    # a driver numbered as Windows drivers are, on a Linux target
    ("DarrenLu666888__CUDATutorial__profile__bebba271.ncu-rep.xz", "572.70", "12.8", "2025.1.0.0"),
    # ncu 2021.3 under a CUDA 13.0 driver: cuda_version is the driver's, not the toolkit's
    ("bautista-garcia__heat_sim__report_name__74ef3945.ncu-rep.xz", "580.95.05", "13.0", "2021.3.1.0"),
    # no driver version recorded, oldest and newest Nsight Compute of the corpus
    ("iamcoleman__monte-carlo-pi__profile__3d528bfb.ncu-rep.xz", None, "11.1", "2020.2.1.0"),
    ("Abhishek7204__raytracingCuda__profile__ca437891.ncu-rep.xz", None, "13.3", "2026.2.1.0"),
    # no Nsight Compute version either
    ("anuragdogra2192__MultipleNodesScalingCUDACPPApplications__report__82a84e5f.ncu-rep.xz", None, "11.2", None),
])
def test_versions_as_the_report_records_them(foreign_dir, file, driver, cuda, ncu):
    meta = report_metadata(foreign_dir / file)
    assert list(meta) == list(METADATA_KEYS)
    assert (meta["driver"], meta["cuda_version"], meta["ncu_version"]) == (driver, cuda, ncu)


@pytest.mark.parametrize("reports, metadata", [
    (REPORTS, REPO / "profiles" / "h200_580.159.04_ncu2025.3.1" / "metadata.json"),
    (sorted(DATA.glob("*.ncu-rep.xz")), DATA_METADATA),
], ids=["default set", "tests/data"])
def test_own_reports_agree_with_the_machine_they_were_made_on(reports, metadata):
    """The workflow's metadata.json (nvidia-smi, ncu --version on the GPU machine) and the
    reports made there agree; the driver version is in metadata.json, not in the reports
    (Nsight Compute 2025.3.1 records none), and report_metadata does not fill it in."""
    meta = json.loads(metadata.read_text())
    assert len(reports) >= 10
    for p in reports:
        got = report_metadata(p)
        assert (got["gpu"], got["cc"], got["cuda_version"]) == (meta["gpu"], meta["cc"], meta["cuda_version"]), p
        assert got["ncu_version"] == meta["ncu_version"] + ".0", p  # four components against three
        assert got["driver"] is None and meta["driver"] == "580.159.04", p


def test_a_name_with_angle_brackets_and_spaces_is_read():
    got = report_metadata(DATA / "scale<float> run 1.ncu-rep.xz")
    assert (got["gpu"], got["ncu_version"]) == ("NVIDIA H200", "2025.3.1.0")


def test_plain_report_gives_what_its_xz_gives(tmp_path):
    src = DATA / "many.ncu-rep.xz"  # 401 launches: every block skipped by its size
    plain = tmp_path / "many.ncu-rep"
    plain.write_bytes(lzma.decompress(src.read_bytes()))
    assert report_metadata(plain) == report_metadata(src)
    assert report_metadata(plain)["gpu"] == "NVIDIA H200"


def _damaged(tmp_path, name: str, data: bytes):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_damaged_or_foreign_files_raise_naming_the_cause(tmp_path):
    raw = lzma.decompress((DATA / "templates.ncu-rep.xz").read_bytes())
    xz = (DATA / "templates.ncu-rep.xz").read_bytes()
    cases = {
        "gone.ncu-rep": (None, "does not exist"),
        "empty.ncu-rep": (b"", "file is empty"),
        "cut.ncu-rep": (raw[: len(raw) // 2], "truncated"),
        "cut_inside.ncu-rep.xz": (lzma.compress(raw[: len(raw) // 2]), "truncated"),
        "cut_stream.ncu-rep.xz": (xz[: len(xz) // 2], "not a complete xz stream"),
        "text.ncu-rep": (b"kernel,metric,value\n", "no NVR header"),
        "plain_named_xz.ncu-rep.xz": (raw, "not an xz file"),
    }
    for name, (data, cause) in cases.items():
        p = tmp_path / name if data is None else _damaged(tmp_path, name, data)
        with pytest.raises(ReportError, match=cause) as exc:
            report_metadata(p)
        assert name in str(exc.value)
    other = tmp_path / "report.csv"
    shutil.copy(DATA / "templates.ncu-rep.xz", other)
    with pytest.raises(ReportError, match="is not a .ncu-rep"):
        report_metadata(other)
