"""Bad input, made from the committed real reports: every case gets a clear error naming
the file and the cause, or, where the input is still usable, a result that says what is
missing. Nothing half-written is left behind."""

from __future__ import annotations

import gzip
import lzma
import math
import os
import re
import shutil
import stat
import subprocess
import sys
import warnings
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

import analysis
import analysis.reports.report_info
from analysis.study import figures
from analysis.errors import AnalysisError, ConfigError, ReportError, ToolNotFoundError
from analysis.gpu.harness import Tiling
from analysis.reports.ncu import _run_reader, load_instances, load_report, load_report_isolated
from analysis.reports.schemas import (
    SchemaError,
    validate_references,
    validate_summary,
    validate_tidy,
)
from analysis.reports.tables import set_table, summary

from .conftest import REPO, SET_DIR

DATA = Path(__file__).parent / "data"
CONFIG_SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


@pytest.fixture(scope="module")
def good() -> Path:
    return SET_DIR / "reports" / "int8_wmma_n512.ncu-rep.xz"


@pytest.fixture(scope="module")
def good_bytes(good) -> bytes:
    return good.read_bytes()


@pytest.fixture(scope="module")
def plain_bytes(good) -> bytes:
    return lzma.decompress(good.read_bytes())


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


# ---- damaged files ---------------------------------------------------------------

def test_missing_file(tmp_path):
    with pytest.raises(ReportError, match="does not exist") as e:
        load_report(tmp_path / "int8_wmma_n512.ncu-rep.xz")
    assert "int8_wmma_n512.ncu-rep.xz" in str(e.value)


@pytest.mark.parametrize("name", ["int8_wmma_n512.ncu-rep", "int8_wmma_n512.ncu-rep.xz"])
def test_empty_file(tmp_path, name):
    with pytest.raises(ReportError, match="file is empty"):
        load_report(_write(tmp_path, name, b""))


@pytest.mark.parametrize("name", ["int8_wmma_n512.ncu-rep", "int8_wmma_n512.ncu-rep.xz"])
@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_folder_or_pipe_named_like_a_report_is_not_a_regular_file(tmp_path, name, kind):
    path = tmp_path / name
    path.mkdir() if kind == "folder" else os.mkfifo(path)
    with pytest.raises(ReportError, match="is not a regular file") as e:
        load_report(path)
    assert name in str(e.value)


def _packed(kind: str, plain: bytes) -> bytes:
    """A real report's plain bytes packed as a user might have packed them (``a+b``: ``b`` of
    ``a`` of them)."""
    import bz2
    import gzip
    import io
    import tarfile
    import zipfile

    if "+" in kind:
        inner, outer = kind.split("+")
        return _packed(outer, _packed(inner, plain))
    buf = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("int8_wmma_n512.ncu-rep", plain)
        return buf.getvalue()
    if kind == "tar":
        with tarfile.open(fileobj=buf, mode="w") as tf:
            info = tarfile.TarInfo("int8_wmma_n512.ncu-rep")
            info.size = len(plain)
            tf.addfile(info, io.BytesIO(plain))
        return buf.getvalue()
    if kind in PACKED_FILES:  # written by the tools themselves (tests/data/README.md), of add_basic
        return lzma.decompress((DATA / "packed" / PACKED_FILES[kind]).read_bytes())
    # lzma-other: .lzma of other settings than the usual (properties byte 0x6C, not 0x5D)
    other = [{"id": lzma.FILTER_LZMA1, "preset": 1, "lc": 0, "lp": 2, "pb": 2, "dict_size": 1 << 20}]
    return {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress,
            "lzma": lambda b: lzma.compress(b, format=lzma.FORMAT_ALONE),
            "lzma-other": lambda b: lzma.compress(b, format=lzma.FORMAT_ALONE, filters=other)}[kind](plain)


#: Packed reports made by the command-line tools (lz4 1.9.4, GNU tar 1.34), kept xz-compressed.
PACKED_FILES = {"lz4": "add_basic.lz4.xz", "legacy-lz4": "add_basic.legacy-lz4.xz", "v7-tar": "add_basic.v7-tar.xz",
                "pzstd": "add_basic.pzstd.xz"}


@pytest.mark.parametrize("kind, name, said", [
    ("gzip", "int8_wmma_n512.ncu-rep", "is gzip-compressed, not a plain report (unpack it to a .ncu-rep file)"),
    ("zip", "int8_wmma_n512.ncu-rep", "is a zip archive, not a plain report"),
    ("tar", "int8_wmma_n512.ncu-rep", "is a tar archive, not a plain report"),
    ("lzma", "int8_wmma_n512.ncu-rep", "is lzma-compressed (legacy .lzma), not a plain report"),
    ("gzip", "int8_wmma_n512.ncu-rep.xz", "is gzip-compressed, not xz (unpack it to a .ncu-rep file, or recompress that with xz)"),
    ("bzip2", "int8_wmma_n512.ncu-rep.xz", "is bzip2-compressed, not xz"),
    ("xz", "int8_wmma_n512.ncu-rep", "is xz-compressed, though named .ncu-rep (name it .ncu-rep.xz)"),
    ("xz+xz", "int8_wmma_n512.ncu-rep.xz", "its xz stream holds a file that is xz-compressed, not a report"),
    ("gzip+xz", "int8_wmma_n512.ncu-rep.xz", "its xz stream holds a file that is gzip-compressed, not a report"),
    # these were "not an Nsight Compute report" at first: no fixed magic (V7 tar, .lzma of
    # other settings) or a signature not looked for (lz4)
    ("lz4", "int8_wmma_n512.ncu-rep", "is lz4-compressed, not a plain report"),
    ("legacy-lz4", "int8_wmma_n512.ncu-rep", "is lz4-compressed (legacy frame), not a plain report"),
    ("lz4", "int8_wmma_n512.ncu-rep.xz", "is lz4-compressed, not xz"),
    ("v7-tar", "int8_wmma_n512.ncu-rep", "is a tar archive, not a plain report"),
    ("v7-tar+xz", "int8_wmma_n512.ncu-rep.xz", "its xz stream holds a file that is a tar archive, not a report"),
    ("lzma-other", "int8_wmma_n512.ncu-rep", "is lzma-compressed (legacy .lzma), not a plain report"),
    ("lzma-other+xz", "int8_wmma_n512.ncu-rep.xz",
     "its xz stream holds a file that is lzma-compressed (legacy .lzma), not a report"),
    # pzstd (zstd 1.5.4) starts with a skippable frame: was "holds no profiling range"
    ("pzstd", "int8_wmma_n512.ncu-rep", "is zstd-compressed, not a plain report"),
    ("pzstd+xz", "int8_wmma_n512.ncu-rep.xz", "its xz stream holds a file that is zstd-compressed, not a report"),
])
def test_a_report_packed_otherwise_than_its_name_says_is_named_for_what_it_is(tmp_path, plain_bytes, kind, name,
                                                                             said):
    """A gzip or zip file renamed .ncu-rep was "holds no profiling range (truncated, or not a
    report)" with the advice to profile the kernel again; a gzip file named .ncu-rep.xz "is
    not an xz file"; so were a tar or legacy .lzma file, and an xz file holding an xz or
    gzip file, at first."""
    path = _write(tmp_path, name, _packed(kind, plain_bytes))
    with pytest.raises(ReportError, match=re.escape(said)) as e:
        load_report(path)
    assert str(path) in str(e.value) and "profile the kernel again" not in str(e.value)
    # the session details' reader (import, metadata) stops at the same check; for a file
    # packed inside the xz stream it said "no NVR header" at first
    with pytest.raises(ReportError, match=re.escape(said)):
        analysis.reports.report_info.report_metadata(path)


