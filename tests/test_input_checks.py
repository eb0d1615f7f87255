"""Inputs a new user tried that slipped through or failed late: NaN thresholds, set names
pandas reads as missing, a mistyped compare baseline, a report given twice, plain reports
cut between launches, report names that contradict their launches, and entries named like
reports that are none. Each is refused or warned of at the start, naming the file or key."""

from __future__ import annotations

import gzip
import io
import lzma
import re
import shutil
import tempfile

import ncu_report
import pandas as pd
import pytest

from analysis.errors import AnalysisError, ConfigError, ReportError
from analysis.names import NA_LIKE_NAMES
from analysis.reports.importing import check_sources, import_plan
from analysis.reports.parse import write_set_tables
from analysis.reports.report_info import report_launches

from .conftest import REPO
from .test_workflow import _bare_workflow, snakemake

ADD = REPO / "tests" / "data" / "add_n1024.ncu-rep.xz"
#: 41 launches of bautista-garcia/heat_sim (ncu 2025.1.1), one block per launch
HEAT = "bautista-garcia__heat_sim__profile__41001a03.ncu-rep.xz"


def test_na_like_names_are_what_pandas_reads_as_missing():
    """Every pandas default NA string a set name could be is listed, and each is read back
    as missing from a CSV (what broke the set named null)."""
    from pandas._libs.parsers import STR_NA_VALUES

    could = {v for v in STR_NA_VALUES if re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*", v)}
    assert could == NA_LIKE_NAMES
    for name in NA_LIKE_NAMES:
        assert pd.read_csv(io.StringIO(f"set\n{name}\n"))["set"].isna().all()


def _actions(path) -> int:
    with tempfile.NamedTemporaryFile(suffix=".ncu-rep") as tmp:
        tmp.write(lzma.decompress(path.read_bytes()) if path.name.endswith(".xz") else path.read_bytes())
        tmp.flush()
        ctx = ncu_report.load_report(tmp.name)
        return sum(ctx.range_by_idx(r).num_actions() for r in range(ctx.num_ranges()))


def test_launch_count_from_block_headers_is_ncu_reports(foreign_dir):
    """report_launches (block headers only) gives ncu_report's action count on every report
    of other people and on the range-replay test reports (which count ranges, field 7)."""
    paths = sorted(foreign_dir.glob("*.ncu-rep.xz")) + [
        REPO / "tests" / "data" / f for f in ("ranges_ab.ncu-rep.xz", "add_n1024.ncu-rep.xz")]
    assert len(paths) >= 58
    for p in paths:
        assert report_launches(p) == _actions(p), p.name


def test_a_plain_report_cut_between_launches_is_warned_of_with_its_count(foreign_dir, tmp_path):
    """A plain report cut exactly between two launches reads as whole (no checksum): the
    import warns, giving the count it holds, 40 where the report had 41."""
    whole = lzma.decompress((foreign_dir / HEAT).read_bytes())
    src = tmp_path / "src"
    src.mkdir()
    (tmp_path / "whole.ncu-rep").write_bytes(whole)
    assert report_launches(tmp_path / "whole.ncu-rep") == 41
    ends = _block_ends(whole)  # cut after the last but one block: the report one launch short
    (src / "heat.ncu-rep").write_bytes(whole[:ends[-2]])
    warnings = check_sources(import_plan(src))
    assert len(warnings) == 1 and "heat.ncu-rep (40 launches)" in warnings[0] and "no checksum" in warnings[0]
    shutil.copy(foreign_dir / HEAT, src / "heat_xz.ncu-rep.xz")  # xz files carry their checksum: no warning
    assert "heat_xz" not in check_sources(import_plan(src))[0]


def _block_ends(data: bytes) -> list[int]:
    """Offsets just past each block of a plain report (module docstring of report_info)."""
    import struct

    from analysis.reports.report_info import _fields

    (h,) = struct.unpack("<I", data[4:8])
    i, ends = 8 + h, []
    while i < len(data):
        (size,) = struct.unpack("<I", data[i:i + 4])
        header = _fields(data[i + 4:i + 4 + size])
        i += 4 + size + next((v for n, w, v in header if n == 5 and w == 0), 0)
        ends.append(i)
    return ends


def test_a_name_that_contradicts_the_report_is_refused_before_import(foreign_dir, tmp_path):
    """A `{kernel}_n{N}` name whose launches are another kernel: refused before any file is
    written (the parse job found it only after the file was stored)."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(foreign_dir / "piragi__fuzigrad__output__65450b8f.ncu-rep.xz", src / "gemm_n512.ncu-rep.xz")
    with pytest.raises(ConfigError, match=r"gemm_n512\.ncu-rep\.xz: launch 0 is kernel 'matmul_2d_tiling', "
                                          r"but the file name says 'gemm'") as exc:
        check_sources(import_plan(src))
    assert "checked under the name" not in str(exc.value)  # its own name: nothing to add
    # a name the import changes (é is no ASCII letter) is checked under its new name, and the
    # message says so instead of quoting a name the user never wrote
    (src / "gemm_n512.ncu-rep.xz").rename(src / "gemmé_n512.ncu-rep.xz")
    with pytest.raises(ConfigError, match=r"gemmé_n512\.ncu-rep\.xz: launch 0 is kernel 'matmul_2d_tiling', but the "
                                          r"file name says 'gemm_' \(checked under the name it would be stored as, "
                                          r"gemm__n512\.ncu-rep\.xz\)"):
        check_sources(import_plan(src))


@pytest.mark.parametrize("make, cause", [
    (lambda p: (p / "r.ncu-rep").mkdir(), r"r\.ncu-rep \(not a regular file\)"),
    (lambda p: (p / "r.ncu-rep.xz").symlink_to(p / "gone"), r"r\.ncu-rep\.xz \(not a regular file: a broken link\)"),
    (lambda p: shutil.copy(ADD, p / "A.NCU-REP.XZ"), r"A\.NCU-REP\.XZ \(the suffix is \.ncu-rep or \.ncu-rep\.xz, "
                                                     "in lower case\\)"),
    # a gzip or zip of a report beside good ones was left out without a word
    (lambda p: (p / "g.ncu-rep.gz").write_bytes(gzip.compress(lzma.decompress(ADD.read_bytes()))),
     r"g\.ncu-rep\.gz \(only \.ncu-rep and \.ncu-rep\.xz files are read: unpack it to a \.ncu-rep\)"),
])
def test_entries_named_like_reports_that_are_none_are_named(tmp_path, make, cause):
    shutil.copy(ADD, tmp_path / "good.ncu-rep.xz")
    make(tmp_path)
    with pytest.raises(ConfigError, match=f"nothing imported: {cause}"):
        import_plan(tmp_path)


def test_a_folder_named_like_a_report_is_not_called_truncated(tmp_path):
    (tmp_path / "x.ncu-rep").mkdir()
    with pytest.raises(ReportError, match="is not a regular file"):
        report_launches(tmp_path / "x.ncu-rep")


def test_one_report_given_twice_to_the_parser_is_refused_naming_both(tmp_path):
    for d in ("d1", "d2"):
        (tmp_path / d).mkdir()
        shutil.copy(ADD, tmp_path / d / "report.ncu-rep.xz")
    files = [tmp_path / d / "report.ncu-rep.xz" for d in ("d1", "d2")]
    out = tmp_path / "out"
    with pytest.raises(AnalysisError, match=r"reports given more than once under one file stem \(report: .*d1.*d2"):
        write_set_tables(files, "x", None, tmp_path / "cache", out / "m.parquet", out / "i.parquet")
    with pytest.raises(AnalysisError, match="pandas reads 'null' in a table as a missing value"):
        write_set_tables(files[:1], "null", None, tmp_path / "cache", out / "m.parquet", out / "i.parquet")
    assert not out.exists()


@pytest.mark.workflow
def test_bad_names_and_numbers_are_refused_or_warned_of_at_the_start(tmp_path):
    """Dry runs: every refusal comes before any job; nothing is written under profiles/."""
    root = _bare_workflow(tmp_path)
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ADD, src / "add_n1024.ncu-rep.xz")
    (root / "nan.yaml").write_text("compare:\n  min_rel: .nan\n  noise_factor: .inf\n")
    cases = [
        (["--configfile", "nan.yaml", "--config", "gpu=off"],
         "config compare.min_rel = nan; config compare.noise_factor = inf: not a finite number"),
        (["import_set", "--config", "gpu=off", f"source={src}", "set=null"],
         "config set: 'null' cannot name a profile set (pandas reads 'null'"),
        (["import_set", "--config", "gpu=off", f"source={src}", "set=default"],
         "config set: 'default' cannot name a profile set ('default' is Snakemake's profile folder"),
        (["import_set", "--config", "gpu=off", f"source={src}", "set=Compare"],
         "config set: 'Compare' cannot name a profile set (figures/compare/ is the workflow's own folder"),
    ]
    for args, message in cases:
        proc = snakemake(root, "-n", *args)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0 and message in out, (args, out[-2000:])
    assert not (root / "profiles").exists()
    # a mistyped compare baseline is said, not silently replaced
    shutil.copytree(REPO / "profiles" / "a10g_ncu2023.1.1_esmm", root / "profiles" / "a10g_ncu2023.1.1_esmm")
    (root / "profiles" / "NA" / "reports").mkdir(parents=True)
    shutil.copy(ADD, root / "profiles" / "NA" / "reports" / "add_n1024.ncu-rep.xz")
    proc = snakemake(root, "-n", "--config", "gpu=off", "compare_baseline=nonexist")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-2000:]
    assert "config compare_baseline: profile set nonexist not found (sets: a10g_ncu2023.1.1_esmm)" in out
    assert "profiles/NA: skipped, not a profile set: pandas reads 'NA'" in out
    # also beside a named pair, whose comparison it does not change
    pair = ["baseline=a10g_ncu2023.1.1_esmm", "candidate=a10g_ncu2023.1.1_esmm"]
    proc = snakemake(root, "-n", "compare", "--config", "gpu=off", *pair, "compare_baseline=nonexist")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-2000:]
    assert ("config compare_baseline: profile set nonexist not found (sets: a10g_ncu2023.1.1_esmm); it chooses the "
            "baseline of the automatic comparisons, which this target does not make") in out
    assert "config baseline and candidate are both a10g_ncu2023.1.1_esmm: each launch is compared with itself" in out
    # a set there but left out by profile_sets is said to be so, not "not found"; each set listed once
    shutil.copytree(root / "profiles" / "a10g_ncu2023.1.1_esmm", root / "profiles" / "other")
    proc = snakemake(root, "-n", "compare", "--config", "gpu=off", "profile_sets=[other,other]",
                     "baseline=other", "candidate=a10g_ncu2023.1.1_esmm")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert ("profile set a10g_ncu2023.1.1_esmm is in profiles/ but not among config profile_sets (other): add it "
            "there, or leave profile_sets empty") in out


def test_a_repeat_from_another_gpu_is_refused_at_import_and_in_the_summary(foreign_dir, tmp_path):
    """trevorgloe's `add` (another GPU) named as repeat 1 of the H200's add_n1024: the import
    refuses it before any file is written, and a set holding both refuses to summarise
    (their values would be pooled into one median and one spread)."""
    from analysis.reports.parse import parse_reports
    from analysis.reports.tables import set_table, summary

    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ADD, src / "add_n1024.ncu-rep.xz")
    shutil.copy(foreign_dir / "trevorgloe__GPUAcceleratedNetworkSim__profile__131b6e30.ncu-rep.xz",
                src / "add_n1024_r1.ncu-rep.xz")
    with pytest.raises(ConfigError, match=r"repeats of add_n1024 from other GPUs: add_n1024\.ncu-rep\.xz "
                                          r"\(NVIDIA H200\), add_n1024_r1\.ncu-rep\.xz \(NVIDIA GeForce"):
        check_sources(import_plan(src))
    got = parse_reports(sorted(src.iterdir()), workers=1)
    got.raise_errors("s")
    with pytest.raises(AnalysisError, match=r"set s: reports named as repeats of one profile come from other GPUs: "
                                            r"add_n1024 \(NVIDIA H200\), add_n1024_r1 \("):
        summary(set_table(got.metrics, "s", {}), None, None)


def test_repeats_without_their_base_or_beside_a_stored_one_are_compared_too(foreign_dir, tmp_path):
    """Repeats 1 and 2 of one profile from two GPUs, with no repeat 0 in the folder; and a
    repeat from another GPU than the one already in the target set: both refused before any
    file is written (the parse job found them once stored)."""
    other = foreign_dir / "trevorgloe__GPUAcceleratedNetworkSim__profile__131b6e30.ncu-rep.xz"
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ADD, src / "add_n1024_r1.ncu-rep.xz")
    shutil.copy(other, src / "add_n1024_r2.ncu-rep.xz")
    with pytest.raises(ConfigError, match=r"repeats of add_n1024 from other GPUs: add_n1024_r1\.ncu-rep\.xz "
                                          r"\(NVIDIA H200\), add_n1024_r2"):
        check_sources(import_plan(src))
    stored = tmp_path / "set" / "reports"
    stored.mkdir(parents=True)
    shutil.copy(ADD, stored / "add_n1024.ncu-rep.xz")
    more = tmp_path / "more"
    more.mkdir()
    shutil.copy(other, more / "add_n1024_r1.ncu-rep.xz")
    assert check_sources(import_plan(more)) == []  # alone it is a whole report
    with pytest.raises(ConfigError, match=r"add_n1024_r1\.ncu-rep\.xz \(NVIDIA GeForce .*\), .*add_n1024\.ncu-rep"
                                          r"\.xz \(in the set\) \(NVIDIA H200\)"):
        check_sources(import_plan(more), tmp_path / "set")


def test_a_report_of_no_launch_is_refused_at_import(foreign_dir, tmp_path):
    """LakshyaSingh354's naive GEMM report cut before its first launch: every block it keeps
    is whole, so it reads as a report, of no launch; plain or xz, the import refuses it."""
    whole = lzma.decompress((foreign_dir / "LakshyaSingh354__CudaCode__gemm_reps_naive__7bc2a745.ncu-rep.xz")
                            .read_bytes())
    (tmp_path / "whole.ncu-rep").write_bytes(whole)
    ends = _block_ends(whole)
    first = next(e for e in ends if _launches_before(whole, e))  # the end of the first launch's block
    cut = whole[:ends[ends.index(first) - 1]]
    for name, data in (("naive_n512.ncu-rep", cut), ("prof.ncu-rep.xz", lzma.compress(cut))):
        src = tmp_path / name.split(".")[0]
        src.mkdir()
        (src / name).write_bytes(data)
        assert report_launches(src / name) == 0
        with pytest.raises(ConfigError, match=f"{name}: holds no profiled launch"):
            check_sources(import_plan(src))


def _launches_before(data: bytes, end: int) -> int:
    with tempfile.NamedTemporaryFile(suffix=".ncu-rep") as tmp:
        tmp.write(data[:end])
        tmp.flush()
        return report_launches(tmp.name)


@pytest.mark.workflow
def test_set_names_read_as_numbers_say_how_to_give_them(tmp_path):
    """`--config set=2024` (or nan, 1e3) arrives as a number: the message says so and how to
    pass the name as text; a --configfile with the name quoted is planned."""
    root = _bare_workflow(tmp_path)
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ADD, src / "add_n1024.ncu-rep.xz")
    for value, shown in (("2024", "2024"), ("nan", "nan"), ("1e3", "1000.0")):
        proc = snakemake(root, "-n", "import_set", "--config", "gpu=off", f"set={value}", f"source={src}")
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0 and f"config set: {shown} was read as a number" in out, out[-1500:]
    (root / "named.yaml").write_text(f'set: "2024"\nsource: {src}\n')
    proc = snakemake(root, "-n", "import_set", "--configfile", "named.yaml", "--config", "gpu=off")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-1500:]


def test_numbers_inside_lists_and_mappings_read_as_text_are_found():
    """Snakemake's --config keeps every scalar inside a list or mapping as text: those that
    spell a number are named with their place in the config, other text and numbers are not,
    and top-level values (read as YAML) are left to check_names_are_text."""
    from analysis.workflow import numbers_read_as_text

    config = {"sizes": ["512", 1024, "1e3"], "kernels": {"k": {"tiling": {"stages": "4", "raster": 8},
                                                           "mma": "mma.sync.m16n8k16", "archs": ["sm_90"]}},
              "set": "2024", "timing": {"repeats": "-5", "warmups": " 3 "}}
    assert numbers_read_as_text(config) == ["sizes[0]='512'", "sizes[2]='1e3'", "kernels.k.tiling.stages='4'",
                                            "timing.repeats='-5'", "timing.warmups=' 3 '"]
    assert numbers_read_as_text({"sizes": [512], "kernels": {"k": {"mma": "wgmma"}}}) == []
    # YAML's null and booleans kept as text (--config 'profile={sizes_beyond_study: null}'), not other words
    assert numbers_read_as_text({"profile": {"sizes_beyond_study": "null", "section_set": "full"},
                                 "kernels": {"k": {"study": "false", "change": "nullify"}}}) == [
        "profile.sizes_beyond_study='null'", "kernels.k.study='false'"]


@pytest.mark.workflow
def test_numbers_given_inside_a_config_mapping_say_to_use_a_configfile(tmp_path):
    """`--config 'sizes=[512, 1024]'` (or a nested tiling value) reaches the schema as text:
    its refusal names the values read as text and says to give them in a --configfile; a
    schema error without such values keeps the schema's own message."""
    root = _bare_workflow(tmp_path)
    proc = snakemake(root, "-n", "--config", "gpu=off", "sizes=[512, 1024]")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "config sizes[0]: '512' is not of type 'integer'" in out, out[-1500:]
    assert "sizes[0]='512', sizes[1]='1024'" in out and "give such values in a --configfile" in out
    proc = snakemake(root, "-n", "--config", "gpu=bogus")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "'bogus'" in out and "--configfile" not in out, out[-1500:]


def test_a_value_the_schema_refuses_is_named_in_one_line_without_the_schema(tmp_path):
    """A bad set suffix, an unknown (mistyped) key or a negative threshold: Snakemake's
    validate printed jsonschema's first line, then the sub-schema the value broke (for an
    unknown key the whole config schema, about 300 lines) and the instance. The refusal is one
    line naming the key, the value and the schema rule, with the key's description there."""
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate
    import yaml

    from analysis.workflow import CONFIG_SCHEMA, config_schema_error

    root = _bare_workflow(tmp_path)
    (root / "negative.yaml").write_text("compare:\n  min_rel: -1\n")
    cases = [
        (["--config", "gpu=off", "set_suffix=bad name"],
         "config set_suffix: 'bad name' does not match '^[A-Za-z0-9._-]*$' (rule properties.set_suffix.pattern of "
         "workflow/schemas/config.schema.yaml; set_suffix: Appended to the GPU's profile-set name (e.g. _nvcc13.5).)"),
        (["--config", "gpu=off", "set_sufix=_x"],
         "config set_sufix: not a key the schema allows (rule additionalProperties of "
         "workflow/schemas/config.schema.yaml); did you mean set_suffix?"),
        (["--configfile", "negative.yaml", "--config", "gpu=off"],
         "config compare.min_rel: -1 is less than the minimum of 0 (rule properties.compare.properties.min_rel.minimum"),
        (["--config", "gpu=maybe"], "config gpu: 'maybe' is not one of ['auto', 'off'] (rule properties.gpu.enum"),
    ]
    for args, message in cases:
        proc = snakemake(root, "-n", *args)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0 and message in out, (args, out[-2000:])
        assert "Failed validating" not in out and "On instance" not in out and "$schema" not in out, out[-2000:]
        assert len(out.splitlines()) < 8, out
    # the message itself, from what Snakemake's validate raises
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["kernels"]["int8_wmma"]["tiling"] = {"stages": 1}
    with pytest.raises(WorkflowError) as refused:
        validate(config, str(REPO / CONFIG_SCHEMA))
    assert config_schema_error(refused.value) == (
        "config kernels.int8_wmma.tiling.stages: 1 is less than the minimum of 2 (rule properties.kernels."
        "additionalProperties.properties.tiling.properties.stages.minimum of workflow/schemas/config.schema.yaml; "
        "kernels.int8_wmma.tiling.stages: cp.async pipeline stages.)")
    assert config_schema_error(WorkflowError("another failure")) is None


def test_a_report_name_with_a_non_ascii_letter_is_skipped_and_told_so(tmp_path):
    """"é" is a letter to Python but not to the name pattern the shell commands rely on: the
    report is skipped, and the warning says the letters must be ASCII ones."""
    from analysis.workflow import set_reports

    reports = tmp_path / "profiles" / "s" / "reports"
    reports.mkdir(parents=True)
    shutil.copy(ADD, reports / "café_n1024.ncu-rep.xz")
    shutil.copy(ADD, reports / "add_n1024.ncu-rep.xz")
    told = []
    assert set_reports(tmp_path / "profiles", "s", told.append) == [reports / "add_n1024.ncu-rep.xz"]
    assert len(told) == 1 and "café_n1024.ncu-rep.xz: skipped" in told[0] and "ASCII letter" in told[0]


@pytest.mark.workflow
def test_a_target_of_a_set_without_reports_is_refused_before_any_job(tmp_path):
    """Asking for the tables of a set that does not exist, or whose folder holds no report the
    workflow reads (only a name it skips), stops the dry run with the set, the folder and the
    sets there are, instead of a parse job that fails on its empty command line."""
    root = _bare_workflow(tmp_path)
    reports = root / "profiles" / "oddnames" / "reports"
    reports.mkdir(parents=True)
    shutil.copy(ADD, reports / "café_n1024.ncu-rep.xz")
    for name, why in (("nosuch", "profiles/nosuch/reports does not exist"),
                      ("oddnames", "profiles/oddnames/reports holds no report it can read (see the warning above)")):
        proc = snakemake(root, "-n", f"results/tables/{name}/summary.csv", "--config", "gpu=off")
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0, out[-2000:]
        assert f"set {name}: {why}, so there is nothing to parse" in out, out[-2000:]


def test_a_long_report_name_is_shortened_so_that_its_set_parses(tmp_path):
    """A report name of 215 characters was imported as it was, then its set's parse failed
    with "File name too long" on a cache file, leaving the set half-made."""
    from analysis.reports.importing import MAX_STEM

    src = tmp_path / "src"
    src.mkdir()
    long = "profile_" + "a_rather_long_run_name_" * 9 + "final"
    assert len(long) > 200
    shutil.copy(ADD, src / f"{long}.ncu-rep.xz")
    (stem,) = import_plan(src)
    assert len(stem) <= MAX_STEM and stem.startswith(long[:100]) and stem.endswith(long[-40:])
    stored = tmp_path / "set" / f"{stem}.ncu-rep.xz"
    stored.parent.mkdir()
    shutil.copy(ADD, stored)
    out = tmp_path / "out"
    write_set_tables([stored], "longnames", None, tmp_path / "cache", out / "m.parquet", out / "i.parquet")
    assert set(pd.read_parquet(out / "m.parquet")["report"]) == {stem}


def test_a_set_name_too_long_for_a_comparison_folder_is_refused():
    """Two sets of 129-character names were imported; comparing them failed with "File name
    too long" on figures/compare/A__vs__B, and the main job schedules such pairs itself."""
    from analysis.names import MAX_SET_NAME, set_name_problem

    assert set_name_problem("s" * MAX_SET_NAME) is None
    assert "at most 120" in set_name_problem("s" * 129)
    assert len(f"{'s' * MAX_SET_NAME}__vs__{'s' * MAX_SET_NAME}".encode()) <= 255


@pytest.mark.parametrize("given", ["bob1/", "profiles/bob1", "/home/me/repo/profiles/bob1/", "profiles\\bob1"])
def test_a_set_given_as_its_folder_is_refused_naming_the_set(given):
    """`compare --config baseline=bob1/` (or `profiles/bob1`) said only that the name held other
    characters than a set name may; it now says to give the set's name, and which."""
    from analysis.names import set_name_problem

    assert set_name_problem(given) == ("is a path: give the set's name, 'bob1', not its folder (sets are the "
                                       "folders of profiles/)")
    assert set_name_problem("bob1") is None
    assert "other characters" in set_name_problem("bob 1") and "other characters" in set_name_problem("a/b c")


def test_a_set_name_ending_in_a_dot_is_refused():
    """`import_set set=a..` made profiles/a.. and logs/explain_set/a...log; on a Windows or SMB
    file system the folder would be profiles/a, another set's."""
    from analysis.names import set_name_problem

    for bad in ("a.", "a..", "h200_ncu2025.3."):
        assert "ends with '.'" in set_name_problem(bad), bad
    assert set_name_problem("h200_ncu2025.3.1") is None and set_name_problem("a.b") is None


@pytest.mark.parametrize("name", ["run_" + "x" * 30, "ab" * 25, "trial_" + "0" * 40, "ab" * 100, "run_" + "0" * 160,
                                  "profile_of_matrix_multiplication_kernel_with_shared_memory_tiling_and_double_buffering"
                                  "_on_geforce_rtx4090_run_2024_06_01_final_v2_" + "矩阵乘法共享内存分块双缓冲性能分析报告结果数据汇总"])
def test_a_report_name_snakemake_takes_for_periodic_is_changed_at_import(tmp_path, name):
    """A name ending in 20 or more repeats of one substring stopped the import at Snakemake's
    job building (PeriodicWildcardError), naming no file. Missed once: a name longer than
    MAX_STEM, cut around its hash, whose kept tail was still periodic (a long name ending in
    non-Latin characters, each replaced by `_`)."""
    from snakemake.io import PeriodicityDetector

    from analysis.reports.importing import MAX_STEM

    shutil.copy(ADD, tmp_path / f"{name}.ncu-rep.xz")
    (stem,) = import_plan(tmp_path)
    assert PeriodicityDetector().is_periodic(stem) is None
    assert stem.startswith(name[:20]) and len(stem) <= MAX_STEM


def test_no_stem_is_longer_than_max_stem(tmp_path):
    """A name of 100 ASCII letters and 48 CJK characters got a 157-character stem: the hash a
    non-ASCII name gets was appended after the length was checked."""
    from analysis.reports.importing import MAX_STEM, import_stem

    for name in ("a" * 100 + "汉" * 48, "a" * 141 + "é", "a" * 150, "a" * 151, "汉" * 200):
        stem = import_stem(f"{name}.ncu-rep.xz")
        assert len(stem) <= MAX_STEM, (name, len(stem))
    whole = "".join(chr(97 + i % 26) for i in range(MAX_STEM))  # ASCII, not periodic, at the limit: kept whole
    assert import_stem(whole + ".ncu-rep") == whole


def test_a_set_name_that_could_split_a_comparison_folder_otherwise_is_refused():
    """Sets av1__vs__x and av2 share the folder figures/compare/av1__vs__x__vs__av2 with av1 and
    x__vs__av2, and `compare baseline=av1 candidate=x__vs__av2` compared the first pair, exit 0.
    Every pair of names the check lets through, of the letters that make the separator, splits
    its folder name one way only."""
    import itertools

    from analysis.names import set_name_problem

    for bad in ("av1__vs__x", "x__vs__av2", "run__vs", "vs__run", "a___vs_"):
        assert "__vs" in set_name_problem(bad)
    # the workflow's own folders beside the sets' under figures/, and 'default', in any case
    for bad in ("compare", "noise", "quant", "sass", "SASS", "Default"):
        assert "workflow's own folder" in set_name_problem(bad) or "profile folder" in set_name_problem(bad), bad
    assert set_name_problem("compare2") is None and set_name_problem("sass_h100") is None
    assert set_name_problem("a100_vs_h100") is None
    names = [n for k in range(1, 6) for n in map("".join, itertools.product("_vsx", repeat=k))
             if set_name_problem(n) is None]
    assert len(names) > 700
    for a, b in itertools.product(names, repeat=2):
        folder = f"{a}__vs__{b}"
        splits = [(folder[:i], folder[i + 6:]) for i in range(1, len(folder) - 6) if folder.startswith("__vs__", i)
                  and set_name_problem(folder[:i]) is None and set_name_problem(folder[i + 6:]) is None]
        assert splits == [(a, b)], (a, b, splits)


def test_a_folder_whose_name_cannot_name_a_set_is_skipped_and_said(tmp_path):
    """A folder profiles/p__vs__q/ (or of a space, a leading '-', 130 bytes) was taken for a set;
    the main job then stopped at `set e2__vs__p: profiles/e2__vs__p/reports does not exist`,
    naming neither the folder nor the cause."""
    from analysis.workflow import committed_sets

    report = next((REPO / "profiles" / "a10g_ncu2023.1.1_esmm" / "reports").iterdir())
    for name in ("p__vs__q", "my set", "-dash", "x" * 130, "ok"):
        (tmp_path / name / "reports").mkdir(parents=True)
        shutil.copy(report, tmp_path / name / "reports" / report.name)
    said = []
    assert committed_sets(tmp_path, warn=said.append) == ["ok"]
    assert len(said) == 4 and all(": skipped, not a profile set: " in s for s in said)
    assert any(s.startswith(f"{tmp_path / 'p__vs__q'}: skipped") and "'__vs'" in s for s in said)


def test_a_set_of_later_repeats_only_is_summarised_from_its_first_run(tmp_path):
    """A set holding only `_r2` of a profile had an empty summary (only repeat 0 was kept), and
    its figures said "the set has no launch"; with its base and `_r1`, the base is summarised."""
    from analysis.reports.parse import parse_reports
    from analysis.reports.tables import set_table, summary

    noise = REPO / "profiles" / "h200_580.159.04_ncu2025.3.1_noise" / "reports"
    for names in (["fp16_ptx_mma_k16_n1024-8192_r2"], ["fp16_ptx_mma_k16_n1024-8192", "fp16_ptx_mma_k16_n1024-8192_r1"]):
        got = parse_reports([noise / f"{n}.ncu-rep.xz" for n in names])
        got.raise_errors("s")
        s = summary(set_table(got.metrics, "s", {}), pd.concat(got.instances), None)
        assert list(s["report"]) == [names[0]] * 2 and sorted(s["n"]) == [1024, 8192]
