"""Importing reports (analysis.reports.importing) on other people's reports: an .xz report is kept
byte for byte once checked whole, with the reader's own decisions on damaged files, a
plain one is compressed at the chosen preset, and an import job loads neither pandas nor
the native reader (their import cost 0.4-0.6 s per job)."""

from __future__ import annotations

import lzma
import random
import re
import subprocess
import sys

import pytest

from analysis.errors import ConfigError, ReportError
from analysis.reports.importing import PRESET, check_sources, copy_checked_xz, import_plan, import_report
from analysis.reports.ncu import _xz_decompress_strict, load_report

from .conftest import REPO


def test_xz_reports_are_kept_byte_for_byte(foreign_dir, tmp_path):
    for src in sorted(foreign_dir.glob("*.ncu-rep.xz")):
        dst = tmp_path / "copy.ncu-rep.xz"
        import_report(src, dst)
        assert dst.read_bytes() == src.read_bytes(), src.name


def _reader_accepts(path, tmp_path) -> bool:
    try:
        _xz_decompress_strict(path, tmp_path / "plain")
    except ReportError:
        return False
    return True


def _import_accepts(path, tmp_path) -> bool:
    try:
        copy_checked_xz(path, tmp_path / "copy")
    except ReportError:
        return False
    return True


def test_damaged_xz_files_are_judged_as_the_reader_judges_them(foreign_dir, tmp_path):
    """Cut, flipped, appended to, padded: 200 seeded damages of a real report, each
    refused or accepted by the import exactly when the report reader refuses or accepts
    it (the import used to run the reader's own check, at the cost of importing it)."""
    good = (foreign_dir / "LakshyaSingh354__CudaCode__report__164f986e.ncu-rep.xz").read_bytes()
    rng = random.Random(20261201)
    cases = {"cut": good[: len(good) // 2], "padded": good + b"\0" * 8, "odd padding": good + b"\0" * 3,
             "appended": good + b"more", "second stream": good + good, "not xz": good[6:],
             "empty stream": lzma.compress(b"")}
    for k in range(200):
        data = bytearray(good)
        at = rng.randrange(len(data))
        data[at] ^= 1 << rng.randrange(8)
        cases[f"bit {at}"] = bytes(data)
    verdicts = {}
    for name, data in cases.items():
        p = tmp_path / "case.ncu-rep.xz"
        p.write_bytes(data)
        verdicts[name] = (_import_accepts(p, tmp_path), _reader_accepts(p, tmp_path))
    assert {n: v for n, v in verdicts.items() if v[0] != v[1]} == {}
    assert verdicts["padded"] == (True, True) and verdicts["cut"] == (False, False)
    assert sum(not v[0] for v in verdicts.values()) > 150  # most flipped bits are caught


def test_a_plain_report_is_compressed_at_the_chosen_preset(foreign_dir, tmp_path):
    src = foreign_dir / "AveryClapp__ESMM-Research__profile__8fce6633.ncu-rep.xz"
    plain = tmp_path / "profile.ncu-rep"
    plain.write_bytes(lzma.decompress(src.read_bytes()))
    dst = tmp_path / "profile.ncu-rep.xz"
    import_report(plain, dst)
    assert lzma.decompress(dst.read_bytes()) == plain.read_bytes()
    assert dst.read_bytes() == lzma.compress(plain.read_bytes(), preset=PRESET)


def test_an_import_job_loads_neither_pandas_nor_the_reader(foreign_dir, tmp_path):
    """What rule import_report runs, once per report: python -m analysis.reports.importing SRC DST."""
    src = foreign_dir / "LakshyaSingh354__CudaCode__report__164f986e.ncu-rep.xz"
    probe = ("import runpy, sys; sys.argv = ['analysis.reports.importing', sys.argv[1], sys.argv[2]]\n"
             "try:\n    runpy.run_module('analysis.reports.importing', run_name='__main__')\n"
             "except SystemExit as e:\n    assert e.code == 0, e.code\n"
             "print(sorted(m for m in ('pandas', 'numpy', 'ncu_report', 'analysis.reports.ncu') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe, str(src), str(tmp_path / "r.ncu-rep.xz")], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "r.ncu-rep.xz").read_bytes() == src.read_bytes()


@pytest.mark.parametrize("damage", ["cut", "appended"])
def test_an_import_job_names_a_damaged_file(foreign_dir, tmp_path, damage):
    good = (foreign_dir / "LakshyaSingh354__CudaCode__report__164f986e.ncu-rep.xz").read_bytes()
    src = tmp_path / "bad.ncu-rep.xz"
    src.write_bytes(good[:-100] if damage == "cut" else good + b"junk")
    proc = subprocess.run([sys.executable, "-m", "analysis.reports.importing", str(src), str(tmp_path / "out.ncu-rep.xz")],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 1 and str(src) in proc.stderr
    assert ("not a complete xz stream" if damage == "cut" else "4 bytes after the end of the xz stream") in proc.stderr
    assert not (tmp_path / "out.ncu-rep.xz").exists()


def test_an_import_of_one_report_under_two_names_is_refused(foreign_dir, tmp_path):
    """One file under two names was only warned about and imported: the set held each launch
    twice, and a comparison with a set of one copy then matched none of them. It is refused,
    naming both files, as repeats of the same content are; without the copy the import goes."""
    src = foreign_dir / "LakshyaSingh354__CudaCode__report__164f986e.ncu-rep.xz"
    other = foreign_dir / "LakshyaSingh354__CudaCode__gemm_reps_naive__7bc2a745.ncu-rep.xz"
    for name, what in (("mine.ncu-rep.xz", src), ("copy of mine.ncu-rep.xz", src), ("other.ncu-rep.xz", other)):
        (tmp_path / name).write_bytes(what.read_bytes())
    with pytest.raises(ConfigError) as e:
        check_sources(import_plan(tmp_path))
    assert str(e.value) == ("config source: nothing imported, copy of mine.ncu-rep.xz, mine.ncu-rep.xz are the same "
                            "report: the set would hold each of their launches twice, under two report names (leave "
                            "all but one of each out of the source folder)")
    (tmp_path / "copy of mine.ncu-rep.xz").unlink()
    assert check_sources(import_plan(tmp_path)) == []
    # the same report plain beside xz, or compressed otherwise: not the same bytes, the same report
    (tmp_path / "mine plain.ncu-rep").write_bytes(lzma.decompress(src.read_bytes()))
    (tmp_path / "mine again.ncu-rep.xz").write_bytes(lzma.compress(lzma.decompress(src.read_bytes()), preset=1))
    with pytest.raises(ConfigError) as e:
        check_sources(import_plan(tmp_path))
    assert "mine again.ncu-rep.xz, mine plain.ncu-rep, mine.ncu-rep.xz are the same report" in str(e.value)


def test_a_report_imported_again_under_another_name_is_refused(foreign_dir, tmp_path):
    """A second import into a set, of the same file under a new name, was only said to add a
    report: the set held each of its launches twice, and a comparison with a set of one copy
    flagged all of them as only in the candidate. It is refused, naming both, also where the
    file is the plain report of the stored xz copy or compressed otherwise (compared as plain
    reports)."""
    from analysis.reports.importing import write_import_record

    src = foreign_dir / "LakshyaSingh354__CudaCode__report__164f986e.ncu-rep.xz"
    other = foreign_dir / "LakshyaSingh354__CudaCode__gemm_reps_naive__7bc2a745.ncu-rep.xz"
    (tmp_path / "first").mkdir()
    (tmp_path / "first" / "profile.ncu-rep.xz").write_bytes(src.read_bytes())
    plan = import_plan(tmp_path / "first")
    (tmp_path / "set" / "reports").mkdir(parents=True)
    import_report(plan["profile"], tmp_path / "set" / "reports" / "profile.ncu-rep.xz")
    write_import_record(plan, tmp_path / "set" / "imported.csv")
    (tmp_path / "again").mkdir()
    (tmp_path / "again" / "run2.ncu-rep.xz").write_bytes(src.read_bytes())
    (tmp_path / "again" / "other.ncu-rep.xz").write_bytes(other.read_bytes())
    with pytest.raises(ConfigError) as e:
        check_sources(import_plan(tmp_path / "again"), tmp_path / "set")
    assert str(e.value) == ("config source: nothing imported, run2.ncu-rep.xz is the same report as profile.ncu-rep.xz "
                            "in the set: the set would hold each of their launches twice, under two report names "
                            "(leave all but one of each out of the source folder)")
    # plain, or compressed otherwise, it is still the same report (the stored copy is recompressed)
    plain = lzma.decompress(src.read_bytes())
    for name, data in (("run2.ncu-rep", plain), ("run2.ncu-rep.xz", lzma.compress(plain, preset=1))):
        (tmp_path / "again" / "run2.ncu-rep.xz").unlink(missing_ok=True)
        (tmp_path / "again" / name).write_bytes(data)
        with pytest.raises(ConfigError, match=f"{re.escape(name)} is the same report as profile.ncu-rep.xz in the set"):
            check_sources(import_plan(tmp_path / "again"), tmp_path / "set")
        (tmp_path / "again" / name).unlink()
    # nor does it rest on the import record: without one, the stored report is compared all the same
    (tmp_path / "again" / "run2.ncu-rep").write_bytes(plain)
    (tmp_path / "set" / "imported.csv").unlink()
    with pytest.raises(ConfigError, match="run2.ncu-rep is the same report as profile.ncu-rep.xz in the set"):
        check_sources(import_plan(tmp_path / "again"), tmp_path / "set")
    write_import_record(plan, tmp_path / "set" / "imported.csv")
    (tmp_path / "again" / "run2.ncu-rep").unlink()
    assert [w for w in check_sources(import_plan(tmp_path / "again"), tmp_path / "set") if "nothing" in w] == []
    # the same file under its own name again replaces the stored one: allowed, as before
    assert check_sources(import_plan(tmp_path / "first"), tmp_path / "set") == []


@pytest.mark.parametrize("dst", ["a folder", "out.ncu-rep"])
def test_an_import_job_refuses_a_destination_that_is_no_xz_report_name(foreign_dir, tmp_path, dst):
    src = foreign_dir / "LakshyaSingh354__CudaCode__report__164f986e.ncu-rep.xz"
    out = tmp_path / ("out.ncu-rep.xz" if dst == "a folder" else dst)
    if dst == "a folder":
        out.mkdir()
    proc = subprocess.run([sys.executable, "-m", "analysis.reports.importing", str(src), str(out)], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {out}: the stored report must be a file named")
    assert sorted(p.name for p in tmp_path.iterdir()) == (["out.ncu-rep.xz"] if dst == "a folder" else [])


@pytest.mark.parametrize("what", ["missing", "folder", "not a report"])
def test_an_import_job_refuses_what_is_no_report_in_one_line(tmp_path, what):
    src = tmp_path / ("x.ncu-rep" if what != "folder" else "d.ncu-rep")
    if what == "folder":
        src.mkdir()
    elif what == "not a report":
        src.write_bytes((REPO / "README.md").read_bytes())
    proc = subprocess.run([sys.executable, "-m", "analysis.reports.importing", str(src), str(tmp_path / "o.ncu-rep.xz")],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stderr.startswith(f"error: {src}") and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "o.ncu-rep.xz").exists()


def test_a_plain_report_damaged_inside_a_launch_is_refused_before_any_file_is_written(flipped_plain, foreign_dir):
    """Its block headers read whole, so the launch check is what refuses it: before, it was stored,
    its set's parse failed, and every later main job stopped while planning."""
    good = foreign_dir / "LakshyaSingh354__CudaCode__gemm_reps_naive__7bc2a745.ncu-rep.xz"
    (flipped_plain.parent / "good.ncu-rep.xz").write_bytes(good.read_bytes())
    with pytest.raises(ConfigError, match=re.escape(f"{flipped_plain}: launch 0 has no function name")) as e:
        check_sources(import_plan(flipped_plain.parent))
    assert "good.ncu-rep.xz" not in str(e.value)


@pytest.mark.parametrize("offset, cause", [
    (26214, "launch 0: a metric name is not text (at character 2: ...lt\\udc8c__t_sectors"),
    (98226, "launch 3: the value of breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed is not text "
            "(at character 210:")])
def test_a_plain_report_with_a_string_that_is_not_text_is_refused_and_named(foreign_dir, tmp_path, offset, cause):
    """One byte inverted inside a string of kprattis's plain report (6 launches): ncu's reader hands
    the bytes back undecodable, and the report's block headers and function names read whole. It
    was stored by the import; its set's parse then raised TypeError (ncu_report's metric lookup) or
    UnicodeEncodeError (Arrow), naming no file. Now the import refuses it before writing anything,
    and load_report raises ReportError naming the file, the launch and the string."""
    data = bytearray(lzma.decompress(
        (foreign_dir / "kprattis__parallel_programming_ex3__profile__e2c3653c.ncu-rep.xz").read_bytes()))
    data[offset] ^= 0xFF
    src = tmp_path / "src" / "profile.ncu-rep"
    src.parent.mkdir()
    src.write_bytes(bytes(data))
    with pytest.raises(ConfigError, match=re.escape(f"{src}: {cause}")):
        check_sources(import_plan(src.parent))
    with pytest.raises(ReportError, match=re.escape(f"{src}: {cause}")):
        load_report(src)


def test_a_report_whose_file_name_is_not_utf8_is_read_and_imported(foreign_dir, tmp_path):
    """A Latin-1 name (``caf\\xe9``): its stem once crashed the import with UnicodeEncodeError naming
    no file, and load_report blamed the file ("ncu_report cannot read it"). The file is read through
    a name that is text; the stem and the record show the byte as ``\\xe9``."""
    import os

    from analysis.reports.importing import import_stem, write_import_record

    src_dir = tmp_path / "src"
    src_dir.mkdir()
    src = src_dir / os.fsdecode(b"caf\xe9.ncu-rep.xz")
    src.write_bytes((foreign_dir / "LakshyaSingh354__CudaCode__gemm_reps_naive__7bc2a745.ncu-rep.xz").read_bytes())
    plan = import_plan(src_dir)
    assert list(plan) == ["caf_xe9"] == [import_stem(src)]
    check_sources(plan)
    table = load_report(src)
    assert len(table) and set(table["report"]) == {"caf\\xe9"}
    write_import_record(plan, tmp_path / "imported.csv")
    assert (tmp_path / "imported.csv").read_text().splitlines()[1].startswith("caf_xe9,caf\\xe9.ncu-rep.xz,")


def test_a_reader_crash_puts_the_problem_on_its_file(flipped_plain, foreign_dir, monkeypatch):
    """If the child reading every file dies (here made to, whenever it is given several), each file
    is read in a child of its own, and only the damaged one is named."""
    from analysis.reports.ncu import isolated

    good = flipped_plain.parent / "good.ncu-rep.xz"
    good.write_bytes((foreign_dir / "LakshyaSingh354__CudaCode__gemm_reps_naive__7bc2a745.ncu-rep.xz").read_bytes())
    real_run, calls = subprocess.run, []

    def run(cmd, **kw):
        calls.append(len(cmd) - 4)  # files given: python -m analysis.reports.ncu --launch-problems FILE...
        if len(cmd) > 5:
            return subprocess.CompletedProcess(cmd, -11, "", "")
        return real_run(cmd, **kw)

    monkeypatch.setattr(isolated.subprocess, "run", run)
    assert isolated.launch_problems([good, flipped_plain]) == {
        flipped_plain: "launch 0 has no function name (corrupt report)"}
    assert calls == [2, 1, 1]


def test_an_import_adding_another_gpu_to_a_set_says_so(foreign_dir, tmp_path):
    """A set may mix GPUs, but an import into a set of A100 reports adding an A10G's was silent."""
    from analysis.reports.report_info import report_metadata

    a100 = foreign_dir / "ZSL98__bitwise_spgemm__profiling_results_result__0dd03585.ncu-rep.xz"
    a10g = foreign_dir / "AveryClapp__ESMM-Research__profile__fcf10798.ncu-rep.xz"
    (tmp_path / "set" / "reports").mkdir(parents=True)
    (tmp_path / "set" / "reports" / "result.ncu-rep.xz").write_bytes(a100.read_bytes())
    a100_too = foreign_dir / "ZSL98__bitwise_spgemm__profiling_results_sgemm__9966c431.ncu-rep.xz"
    for name, src in (("same", a100_too), ("other", a10g)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "more.ncu-rep.xz").write_bytes(src.read_bytes())
    gpu_a100, gpu_a10g = report_metadata(a100)["gpu"], report_metadata(a10g)["gpu"]
    assert gpu_a100 != gpu_a10g and report_metadata(a100_too)["gpu"] == gpu_a100
    adding = ("config set: set holds 1 report already; this import adds 1 report beside it, and its tables, figures "
              "and comparisons will be remade with all of them (import into a new set name to keep them apart)")
    assert check_sources(import_plan(tmp_path / "same"), tmp_path / "set") == [adding]
    assert check_sources(import_plan(tmp_path / "other"), tmp_path / "set") == [adding,
        f"config set: set holds reports of {gpu_a100}; this import adds reports of {gpu_a10g}, so the set will mix "
        "GPUs (import into a new set name to keep them apart)"]
    assert check_sources(import_plan(tmp_path / "same")) == []  # into a new set: nothing said


def test_an_import_into_a_set_with_its_own_readme_says_the_readme_is_stale(foreign_dir, tmp_path):
    """Importing into a committed imported set (profiles/a100_ncu2021.2.2_bitwise_spgemm) added the
    reports without a word, and the set's README.md, which gives its reports' provenance, no longer
    described it."""
    import shutil

    committed = REPO / "profiles" / "a100_ncu2021.2.2_bitwise_spgemm"
    shutil.copytree(committed, tmp_path / "set")
    (tmp_path / "src").mkdir()
    shutil.copy(foreign_dir / "ZSL98__bitwise_spgemm__profiling_results_sgemm__9966c431.ncu-rep.xz",
                tmp_path / "src" / "sgemm.ncu-rep.xz")
    (said,) = check_sources(import_plan(tmp_path / "src"), tmp_path / "set")
    held = len(list((committed / "reports").glob("*.ncu-rep.xz")))
    assert said.startswith(f"config set: set holds {held} report{'s' * (held != 1)} already; this import adds 1 "
                           f"report beside {'it' if held == 1 else 'them'}, ")
    assert f"({tmp_path / 'set' / 'README.md'} describes the set before this import: update it)" in said


def test_an_import_of_several_gpus_and_versions_says_so(foreign_dir, tmp_path):
    """One import of an A100's and an A10G's reports (Nsight Compute 2021.2.2 and 2023.1.1) into a new
    set was silent, where an import adding the A10G's to a set of the A100's was not: the set's
    figures then take launches of one function name together across the two GPUs."""
    from analysis.reports.report_info import report_metadata

    a100 = foreign_dir / "ZSL98__bitwise_spgemm__profiling_results_result__0dd03585.ncu-rep.xz"
    a10g = foreign_dir / "AveryClapp__ESMM-Research__profile__fcf10798.ncu-rep.xz"
    a10g_other = foreign_dir / "AveryClapp__ESMM-Research__profile__feb2d349.ncu-rep.xz"  # one file twice is refused
    for name, src in (("a.ncu-rep.xz", a100), ("b.ncu-rep.xz", a10g), ("c.ncu-rep.xz", a10g_other)):
        (tmp_path / name).write_bytes(src.read_bytes())
    ma, mb = report_metadata(a100), report_metadata(a10g)
    assert ma["gpu"] != mb["gpu"] and ma["ncu_version"] != mb["ncu_version"]
    said = [w for w in check_sources(import_plan(tmp_path)) if "these reports are of" in w]
    assert said == [
        f"config source: these reports are of 2 GPUs ({mb['gpu']} (2), {ma['gpu']} (1)), so the set will mix them: its "
        "figures and tables take the launches of one function name together and its comparisons judge it as one "
        "set (import each into a set of its own to keep them apart)",
        f"config source: these reports are of 2 Nsight Compute versions ({mb['ncu_version']} (2), "
        f"{ma['ncu_version']} (1)), so the set will mix them: its figures and tables take the launches of one "
        "function name together and its comparisons judge it as one set (import each into a set of its own to "
        "keep them apart)"]
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "a.ncu-rep.xz").write_bytes(a100.read_bytes())
    assert check_sources(import_plan(tmp_path / "one")) == []  # one GPU, one version: nothing said


def test_the_import_record_keeps_the_absolute_path(foreign_dir, tmp_path, monkeypatch):
    """A source given as a relative folder was recorded relative, which says nothing once the
    working directory is another."""
    import pandas as pd

    from analysis.reports.importing import write_import_record

    (tmp_path / "src").mkdir()
    src = tmp_path / "src" / "run.ncu-rep.xz"
    src.write_bytes((foreign_dir / "LakshyaSingh354__CudaCode__report__164f986e.ncu-rep.xz").read_bytes())
    (tmp_path / "other").mkdir()
    monkeypatch.chdir(tmp_path / "other")
    write_import_record(import_plan("../src"), tmp_path / "imported.csv")  # absolute, without the ".."
    assert list(pd.read_csv(tmp_path / "imported.csv")["source"]) == [str(src)]


def test_an_import_from_the_set_s_own_folder_is_refused(foreign_dir, tmp_path):
    """`import_set source=profiles/S/reports set=S`: Snakemake removed each job's output, the
    source itself, before the job ran, and the set lost its reports."""
    from analysis.reports.importing import check_import_target

    reports = tmp_path / "profiles" / "s" / "reports"
    reports.mkdir(parents=True)
    (reports / "add.ncu-rep.xz").write_bytes(
        (foreign_dir / "trevorgloe__GPUAcceleratedNetworkSim__profile__131b6e30.ncu-rep.xz").read_bytes())
    with pytest.raises(ConfigError, match="add.ncu-rep.xz is in the set's own folder"):
        check_import_target(import_plan(reports), tmp_path / "profiles" / "s")
    # through another spelling of the same folder too
    with pytest.raises(ConfigError, match="in the set's own folder"):
        check_import_target(import_plan(reports / ".." / "reports"), tmp_path / "profiles" / "s")
    assert (reports / "add.ncu-rep.xz").is_file()
    check_import_target(import_plan(reports), tmp_path / "profiles" / "t")  # into another set: allowed


def test_repeats_of_one_content_and_one_kernel_at_one_n_twice_are_refused(tmp_path):
    """Two copies of one report as a profile and its repeat: the import passed (a warning only),
    and the comparison took their spread of 0 as the noise, flagging 915 rows. Two profiles of
    one kernel at one N: the import stored them, then the set's parse refused them, and every
    later main job with it."""
    noise = REPO / "profiles" / "h200_580.159.04_ncu2025.3.1_noise" / "reports"
    default = REPO / "profiles" / "h200_580.159.04_ncu2025.3.1" / "reports"
    twice = tmp_path / "twice"
    twice.mkdir()
    for name in ("fp16_ptx_mma_k16_n1024-8192", "fp16_ptx_mma_k16_n1024-8192_r1"):
        (twice / f"{name}.ncu-rep.xz").write_bytes((noise / "fp16_ptx_mma_k16_n1024-8192_r1.ncu-rep.xz").read_bytes())
    with pytest.raises(ConfigError, match="repeats of fp16_ptx_mma_k16_n1024-8192 of the same content"):
        check_sources(import_plan(twice))
    # the same content, one plain and one xz, beside the set's stored copy
    stored = tmp_path / "set" / "reports"
    stored.mkdir(parents=True)
    (stored / "fp16_ptx_mma_k16_n1024-8192.ncu-rep.xz").write_bytes(
        (noise / "fp16_ptx_mma_k16_n1024-8192_r2.ncu-rep.xz").read_bytes())
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "fp16_ptx_mma_k16_n1024-8192_r1.ncu-rep").write_bytes(
        lzma.decompress((noise / "fp16_ptx_mma_k16_n1024-8192_r2.ncu-rep.xz").read_bytes()))
    with pytest.raises(ConfigError, match=r"of the same content: fp16_ptx_mma_k16_n1024-8192_r1\.ncu-rep, .* \(in the set\)"):
        check_sources(import_plan(plain), tmp_path / "set")
    # real repeats, each run on its own, pass
    real = tmp_path / "real"
    real.mkdir()
    for p in sorted(noise.glob("fp16_ptx_mma_k16_*.ncu-rep.xz")):
        (real / p.name).write_bytes(p.read_bytes())
    assert len(list(real.iterdir())) == 4 and check_sources(import_plan(real)) == []
    two = tmp_path / "two"
    two.mkdir()
    for p in (default / "fp16_ptx_mma_k16_n1024.ncu-rep.xz", noise / "fp16_ptx_mma_k16_n1024-8192.ncu-rep.xz"):
        (two / p.name).write_bytes(p.read_bytes())
    with pytest.raises(ConfigError, match=r"fp16_ptx_mma_k16 at N = 1024 would be in several reports of the set: "
                                          r"fp16_ptx_mma_k16_n1024-8192\.ncu-rep\.xz, fp16_ptx_mma_k16_n1024\.ncu-rep\.xz"):
        check_sources(import_plan(two))


def test_a_source_that_is_no_folder_says_which_case_it_is(foreign_dir, tmp_path):
    """A missing source read "is not a folder of Nsight Compute reports", as if it existed."""
    from analysis.errors import ConfigError

    with pytest.raises(ConfigError, match=r"config source: .*/missing does not exist: give the folder"):
        import_plan(tmp_path / "missing")
    report = foreign_dir / "LakshyaSingh354__CudaCode__report__164f986e.ncu-rep.xz"
    with pytest.raises(ConfigError, match=r"\.ncu-rep\.xz is a file, not a folder: give the folder"):
        import_plan(report)


def test_a_source_whose_reports_are_all_in_subfolders_says_where_they_are(foreign_dir, tmp_path):
    """A source folder holding its reports only in subfolders (one per run, as people keep them)
    was refused with "no .ncu-rep or .ncu-rep.xz file in DIR" alone; the message now counts the
    reports below and names the first subfolder to give instead. A folder with none anywhere
    keeps the plain message."""
    src = foreign_dir / "LakshyaSingh354__CudaCode__report__164f986e.ncu-rep.xz"
    for sub in ("run1", "run2/deeper"):
        (tmp_path / "src" / sub).mkdir(parents=True)
        (tmp_path / "src" / sub / "profile.ncu-rep.xz").write_bytes(src.read_bytes())
    with pytest.raises(ConfigError) as e:
        import_plan(tmp_path / "src")
    assert str(e.value) == (f"config source: no .ncu-rep or .ncu-rep.xz file in {tmp_path / 'src'} (it has 2 reports in 2 "
                            "of its subfolders, e.g. run1: only the reports directly in the folder given are imported, "
                            "so give a subfolder, one import each)")
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    with pytest.raises(ConfigError) as e:
        import_plan(tmp_path / "empty")
    assert str(e.value) == f"config source: no .ncu-rep or .ncu-rep.xz file in {tmp_path / 'empty'}"
    assert import_plan(tmp_path / "src" / "run1") == {"profile": tmp_path / "src" / "run1" / "profile.ncu-rep.xz"}


def test_names_of_other_scripts_get_stems_apart(foreign_dir, tmp_path):
    """优化前 and 优化后 ("before" and "after" optimising) were refused: both would be imported as
    ___.ncu-rep.xz. A name holding characters outside ASCII now gets the first 8 hex digits of its
    SHA-256 appended, so the two are told apart and each stem is one the workflow reads;
    imported.csv keeps the original names."""
    import hashlib
    import os

    from analysis.reports.importing import import_stem, write_import_record
    from analysis.workflow import SAFE_REPORT

    srcs = {"优化前": "LakshyaSingh354__CudaCode__report__164f986e",
            "优化后": "LakshyaSingh354__CudaCode__gemm_reps_naive__7bc2a745"}
    for name, stem in srcs.items():
        (tmp_path / f"{name}.ncu-rep.xz").write_bytes((foreign_dir / f"{stem}.ncu-rep.xz").read_bytes())
    plan = import_plan(tmp_path)
    want = {f"___{'_'}{hashlib.sha256(os.fsencode(f'{n}.ncu-rep.xz')).hexdigest()[:8]}" for n in srcs}
    assert set(plan) == want and len(want) == 2
    assert all(SAFE_REPORT.match(f"{s}.ncu-rep.xz") for s in plan)
    assert check_sources(plan) == []
    write_import_record(plan, tmp_path / "imported.csv")
    assert set(srcs) <= {line.split(",")[1].removesuffix(".ncu-rep.xz")
                         for line in (tmp_path / "imported.csv").read_text(encoding="utf-8").splitlines()[1:]}
    assert import_stem("my app (run 1).ncu-rep") == "my_app__run_1_"  # ASCII names keep their stems


@pytest.mark.parametrize("damage", ["extra column", "extra field", "not utf-8"])
def test_an_edited_import_record_is_refused_naming_it(foreign_dir, tmp_path, damage):
    """An imported.csv with a notes column, or a row of 5 fields, read as no rows, and the next
    import rewrote the record from its own rows only: the earlier rows (and the notes) were lost
    without a word. One not UTF-8 raised a raw UnicodeDecodeError naming no file."""
    from analysis.reports.importing import read_import_record, write_import_record

    src = foreign_dir / "LakshyaSingh354__CudaCode__report__164f986e.ncu-rep.xz"
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "profile.ncu-rep.xz").write_bytes(src.read_bytes())
    record = tmp_path / "imported.csv"
    write_import_record(import_plan(tmp_path / "src"), record)
    assert [r[0] for r in read_import_record(record)] == ["profile"]
    lines = record.read_bytes().splitlines(keepends=True)
    if damage == "extra column":
        lines = [lines[0].rstrip(b"\r\n") + b",notes\r\n", lines[1].rstrip(b"\r\n") + b",mine\r\n"]
    elif damage == "extra field":
        lines.append(b"x,x.ncu-rep,/tmp/x,00,more\r\n")
    else:
        lines.append(b"x,caf\xe9.ncu-rep,/tmp/x,00\r\n")
    record.write_bytes(b"".join(lines))
    with pytest.raises(ConfigError) as e:
        read_import_record(record)
    assert str(e.value).startswith(f"{record}: ") and "restore it" in str(e.value)