def _not_reports(plain: bytes) -> dict[str, bytes]:
    """Files that are no report, as a user's folder may hold them under a report's name."""
    text = (REPO / "README.md").read_bytes()
    odd = [{"id": lzma.FILTER_LZMA1, "preset": 1, "lc": 0, "lp": 2, "pb": 0}]
    return {"text": text, "bzh_text": b"BZh is a word, not bzip2\n" + text,
            "zeros_512": bytes(512), "zeros_then_report": bytes(8192) + plain,
            "random": np.random.default_rng(0).bytes(100_000),
            "lzma_odd_text": lzma.compress(text, format=lzma.FORMAT_ALONE, filters=odd)}


@pytest.mark.parametrize("kind, said", [
    ("text", "is not an Nsight Compute report (no NVR header)"),
    ("bzh_text", "is not an Nsight Compute report (no NVR header)"),
    ("zeros_512", "is not an Nsight Compute report (no NVR header)"),
    ("zeros_then_report", "is not an Nsight Compute report (no NVR header)"),
    ("random", "is not an Nsight Compute report (no NVR header)"),
    ("lzma_odd_text", "is lzma-compressed (legacy .lzma), not a plain report"),
])
@pytest.mark.parametrize("xz", [False, True])
def test_a_file_that_is_no_report_is_called_none(tmp_path, plain_bytes, kind, said, xz):
    """Text, random bytes or zeros named .ncu-rep were "holds no profiling range (truncated, or
    not a report)" with the advice to profile again from load_report; zeros were "a tar
    archive" (tarfile reads a zero block as an empty archive) and a text starting "BZh"
    "bzip2-compressed"; an odd-settings .lzma of a non-report was not named. Inside an xz
    stream the same, as "its xz stream holds ..."."""
    data = _not_reports(plain_bytes)[kind]
    name = f"{kind}.ncu-rep"
    if xz:
        data, name = lzma.compress(data), name + ".xz"
        said = said.replace("is not an Nsight Compute report", "its xz stream holds no Nsight Compute report")
        said = said.replace("is lzma", "its xz stream holds a file that is lzma").replace("a plain report", "a report")
    path = _write(tmp_path, name, data)
    for read in (load_report, analysis.reports.report_info.report_metadata):
        with pytest.raises(ReportError, match=re.escape(said)) as e:
            read(path)
        assert str(path) in str(e.value) and "profile the kernel again" not in str(e.value)


def test_a_compressed_report_under_its_packer_s_name_is_told_to_be_unpacked(tmp_path, plain_bytes):
    """A .ncu-rep.gz given to load_report was only "is not a .ncu-rep or .ncu-rep.xz file"."""
    import gzip

    path = _write(tmp_path, "int8_wmma_n512.ncu-rep.gz", gzip.compress(plain_bytes))
    with pytest.raises(ReportError, match=re.escape("is not a .ncu-rep or .ncu-rep.xz file (it is gzip-compressed) "
                                                    "(unpack it to a .ncu-rep file)")):
        load_report(path)


def test_reading_a_plain_report_writes_nothing_beside_it(tmp_path, plain_bytes, good):
    """The units of a plain report read after another report (in a child process, whose answer
    goes through a file) leave no file in the report's folder, which may be read-only or read
    by another process at the same moment."""
    folder = tmp_path / "theirs"
    folder.mkdir()
    plain = _write(folder, "int8_wmma_n512.ncu-rep", plain_bytes)
    code = ("import sys; from analysis.reports.ncu import load_report as r; a = r(sys.argv[1]); b = r(sys.argv[2]); "
            "assert a.equals(b), 'the plain copy reads otherwise'")
    import subprocess
    import sys

    subprocess.run([sys.executable, "-c", code, str(good), str(plain)], check=True, cwd=REPO)
    assert sorted(p.name for p in folder.iterdir()) == ["int8_wmma_n512.ncu-rep"]


def test_truncated_xz(tmp_path, good_bytes):
    p = _write(tmp_path, "int8_wmma_n512.ncu-rep.xz", good_bytes[: len(good_bytes) // 2])
    with pytest.raises(ReportError, match="not a complete xz stream") as e:
        load_report(p)
    assert str(p) in str(e.value) and "profile the kernel again, or remove the file" in str(e.value)


@pytest.mark.parametrize("content", [b"hello", b"not a report at all, just some text\n" * 8])
def test_xz_name_without_xz_content(tmp_path, content):
    with pytest.raises(ReportError, match="is not an xz file"):
        load_report(_write(tmp_path, "int8_wmma_n512.ncu-rep.xz", content))


def test_not_a_report_file_name(repo):
    with pytest.raises(ReportError, match="README.md: is not a .ncu-rep or .ncu-rep.xz file"):
        load_report(repo / "README.md")


def test_corrupt_xz(tmp_path, good_bytes):
    b = bytearray(good_bytes)
    b[len(b) // 2] ^= 0x01  # one bit: xz's CRC64 catches it
    with pytest.raises(ReportError, match="xz"):
        load_report(_write(tmp_path, "int8_wmma_n512.ncu-rep.xz", bytes(b)))


def test_truncated_plain_report(tmp_path, plain_bytes):
    """ncu_report loads a truncated report without error; load_report refuses it."""
    p = _write(tmp_path, "int8_wmma_n512.ncu-rep", plain_bytes[: len(plain_bytes) // 3])
    with pytest.raises(ReportError, match="no metrics|no profiling range|no kernel launch"):
        load_report(p)


def test_corrupt_plain_report(tmp_path, plain_bytes):
    """A zeroed block: ncu_report gives a launch with 0 metrics, which is refused."""
    b = bytearray(plain_bytes)
    b[len(b) // 2: len(b) // 2 + 4096] = bytes(4096)
    with pytest.raises(ReportError, match="has no metrics"):
        load_report(_write(tmp_path, "int8_wmma_n512.ncu-rep", bytes(b)))


@pytest.mark.parametrize("content", [b"kernel,n,value\nint8_wmma,512,1.0\n", bytes(range(256)) * 64])
@pytest.mark.parametrize("xz", [False, True])
def test_not_a_report(tmp_path, content, xz):
    name = "int8_wmma_n512.ncu-rep" + (".xz" if xz else "")
    p = _write(tmp_path, name, lzma.compress(content) if xz else content)
    with pytest.raises(ReportError) as e:
        load_report(p)
    assert str(p) in str(e.value)


def test_one_exception_type_for_all_report_errors():
    assert issubclass(ReportError, AnalysisError) and analysis.ReportError is ReportError


# ---- launches ------------------------------------------------------------------------

def test_several_launches_are_read_and_one_can_be_required():
    """A real report of two launches (ncu --launch-count 2): read whole by default, refused
    where exactly one launch is asked for."""
    p = DATA / "int8_wmma_n512_two.ncu-rep.xz"
    with pytest.raises(ReportError, match="holds 2 kernel launches, expected 1") as e:
        load_report(p, expect_launches=1)
    assert "--launch-count 1 and a --kernel-name filter" in str(e.value)
    # too few: one launch, not "launches", and the hint to profile every launch asked for, not one
    with pytest.raises(ReportError, match="holds 1 kernel launch, expected 2") as e:
        load_report(DATA / "int8_wmma_n512_sol.ncu-rep.xz", expect_launches=2)
    assert "--launch-count 1" not in str(e.value) and "covering every launch asked for" in str(e.value)
    df = load_report(p)
    assert sorted(df["launch"].unique()) == [0, 1] and sorted(df["occurrence"].unique()) == [0, 1]
    assert df.groupby("launch")["metric"].nunique().min() > 500


def test_kernel_name_must_match_file_name(tmp_path, good):
    p = tmp_path / "int4_wmma_n512.ncu-rep.xz"
    shutil.copy(good, p)
    with pytest.raises(ReportError, match="is kernel 'int8_wmma', but the file name says 'int4_wmma'"):
        load_report(p)


# ---- the native reader in a child process ------------------------------------------

def test_isolated_reader_matches_in_process(good):
    m, i = load_report_isolated(good)
    pd.testing.assert_frame_equal(m, load_report(good))
    pd.testing.assert_frame_equal(i, load_instances(good))


def test_isolated_reader_reports_the_cause(tmp_path, good_bytes):
    p = _write(tmp_path, "int8_wmma_n512.ncu-rep.xz", good_bytes[:1000])
    with pytest.raises(ReportError, match="not a complete xz stream") as e:
        load_report_isolated(p)
    assert str(p) in str(e.value)


def test_isolated_reader_keeps_cause_and_hint_apart(tmp_path, good_bytes):
    """The child passes its ReportError's cause and hint on as they are, not the hint folded
    into the cause, and the line it prints for a person names the file."""
    p = _write(tmp_path, "int8_wmma_n512.ncu-rep.gz", gzip.compress(good_bytes))
    with pytest.raises(ReportError) as direct:
        load_report(p)
    with pytest.raises(ReportError) as isolated:
        load_report_isolated(p)
    assert direct.value.hint and (isolated.value.cause, isolated.value.hint) == (direct.value.cause, direct.value.hint)
    child = subprocess.run([sys.executable, "-m", "analysis.reports.ncu", str(p), str(tmp_path), "1"],
                           capture_output=True, text=True)
    assert child.returncode == 3 and f"ReportError: {p}: " in child.stderr


def test_isolated_reader_says_what_an_odd_child_printed(tmp_path):
    """Exit 3 without the cause line (a child of another version) is still a ReportError naming the file."""
    p = tmp_path / "odd_n512.ncu-rep"
    with pytest.raises(ReportError, match="the report reader failed: something else") as e:
        _run_reader(p, ["-c", "import sys; print('something else', file=sys.stderr); sys.exit(3)"])
    assert str(p) in str(e.value)


def test_crash_of_the_reader_fails_one_call(tmp_path):
    """A segfault in the child (here a real one, a read of address 0) becomes a ReportError."""
    p = tmp_path / "hostile_n512.ncu-rep"
    with pytest.raises(ReportError, match=r"crashed on this file \(signal 11\)") as e:
        _run_reader(p, ["-c", "import ctypes; ctypes.string_at(0)"])
    assert str(p) in str(e.value)


# ---- reports lacking metrics a figure needs ----------------------------------------

def test_smaller_section_set_still_plots_and_says_what_is_missing(tmp_path):
    """A real report profiled with only the SpeedOfLight and LaunchStats sections."""
    small = tmp_path / "int8_wmma_n512.ncu-rep.xz"
    shutil.copy(DATA / "int8_wmma_n512_sol.ncu-rep.xz", small)
    table = set_table([load_report(small)], "sol_only", {})
    s = validate_summary(summary(table, load_instances(small), None))
    assert np.isnan(s.loc[0, "dram__cycles_active.avg"]) and s.loc[0, "throughput"] > 0
    for name, fn in figures.FIGURES.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fig = fn(s, "sol only")
        texts = " ".join(t.get_text() for t in fig.texts)
        if name in ("coalescing", "dram_active"):
            assert any("not in the reports" in str(w.message) for w in caught), name
            assert "not in the reports" in texts
        figures.plt.close(fig)


# ---- tools, GPU, permissions ---------------------------------------------------------

def test_missing_ncu_on_a_gpu_machine_is_one_line(monkeypatch):
    from analysis import workflow
    from analysis.gpu.device import GpuInfo

    monkeypatch.setattr(workflow, "detect_gpu", lambda: GpuInfo("NVIDIA H200", "9.0", "sm_90", "580", "13.0"))
    gpu, note = workflow.local_gpu({"gpu": "auto", "tools": {"ncu": "/nonexistent/ncu"}})
    assert gpu is None and "\n" not in note
    assert "NVIDIA H200" in note and "ncu" in note and "committed profile sets" in note


def test_no_gpu_is_not_an_error():
    from analysis.workflow import local_gpu

    assert local_gpu({"gpu": "off"}) == (None, None)


def test_missing_compiler_skips_builds_with_a_fix(monkeypatch):
    from analysis import workflow

    def nothing(name, override=None):
        raise ToolNotFoundError(f"{name} not found: pip install nvidia-cuda-nvcc")

    monkeypatch.setattr(workflow, "find_tool", nothing)
    note = workflow.build_tools({"tools": {}})
    assert "pip install nvidia-cuda-nvcc" in note and "skipping the kernel builds" in note
    with pytest.raises(ToolNotFoundError):
        workflow.build_tools({"tools": {"nvcc": "/nonexistent/nvcc"}})


def _fake_ncu(tmp_path: Path, text: str, code: int) -> Path:
    exe = tmp_path / "ncu"
    exe.write_text(f"#!/bin/sh\n[ \"$1\" = --version ] && echo 'Version 2025.3.1.0' && exit 0\n"
                   f"echo '{text}' >&2\nexit {code}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


def test_counter_permission_error_explains_the_fix(tmp_path):
    from analysis.gpu.profile import profile_kernel

    ncu = _fake_ncu(tmp_path, "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission", 1)
    out = tmp_path / "int8_wmma_n512.ncu-rep.xz"
    with pytest.raises(AnalysisError, match="NVreg_RestrictProfilingToAdminUsers=0") as e:
        profile_kernel(tmp_path / "k.cubin", "int8_wmma", "int8", 512, Tiling(), out, ncu=str(ncu))
    assert "ERR_NVGPUCTRPERM" in str(e.value)
    assert list(tmp_path.glob("*.xz*")) == [] and not out.exists()


def test_failed_profile_leaves_no_report(tmp_path):
    from analysis.gpu.harness import Tiling
    from analysis.gpu.profile import profile_kernel

    ncu = _fake_ncu(tmp_path, "==ERROR== The application returned an error code (1).", 1)
    out = tmp_path / "int8_wmma_n512.ncu-rep.xz"
    with pytest.raises(AnalysisError, match="ncu exited with 1"):
        profile_kernel(tmp_path / "k.cubin", "int8_wmma", "int8", 512, Tiling(), out, ncu=str(ncu))
    assert not out.exists() and not list(tmp_path.glob(".int8_wmma*"))



def test_compressed_report_reads_as_the_plain_one(tmp_path):
    """The compress_report job's xz file holds the plain report byte for byte, and reads
    to the same table; a missing or empty plain report is refused naming the file."""
    from analysis.reports.ncu import load_report
    from analysis.gpu.profile import compress_report

    plain = tmp_path / "add_n1024.ncu-rep"
    plain.write_bytes(lzma.decompress((REPO / "tests" / "data" / "add_n1024.ncu-rep.xz").read_bytes()))
    out = tmp_path / "set" / "add_n1024.ncu-rep.xz"
    compress_report(plain, out)
    assert lzma.decompress(out.read_bytes()) == plain.read_bytes()
    pd.testing.assert_frame_equal(load_report(out).drop(columns="report"), load_report(plain).drop(columns="report"))
    empty = tmp_path / "empty_n512.ncu-rep"
    empty.write_bytes(b"")
    folder = tmp_path / "folder_n512.ncu-rep"
    folder.mkdir()
    for bad, why in ((empty, "empty"), (tmp_path / "absent_n512.ncu-rep", "no such report"),
                     (folder, "a folder, not a report")):
        with pytest.raises(AnalysisError, match=f"{bad.name}: {why}"):
            compress_report(bad, tmp_path / f"{bad.name}.xz")
        assert not (tmp_path / f"{bad.name}.xz").exists()
    with pytest.raises(AnalysisError, match="would be one file"):
        compress_report(plain, plain)
    with pytest.raises(AnalysisError, match=f"{tmp_path / 'set'}: cannot write it"):
        compress_report(plain, tmp_path / "set")  # a folder where the file should go
    assert plain.stat().st_size > 0 and not list(tmp_path.rglob("*.tmp*"))



def test_set_metadata_records_the_kernels_own_tilings(tmp_path, config):
    """metadata.json keeps the config's tiling and, per kernel whose tiling differs (the
    tuned and wgmma kernels), that kernel's; the committed _paths set holds the same."""
    import json

    from analysis.gpu.device import GpuInfo
    from analysis.gpu.profile import write_set_metadata
    from analysis.reports.setfiles import read_metadata
    from analysis.workflow import tiling_from_config

    ncu = _fake_ncu(tmp_path, "", 0)
    build = tmp_path / "k.resources.json"
    build.write_text(json.dumps({"nvcc": "13.0.88"}))
    kernels = ["int8_wmma", "fp16_ptx_tuned", "fp16_wgmma"]
    meta = write_set_metadata(tmp_path / "metadata.json", "s", GpuInfo("NVIDIA H200", "9.0", "sm_90", "580.159.04",
                                                                       "13.0"),
                              tiling_from_config(config), section_set="full", build_records=[build], ncu=str(ncu),
                              kernel_tilings={k: tiling_from_config(config, k) for k in kernels})
    assert sorted(meta["kernel_tilings"]) == ["fp16_ptx_tuned", "fp16_wgmma"]
    assert meta["kernel_tilings"]["fp16_wgmma"]["smem_bytes"] == tiling_from_config(config, "fp16_wgmma").smem_bytes
    assert read_metadata(tmp_path / "metadata.json") == meta
    paths = read_metadata(REPO / "profiles" / "h200_580.159.04_ncu2025.3.1_paths" / "metadata.json")
    for k, t in paths["kernel_tilings"].items():
        # a set recorded before a Tiling field existed lacks it: the field's default applies
        assert Tiling(**t) == tiling_from_config(config, k) != tiling_from_config(config)


# ---- configuration ---------------------------------------------------------------------

@pytest.fixture()
def config():
    import yaml

    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def test_valid_config_passes(config):
    from analysis.workflow import check_config

    validate(config, str(CONFIG_SCHEMA))
    check_config(config, REPO / "kernels")


@pytest.mark.parametrize("edit,match", [
    (lambda c: c["kernels"].update(int8_nosuch={**c["kernels"]["int8_wmma"]}), "no source file"),
    (lambda c: c.update(sizes=[512, 1000]), "N=1000"),
    (lambda c: c["kernels"]["int4_wmma"].update(archs=["sm_75"]), "sm_75 is not supported"),
    (lambda c: c.update(archs=["sm_70", "sm_90"]), "sm_70 cannot run"),
    (lambda c: c["kernels"]["int8_ptx_mma_k32"].update(baseline="fp16_wmma"), "another precision"),
    (lambda c: c["kernels"]["int8_wmma"].update(accumulator="f16"), "accumulator f16 needs precision fp16"),
    (lambda c: c["kernels"]["int8_wgmma_cluster"].update(c_dtype="float16"), "c_dtype float16 needs precision fp16"),
    (lambda c: c["kernels"]["fp16_ptx_fp16acc"].update(c_dtype="float16"), "c_dtype float16 needs precision fp16"),
    (lambda c: c["profile"].update(sizes_beyond_study=[8192, 6144]), "sizes_beyond_study: N=6144 is not among"),
    (lambda c: c.update(sizes=[512, 1024]), "give profile.sizes_beyond_study some of them, or null"),
])
def test_invalid_config_is_refused_before_any_work(config, edit, match):
    from analysis.workflow import check_config

    edit(config)
    with pytest.raises(ConfigError, match=match):
        check_config(config, REPO / "kernels")


@pytest.mark.parametrize("edit", [
    lambda c: c["timing"].update(repeats=0),
    lambda c: c["profile"].update(repeats=0),
    lambda c: c.update(gpu="sometimes"),
    lambda c: c["kernels"]["int8_wmma"].update(precision="int3"),
    lambda c: c.update(unknown_key=1),
    lambda c: c["tiling"].update(block_k_bytes=48),
    lambda c: c["kernels"]["fp16_wmma"].update(accumulator="f8"),
    lambda c: c["kernels"]["int4_wmma"].update(b_layout="diagonal"),
    lambda c: c["kernels"]["fp16_wgmma_cluster"].update(c_dtype="bfloat16"),
    lambda c: c["kernels"]["int4_wmma"].update(study="no"),
    lambda c: c.update(set=".."),
    lambda c: c.update(set="."),
    lambda c: c.update(set="-x"),
    lambda c: c.update(profile_sets=[".."]),
    lambda c: c["profile"].update(sizes_beyond_study=[]),
    lambda c: c["profile"].update(sizes_beyond_study=[8192, 8192]),
    lambda c: c["profile"].update(sizes_beyond_study=[0]),
    lambda c: c["profile"].update(sizes_beyond_study=8192),
])
def test_schema_refuses(config, edit):
    edit(config)
    with pytest.raises(WorkflowError):
        validate(config, str(CONFIG_SCHEMA))


def test_profile_sizes_follow_study_and_config(config):
    """The study's kernels are profiled at every N; those marked study: false at
    profile.sizes_beyond_study, in the order of sizes; null or absent: every N; a kernel not
    in the registry is refused."""
    from analysis.workflow import profile_sizes

    study = [k for k, s in config["kernels"].items() if s.get("study", True) is not False]
    beyond = [k for k, s in config["kernels"].items() if s.get("study", True) is False]
    assert study and beyond
    config["profile"]["sizes_beyond_study"] = [8192, 1024]
    assert {profile_sizes(config, k) for k in study} == {tuple(config["sizes"])}
    assert {profile_sizes(config, k) for k in beyond} == {(1024, 8192)}
    for unset in (lambda c: c["profile"].update(sizes_beyond_study=None), lambda c: c["profile"].pop("sizes_beyond_study")):
        unset(config)
        assert {profile_sizes(config, k) for k in beyond} == {tuple(config["sizes"])}
    with pytest.raises(ConfigError, match="int8_nosuch: not in the kernel registry"):
        profile_sizes(config, "int8_nosuch")


def test_noise_run_profiles_every_kernel_at_both_sizes(config):
    """config/noise.yaml over config/config.yaml, merged as Snakemake merges --configfile files:
    valid, and every kernel of that run is profiled at both of its N, fp16_wgmma (study: false)
    included, so each repeat is {kernel}_n1024-8192_r{R}."""
    import yaml
    from snakemake.utils import update_config

    from analysis.workflow import check_config, profile_sizes

    update_config(config, yaml.safe_load((REPO / "config" / "noise.yaml").read_text()))
    validate(config, str(CONFIG_SCHEMA))
    check_config(config, REPO / "kernels")
    assert config["kernels"]["fp16_wgmma"]["study"] is False
    assert {k: profile_sizes(config, k) for k in config["profile_kernels"]} == {
        k: (1024, 8192) for k in config["profile_kernels"]}


# ---- foreign sets and hostile names --------------------------------------------------

def test_set_from_an_unseen_gpu_is_parsed_and_plotted(tmp_path, good):
    """A set with no metadata and no timings under a name the project never saw."""
    from analysis.workflow import committed_sets, set_reports

    d = tmp_path / "profiles" / "rtx-9999_999.99_ncu2099.1.1" / "reports"
    d.mkdir(parents=True)
    shutil.copy(good, d / good.name)
    assert committed_sets(tmp_path / "profiles") == ["rtx-9999_999.99_ncu2099.1.1"]
    assert set_reports(tmp_path / "profiles", "rtx-9999_999.99_ncu2099.1.1") == [d / good.name]
    t = set_table([load_report(d / good.name)], "rtx-9999_999.99_ncu2099.1.1", {})
    assert t["driver"].isna().all() and (t["gpu"] == "NVIDIA H200").all()
    s = validate_summary(summary(t, load_instances(d / good.name), None))
    assert s.loc[0, "throughput_source"].startswith("ncu")
    fig = figures.occupancy_vs_throughput(s, "unseen")
    figures.plt.close(fig)


def test_hostile_file_name_is_skipped_not_run(tmp_path, good):
    from analysis.workflow import set_reports

    d = tmp_path / "profiles" / "x" / "reports"
    d.mkdir(parents=True)
    shutil.copy(good, d / "int8_wmma_n512$(touch PWNED).ncu-rep.xz")
    shutil.copy(good, d / good.name)
    with pytest.warns(UserWarning, match="skipped"):
        names = set_reports(tmp_path / "profiles", "x")
    assert [p.name for p in names] == ["int8_wmma_n512.ncu-rep.xz"]
    assert not list(tmp_path.rglob("PWNED")) and not Path("PWNED").exists()


def test_a_folder_of_no_readable_report_is_no_set(tmp_path, good):
    """A set folder whose only report has an unsafe name, beside an entry named like a
    report that is a folder, is no set: one warning names it and its entries (no parse job
    with zero reports, which had died on argparse with an empty log), and asking for it
    in profile_sets is refused naming the folder. In a set of other reports, the folder is
    skipped with a warning, not read (it had raised IsADirectoryError)."""
    from analysis.errors import ConfigError
    from analysis.workflow import committed_sets, set_reports

    profiles = tmp_path / "profiles"
    bad = profiles / "badname" / "reports"
    bad.mkdir(parents=True)
    shutil.copy(good, bad / "bad name.ncu-rep.xz")
    (bad / "dir.ncu-rep.xz").mkdir()
    ok = profiles / "ok" / "reports"
    ok.mkdir(parents=True)
    shutil.copy(good, ok / good.name)
    (ok / "int8_wmma_n1024.ncu-rep.xz").mkdir()
    msgs = []
    assert committed_sets(profiles, warn=msgs.append) == ["ok"]
    assert len(msgs) == 1 and str(bad) in msgs[0] and "not a profile set" in msgs[0]
    assert "bad name.ncu-rep.xz" in msgs[0]
    with pytest.raises(ConfigError, match="badname/reports holds no report it can read"):
        committed_sets(profiles, ["badname"])
    msgs = []
    assert set_reports(profiles, "ok", warn=msgs.append) == [ok / good.name]
    assert any("int8_wmma_n1024.ncu-rep.xz: skipped: named like a report, but not a file" in m for m in msgs)


def test_near_miss_report_names_are_read_with_a_warning(tmp_path, good):
    """Names that look meant to give N but do not (an N with a leading zero, an N given
    twice, _r0) are read with N = NA, and the set's listing says so, naming them; the
    well-named report is not named."""
    from analysis.workflow import set_reports

    d = tmp_path / "profiles" / "x" / "reports"
    d.mkdir(parents=True)
    for stem in ("int8_wmma_n512", "int8_wmma_n0512", "int8_wmma_n512-512", "int8_wmma_n512_r0"):
        shutil.copy(good, d / f"{stem}.ncu-rep.xz")
    said: list[str] = []
    names = set_reports(tmp_path / "profiles", "x", warn=said.append)
    assert len(names) == 4 and len(said) == 1
    assert "3 file name(s) close to" in said[0] and "read with N = NA" in said[0]
    assert all(f"{stem}.ncu-rep.xz" in said[0] for stem in ("int8_wmma_n0512", "int8_wmma_n512-512",
                                                            "int8_wmma_n512_r0"))
    assert "int8_wmma_n512.ncu-rep.xz" not in said[0]
    assert load_report(d / "int8_wmma_n512_r0.ncu-rep.xz")["n"].isna().all()


@pytest.mark.parametrize("stem", ["int8_wmma_n99999999999999999999", "int8_wmma_n9223372036854775808",
                                  "int8_wmma_n2147483648", "int8_wmma_n512_r99999999999999999999"])
def test_a_name_giving_an_n_beyond_a_32_bit_int_is_read_with_n_na(tmp_path, good, stem):
    """An N or repeat in a report's name beyond what the kernels' launcher takes (2**31 - 1)
    raised a raw OverflowError or TypeError from the reader (a 64-bit integer column) and, in an
    import, a parse error naming no file. Such a name does not read as the workflow's: the report
    is read with N = NA, and the set's listing names it as close to that form."""
    from analysis.names import MAX_NAME_NUMBER, ReportName
    from analysis.workflow import set_reports

    d = tmp_path / "profiles" / "x" / "reports"
    d.mkdir(parents=True)
    shutil.copy(good, d / f"{stem}.ncu-rep.xz")
    assert ReportName.parse(f"{stem}.ncu-rep.xz") is None
    assert ReportName.parse(f"int8_wmma_n{MAX_NAME_NUMBER}.ncu-rep").n == MAX_NAME_NUMBER
    t = load_report(d / f"{stem}.ncu-rep.xz")
    assert t["n"].isna().all() and t["repeat"].dtype == np.int64 and (t["repeat"] == 0).all()
    said: list[str] = []
    set_reports(tmp_path / "profiles", "x", warn=said.append)
    assert len(said) == 1 and f"{stem}.ncu-rep.xz" in said[0] and "read with N = NA" in said[0]
    assert f"an N or repeat above {MAX_NAME_NUMBER}" in said[0]


# ---- schemas ---------------------------------------------------------------------------

def test_tidy_schema_rejects_a_damaged_table(good):
    df = load_report(good)
    validate_tidy(df)
    bad = pd.concat([df, df.head(1)], ignore_index=True)  # a metric twice
    with pytest.raises(SchemaError, match="declared schema"):
        validate_tidy(bad, "dup.parquet")
    bad = df.copy()
    bad.loc[0, "metric_type"] = "guess"
    with pytest.raises(SchemaError, match="bad.parquet"):
        validate_tidy(bad, "bad.parquet")


def test_summary_schema_keeps_and_flags_occupancy_above_100(report_tables, report_instances, timings,
                                                            set_metadata):
    """An occupancy above 100 % (a real report gave 104.7 %) was refused by the schema and
    lost the set's tables; it is kept and flagged instead (the edit stands for such a row)."""
    from analysis.reports.tables import range_flags

    t = set_table([report_tables[k] for k in list(report_tables)[:2]], "x", set_metadata)
    s = summary(t, report_instances, timings)
    s.loc[0, "sm__warps_active.avg.pct_of_peak_sustained_active"] = 140.0
    checked = validate_summary(s)
    assert checked.loc[0, "sm__warps_active.avg.pct_of_peak_sustained_active"] == 140.0
    assert range_flags(checked)[0] == "sm__warps_active.avg.pct_of_peak_sustained_active = 140 outside [0, 100]"


@pytest.mark.parametrize("edit,cause", [
    (lambda r: r.drop(columns=["rate"]), "rate"),
    (lambda r: r.assign(median_ns=-r["median_ns"]), "median_ns"),
    (lambda r: r.assign(unit="GFLOP/s"), "unit"),
    (lambda r: pd.concat([r, r.head(1)]), "name"),
])
def test_references_schema_names_file_and_cause(edit, cause):
    """The committed references.csv passes; a damaged copy is refused with the file and the column."""
    path = SET_DIR / "references.csv"
    good = validate_references(pd.read_csv(path), path)
    assert len(good) == 14
    with pytest.raises(SchemaError, match=rf"references\.csv(.|\n)*{cause}"):
        validate_references(edit(pd.read_csv(path)), path)


# ---- fuzz -------------------------------------------------------------------------------

def _mutate(data: bytes, rng: np.random.Generator) -> bytes:
    b = bytearray(data)
    kind = int(rng.integers(6))
    if kind == 0:  # flip 1..16 random bytes
        for _ in range(int(rng.integers(1, 17))):
            b[int(rng.integers(len(b)))] ^= int(rng.integers(1, 256))
    elif kind == 1:  # truncate
        b = b[: int(rng.integers(0, len(b)))]
    elif kind == 2:  # zero a block
        s = int(rng.integers(len(b)))
        b[s: s + int(rng.integers(1, 4096))] = bytes(min(len(b) - s, 4096))[: len(b[s: s + 4096])]
    elif kind == 3:  # insert random bytes
        s = int(rng.integers(len(b)))
        b[s:s] = rng.integers(0, 256, int(rng.integers(1, 64)), dtype=np.uint8).tobytes()
    elif kind == 4:  # repeat a chunk
        s = int(rng.integers(len(b) - 1))
        b[s:s] = b[s: s + int(rng.integers(1, 2048))]
    else:  # append junk
        b += rng.integers(0, 256, int(rng.integers(1, 512)), dtype=np.uint8).tobytes()
    return bytes(b)


def test_fuzz_corrupted_reports_never_yield_rows(tmp_path, good_bytes, plain_bytes):
    """300 seeded corruptions of a committed .ncu-rep.xz: each is refused with ReportError,
    unless it still decompresses to the very same report (then its table is the original)."""
    rng = np.random.default_rng(20261129)
    p = tmp_path / "int8_wmma_n512.ncu-rep.xz"
    refused = same = 0
    for _ in range(300):
        data = _mutate(good_bytes, rng)
        if data == good_bytes:
            continue
        p.write_bytes(data)
        try:
            df = load_report(p)
        except ReportError:
            refused += 1
            continue
        assert lzma.decompress(data) == plain_bytes, "a corrupted report produced a table"
        assert len(df) == 2243
        same += 1
    assert refused >= 280, (refused, same)


def test_fuzz_plain_reports_never_take_the_caller_down(tmp_path, plain_bytes):
    """40 corruptions of the uncompressed report through the child-process reader: each
    ends in a ReportError or a table, never in a crash of this process. (A plain report
    has no checksum: a corruption can parse to wrong values, which is why the workflow
    stores reports xz-compressed, with xz's CRC64.)"""
    rng = np.random.default_rng(7)
    paths = []
    for i in range(40):
        p = tmp_path / f"{i}" / "int8_wmma_n512.ncu-rep"
        p.parent.mkdir()
        p.write_bytes(_mutate(plain_bytes, rng))
        paths.append(p)

    def outcome(p) -> str:
        try:
            load_report_isolated(p)
            return "parsed"
        except ReportError as exc:
            assert str(p) in str(exc)
            return "refused"

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # each call is a child process
        outcomes = Counter(pool.map(outcome, paths))
    assert sum(outcomes.values()) == 40 and outcomes["refused"] > 20, outcomes
    assert os.getpid() > 0  # still here


# ---- profiler failures (real ncu output recorded on the H200, tests/data/ncu_output) -----

NCU_OUTPUT = REPO / "tests" / "data" / "ncu_output"


def test_ncu_error_comes_first_even_after_a_long_traceback(tmp_path):
    """ncu 2025.3.1 printed its ==ERROR== after the profiled program's 17-line traceback and
    before a 30-line metric listing: the error still leads the message."""
    from analysis.gpu.harness import Tiling
    from analysis.gpu.profile import profile_kernel

    real = NCU_OUTPUT / "error_metric_traceback.txt"
    exe = tmp_path / "ncu"
    exe.write_text(f"#!/bin/sh\n[ \"$1\" = --version ] && echo 'Version 2025.3.1.0' && exit 0\n"
                   f"cat '{real}'\nexit 1\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(AnalysisError) as err:
        profile_kernel(tmp_path / "k.cubin", "int8_wmma", "int8", 512, Tiling(), tmp_path / "x.ncu-rep.xz",
                       ncu=str(exe))
    lines = str(err.value).splitlines()
    assert lines[0] == "int8_wmma N=512: ncu exited with 1:"
    assert lines[1] == "==ERROR== The application returned an error code (1)."
    assert lines[2].startswith("==WARNING== Note: Running with unmodified GPU clocks")
    assert any("no__such_metric.sum" in ln for ln in lines[-4:])  # and the end of the output follows


@pytest.mark.parametrize("name", ["error_section.txt", "error_metric_traceback.txt", "add_full.txt"])
def test_ncu_failure_keeps_every_error_and_warning_line(name):
    from analysis.gpu.profile import ncu_failure

    text = (NCU_OUTPUT / name).read_text()
    msg = ncu_failure(text).splitlines()
    ncu_lines = [ln for ln in text.splitlines() if ln.startswith(("==ERROR==", "==WARNING=="))]
    assert ncu_lines and msg[: len(ncu_lines)] == sorted(ncu_lines, key=lambda ln: not ln.startswith("==ERROR=="))


def test_the_child_reader_says_what_it_is_when_asked():
    """`python -m analysis.reports.ncu --help` gave a raw ValueError traceback."""
    import subprocess
    import sys

    for args, rc in ((["--help"], 0), ([], 2)):
        proc = subprocess.run([sys.executable, "-m", "analysis.reports.ncu", *args], cwd=REPO, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == rc and "Traceback" not in proc.stderr, proc.stderr[-2000:]
        assert proc.stderr.startswith("usage: python -m analysis.reports.ncu REPORT OUTDIR")
        assert "not a tool: read reports with analysis.load_report" in proc.stderr


@pytest.mark.parametrize("tail, said", [
    ("padding", None),  # xz's stream padding: 8 zero bytes
    ("junk", "4 bytes after the end of the xz stream"),
    ("second stream", "14144 bytes after the end of the xz stream"),
])
def test_what_follows_an_xz_stream_is_judged_alike_by_every_reader(tmp_path, tail, said):
    """xz's stream padding after a report was "not a complete xz stream" from the session
    details' reader (import, report_metadata), though load_report took it; a second stream
    appended was "ends inside a block header (truncated)" there, while load_report counted the
    bytes after the stream."""
    xz = (DATA / "add_basic.ncu-rep.xz").read_bytes()
    extra = {"padding": bytes(8), "junk": b"abcd", "second stream": xz}[tail]
    path = _write(tmp_path, "add_basic.ncu-rep.xz", xz + extra)
    readers = (load_report, analysis.reports.report_info.report_metadata)
    if said is None:
        assert len(load_report(path)) > 0
        assert analysis.reports.report_info.report_metadata(path)["gpu"] == "NVIDIA H200"
        assert analysis.reports.report_info.report_launches(path) == 1
        return
    for read in readers:
        with pytest.raises(ReportError, match=re.escape(said)) as e:
            read(path)
        assert str(path) in str(e.value)


@pytest.mark.parametrize("path, error, said", [
    (None, TypeError, "not NoneType"), (b"int8_wmma_n512.ncu-rep.xz", TypeError, "not bytes"),
    ("", ValueError, "not an empty string")])
def test_what_names_no_report_file_is_refused_as_such(path, error, said):
    """None and bytes gave a bare TypeError from inside pathlib, and "" was read as the working
    folder ("." in the message)."""
    for read in (load_report, load_instances):
        with pytest.raises(error, match=said):
            read(path)


@pytest.mark.parametrize("count", [0, -1, 1.0, True, "1"])
def test_a_launch_count_that_is_no_count_is_refused(good, count):
    """expect_launches=0 or -1 was accepted and refused the report for holding 1 launch, "expected -1"."""
    with pytest.raises(ValueError, match="expect_launches must be None or a whole number of at least 1"):
        load_report(good, expect_launches=count)


def test_api_inputs_that_are_no_set_or_threshold_are_refused(good):
    """parse_reports("x.ncu-rep.xz") read the string character by character (about 30 errors,
    'p: file does not exist'); compare_sets of an empty table stopped on an IndexError;
    Thresholds(min_rel=nan) or a negative threshold was taken as it is."""
    from analysis.compare.diff import Thresholds, compare_sets
    from analysis.reports.parse import parse_reports

    with pytest.raises(TypeError, match="takes a list of report paths, not one path"):
        parse_reports(str(good))
    for bad in (math.nan, -0.1, math.inf, "0.1"):
        with pytest.raises(ValueError, match="Thresholds.min_rel must be a finite number >= 0"):
            Thresholds(min_rel=bad)
    table = set_table([load_report(good)], "s", {})
    with pytest.raises(ValueError, match="the baseline table has no row"):
        compare_sets(table.iloc[:0], table)
    assert (compare_sets(table, table)["status"] == "unchanged").any()


def test_command_lines_say_what_is_wrong_in_one_line(tmp_path):
    """`python -m analysis.compare.renames OUT missing.ncu-rep` ended in a ReportError traceback;
    `python -m analysis.reports.parse ... --metadata missing.json` went on as if the set had none;
    `python -m analysis.reports.importing --help` printed its usage and exited 2."""
    def run(*args):
        return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, cwd=REPO)

    missing = tmp_path / "missing.ncu-rep"
    got = run("analysis.compare.renames", str(tmp_path / "out.parquet"), str(missing))
    assert got.returncode == 1 and got.stderr.strip() == f"error: {missing}: file does not exist"
    assert not (tmp_path / "out.parquet").exists()
    got = run("analysis.reports.parse", str(missing), "--set", "s", "--cache", str(tmp_path / "c"), "--metrics",
              str(tmp_path / "m.parquet"), "--instances", str(tmp_path / "i.parquet"), "--log", str(tmp_path / "l.log"),
              "--metadata", str(tmp_path / "none.json"))
    assert got.returncode == 2 and f"--metadata {tmp_path / 'none.json'}: no such file" in got.stderr
    got = run("analysis.reports.importing", "--help")
    assert got.returncode == 0 and "usage: python -m analysis.reports.importing SRC DST" in got.stderr


def test_report_and_set_names_pandas_would_guess_are_read_back_as_names(tmp_path):
    """Reports named ``None``, ``NA``, ``1`` and ``01`` in a set named ``true``: the summary CSV
    read back with :func:`analysis.reports.schemas.read_summary` (the figure and study rules) keeps
    every name. Read with pandas' defaults, ``None`` and ``NA`` become missing, ``1`` and ``01``
    the same number and ``true`` a boolean, and the schema refused the table of a valid import."""
    from analysis.reports.parse import write_set_tables
    from analysis.reports.schemas import read_summary

    names = ["None", "NA", "1", "01"]
    reports = []
    for name in names:
        reports.append(tmp_path / f"{name}.ncu-rep.xz")
        shutil.copy(REPO / "tests" / "data" / "add_basic.ncu-rep.xz", reports[-1])
    out = tmp_path / "summary.csv"
    write_set_tables(reports, "true", None, tmp_path / "cache", tmp_path / "m.parquet", tmp_path / "i.parquet",
                     summary_out=out)
    s = read_summary(out)
    assert sorted(s["report"]) == sorted(names)
    assert (s["set"] == "true").all()
    guessed = pd.read_csv(out)
    assert guessed["report"].isna().sum() == 2 and guessed["set"].dtype == bool
    with pytest.raises(SchemaError):
        validate_summary(guessed, out)
    # the launch identity beyond the schema's columns too: an extern "C" kernel named inf or True
    for name in ("inf", "True"):
        table = pd.read_csv(out, dtype=str, keep_default_na=False)
        table["mangled"] = table["function"] = name
        table.to_csv(out, index=False)
        back = read_summary(out)
        assert (back["mangled"] == name).all() and (back["function"] == name).all()


@pytest.mark.parametrize("stem, failed", [("AveryClapp__ESMM-Research__profile__8fce6633", 3),
                                          ("AveryClapp__ESMM-Research__profile__be34af6f", 5)])
def test_a_launch_with_only_the_devices_attributes_counts_as_not_profiled(foreign_dir, stem, failed):
    """A foreign launch without a duration or any of its counters held 185 values of the device's
    attributes, its topology and the profiler's session beside 52 empty metrics, and was read as
    profiled (``profiling_failed`` False: fewer than half of all its metrics were empty). Only
    measured metrics count now: that launch is the report's one not profiled."""
    from analysis.reports.ncu.launches import NOT_MEASURED_PREFIXES

    t = load_report(foreign_dir / f"{stem}.ncu-rep.xz")
    flags = t.groupby("launch")["profiling_failed"].first()
    assert flags[flags].index.tolist() == [failed]
    one = t[t["launch"] == failed]
    attrs = one["metric"].str.startswith(NOT_MEASURED_PREFIXES)
    empty = one["value"].isna() & one["value_str"].isna()
    assert (~empty[attrs]).sum() > empty.sum()  # the attributes alone outnumber the empty metrics
    assert one.loc[one["metric"] == "gpu__time_duration.sum", "value"].isna().all()


@pytest.mark.parametrize("workers", [0, -1, 1.5, True])
def test_a_worker_count_that_is_no_whole_number_of_at_least_one_is_refused(good, workers):
    """``parse_reports(..., workers=0)`` (or -1, 1.5, True) and ``--workers 0`` ran as if 1 was
    given; both are refused, before any report is read."""
    from analysis.reports.parse import parse_reports

    with pytest.raises(ValueError, match="workers must be a whole number of at least 1"):
        parse_reports([good], workers=workers)
    if isinstance(workers, int) and not isinstance(workers, bool):
        got = subprocess.run([sys.executable, "-m", "analysis.reports.parse", str(good), "--set", "s", "--cache", "c",
                              "--metrics", "m", "--instances", "i", "--log", "l", "--workers", str(workers)],
                             capture_output=True, text=True, cwd=REPO)
        assert got.returncode == 2 and "--workers: must be at least 1" in got.stderr


def test_a_numpy_worker_count_is_taken(good):
    """A count computed with NumPy (``np.int64(2)``) is a whole number and is taken."""
    from analysis.reports.parse import parse_reports

    got = parse_reports([good], workers=np.int64(2))
    assert not got.errors and len(got.metrics) == 1 and len(got.metrics[0])
