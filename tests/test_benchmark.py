"""The GPU-suite benchmark pages: kept runs are collected from Snakemake's benchmark files
and rendered (built here from the job times kept in docs/gpu-runs/, which came from real
GPU runs)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from analysis import benchmark

REPO = Path(__file__).resolve().parents[1]
KEPT = REPO / "docs" / "gpu-runs" / "2026-11-30_paths_per_kernel_jobs.csv"


def _run_folder(root: Path, repeat: bool) -> Path:
    """A GPU run's benchmarks/ as Snakemake writes it, from the job times kept for the
    _paths run (plus, with ``repeat``, one profile repeated under the name profile_repeat
    gives it)."""
    with open(KEPT, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        if r["rule"] == "profile" and repeat and r["job"].endswith("int8_wmma_n512"):
            rows.append({"rule": "profile", "job": r["job"] + "_r1", "seconds": r["seconds"]})
            break
    for r in rows:
        tsv = root / "benchmarks" / r["rule"] / f"{r['job']}.tsv"
        tsv.parent.mkdir(parents=True, exist_ok=True)
        tsv.write_text(f"s\th:m:s\n{r['seconds']}\t0:00:00\n", encoding="utf-8")
    return root


def test_collect_and_render_keep_every_job(tmp_path, monkeypatch):
    """Collecting the kept run's benchmark files again gives the same rows; a repeated
    profile counts as profile_repeat (its N is not read from '_r1'), and the page renders."""
    monkeypatch.setattr(benchmark, "GPU_RUNS", tmp_path / "runs")
    out = benchmark.collect_gpu_run(_run_folder(tmp_path / "run", repeat=True), "again", 480.5, "cmd", "note")
    with open(out, encoding="utf-8") as fh:
        got = list(csv.DictReader(fh))
    with open(KEPT, encoding="utf-8") as fh:
        kept = list(csv.DictReader(fh))
    assert [r for r in got if r["rule"] != "profile_repeat"] == kept
    assert [r["job"] for r in got if r["rule"] == "profile_repeat"] == \
        ["h200_580.159.04_ncu2025.3.1_paths/int8_wmma_n512_r1"]
    page = benchmark.render_gpu(tmp_path / "runs")
    assert "| profile_repeat (GPU) | 1 |" in page and "for 9 kernels and 46 profiled reports" in page
    # the json keeps the timings of the set the jobs name, as they are now
    import json

    meta = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    with open(REPO / "profiles" / "h200_580.159.04_ncu2025.3.1_paths" / "timings.csv", encoding="utf-8") as fh:
        t = [[r["kernel"], int(r["n"]), float(r["median_ns"])] for r in csv.DictReader(fh)]
    assert meta["timings_ns"] == {"h200_580.159.04_ncu2025.3.1_paths": t} and len(t) > 0


@pytest.mark.parametrize("damage,match", [
    ("empty", "not a Snakemake benchmark file"),
    ("header", "not a Snakemake benchmark file"),
    ("text", "not a Snakemake benchmark file"),
    ("nofolder", "no such folder"),
])
def test_bad_run_folders_are_refused_naming_the_file_and_keep_nothing(tmp_path, monkeypatch, damage, match):
    monkeypatch.setattr(benchmark, "GPU_RUNS", tmp_path / "runs")
    run = _run_folder(tmp_path / "run", repeat=False)
    tsv = next((run / "benchmarks" / "profile").rglob("*.tsv"))
    if damage == "nofolder":
        shutil.rmtree(run / "benchmarks")
    else:
        tsv.write_text({"empty": "", "header": "s\th:m:s\n", "text": "s\th:m:s\nabc\t0\n"}[damage], encoding="utf-8")
    with pytest.raises(ValueError, match=match) as err:
        benchmark.collect_gpu_run(run, "bad", 1.0, "", "")
    if damage != "nofolder":
        assert str(tsv) in str(err.value)
    assert not (tmp_path / "runs").exists()


def test_a_kept_run_name_stays_in_its_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(benchmark, "GPU_RUNS", tmp_path / "runs")
    run = _run_folder(tmp_path / "run", repeat=False)
    for name in ("../escaped", ".hidden", ""):
        with pytest.raises(ValueError, match="--name"):
            benchmark.collect_gpu_run(run, name, 1.0, "", "")
    with pytest.raises(ValueError, match="--wall"):
        benchmark.collect_gpu_run(run, "ok", -5.0, "", "")
    assert not (tmp_path / "runs").exists() and not (tmp_path / "escaped.csv").exists()


def test_the_committed_page_is_what_the_kept_runs_render():
    assert benchmark.render_gpu() == (REPO / "docs" / "gpu-benchmarks.md").read_text(encoding="utf-8")


def test_a_new_cpu_measurement_keeps_the_hand_written_sections():
    """python -m analysis.benchmark rewrites the measured tables of docs/benchmarks.md and
    keeps every section after them: the analysis of the targets as well as the earlier
    measurements (before, only the part from "## Earlier measurements" was kept)."""
    page = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    kept = benchmark.kept_sections(page)
    assert kept.startswith("\n## What the wall-time targets would need\n")
    assert "\n## Earlier measurements\n" in kept and page.endswith(kept)
    head = page[: len(page) - len(kept)]
    assert "\n## " not in head and "| `snakemake --cores 1`, the whole main job" in head
    assert benchmark.kept_sections(head) == ""


@pytest.mark.parametrize("name", ["2026-12-03_whole_registry_same_output", "2026-12-03_whole_registry_random_ceilings"])
def test_job_times_are_split_into_a_part_per_job_and_a_part_per_kernel_ms(name):
    """Each whole-registry run's profile jobs against the timings its json kept of its set (two
    runs of one day wrote the same set): the line is a least-squares one (its residuals sum to
    zero over the jobs); without the kept timings a run of another day than the set's
    metadata.json gets none (a later run reused the set's name)."""
    import json
    import statistics

    run = REPO / "docs" / "gpu-runs" / f"{name}.csv"
    with open(run, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    kept = json.loads(run.with_suffix(".json").read_text(encoding="utf-8"))["timings_ns"]
    fits = benchmark.job_time_fit(rows, "2026-12-03", kept=kept)
    assert [f.split(" jobs")[0] for f in fits] == ["check_time", "profile"]
    (t_rows,) = kept.values()
    t = {(k, int(n)): ns for k, n, ns in t_rows}
    x, y = [], []
    for r in rows:
        if r["rule"] == "profile":
            kernel = r["job"].split("/")[1].rsplit("_n", 1)[0]
            x.append(sum(v for (k, _), v in t.items() if k == kernel) / 1e6)
            y.append(float(r["seconds"]))
    fit = statistics.linear_regression(x, y)
    assert abs(sum(yi - fit.intercept - fit.slope * xi for xi, yi in zip(x, y))) < 1e-6
    assert f"over {len(x)} jobs): {fit.intercept:.1f} s per job plus {fit.slope:.3f} s per ms" in fits[1]
    assert benchmark.job_time_fit(rows, "2026-12-02") == []


def test_a_run_keeps_its_own_timings_after_a_later_run_replaces_its_set():
    """The earlier run of 2026-12-03 fits against the timings its json kept, not those of the
    set as the later run left it (the same name and day): the two give other lines."""
    import json

    run = REPO / "docs" / "gpu-runs" / "2026-12-03_whole_registry_same_output.csv"
    with open(run, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    kept = json.loads(run.with_suffix(".json").read_text(encoding="utf-8"))["timings_ns"]
    with open(REPO / "profiles" / "h200_580.159.04_ncu2025.3.1_registry" / "timings.csv", encoding="utf-8") as fh:
        now = {(r["kernel"], int(r["n"])): float(r["median_ns"]) for r in csv.DictReader(fh)}
    (old,) = kept.values()
    assert {(k, n): ns for k, n, ns in old} != now
    assert benchmark.job_time_fit(rows, "2026-12-03", kept=kept) != benchmark.job_time_fit(rows, "2026-12-03")


def _kept_copy(tmp_path):
    """The later 2026-12-03 run's json and csv copied into tmp_path/runs as r.json, r.csv."""
    import json

    src = REPO / "docs" / "gpu-runs" / "2026-12-03_whole_registry_random_ceilings"
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(src.with_suffix(".csv"), runs / "r.csv")
    return runs, json.loads(src.with_suffix(".json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("bad", [[["int8_wgmma_cluster", 8192]], [["int8_wgmma_cluster", "8192", 7.2e5]],
                                 [["int8_wgmma_cluster", 8192, float("nan")]], [["int8_wgmma_cluster", 8192, -1.0]],
                                 [["int8_wgmma_cluster", 8192, 1.7e308]], "not rows", "twice"])
def test_a_run_whose_kept_timings_are_damaged_is_refused_naming_its_file(tmp_path, bad):
    """A kept run's json whose timings_ns is not [kernel, n, median_ns] rows: rendering the page
    refuses it, naming the json, instead of fitting on what it holds."""
    import json

    runs, meta = _kept_copy(tmp_path)
    (set_name, rows), = meta["timings_ns"].items()
    if bad == "twice":  # one kernel and N with two medians
        bad = [[rows[0][0], rows[0][1], rows[0][2] * 2]]
    meta["timings_ns"] = {set_name: rows[:3] + bad if isinstance(bad, list) else bad}
    (runs / "r.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ValueError, match=r"r\.json: timings_ns"):
        benchmark.render_gpu(runs)
    meta["timings_ns"] = {set_name: rows}
    (runs / "r.json").write_text(json.dumps(meta), encoding="utf-8")
    assert "## r\n" in benchmark.render_gpu(runs)


@pytest.mark.parametrize("damage,match", [
    ("no wall", r"r\.json: expected wall_s"), ("negative wall", r"r\.json: expected wall_s"),
    ("wall as text", r"r\.json: expected wall_s"), ("a list", r"r\.json: a JSON list"),
    ("not JSON", r"r\.json: not a kept run's JSON"), ("no csv", r"r\.csv: the job times of r\.json"),
    ("seconds as text", r"r\.csv, line 2: expected rule, job and seconds"),
    ("negative seconds", r"r\.csv, line 2: expected rule, job and seconds"),
])
def test_a_damaged_kept_run_is_refused_naming_its_file_and_the_page_is_not_written(tmp_path, monkeypatch,
                                                                                   damage, match):
    import json

    runs, meta = _kept_copy(tmp_path)
    text = None
    if damage == "no wall":
        del meta["wall_s"]
    elif damage == "negative wall":
        meta["wall_s"] = -5
    elif damage == "wall as text":
        meta["wall_s"] = "123"
    elif damage == "a list":
        meta = [meta]
    elif damage == "not JSON":
        text = "{"
    elif damage == "no csv":
        (runs / "r.csv").unlink()
    else:
        lines = (runs / "r.csv").read_text(encoding="utf-8").splitlines()
        rule, job, _ = lines[1].split(",")
        lines[1] = f"{rule},{job},{'abc' if damage == 'seconds as text' else '-1e9'}"
        (runs / "r.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (runs / "r.json").write_text(text if text is not None else json.dumps(meta), encoding="utf-8")
    with pytest.raises(ValueError, match=match):
        benchmark.render_gpu(runs)
    # on the command line: one line naming the file, exit 1, no page written
    monkeypatch.setattr(benchmark, "GPU_RUNS", runs)
    out = tmp_path / "page.md"
    assert benchmark.gpu_main(["--out", str(out)]) == 1 and not out.exists()


def test_a_run_that_kept_no_timings_of_its_set_gets_no_fit_from_a_later_run(tmp_path):
    """timings_ns present but without the job's set (or empty): no fit lines, rather than the
    set's timings as a later run of the same day left them. The later run here is the committed
    registry set's timings.csv under a metadata.json dated the run's day."""
    run = REPO / "docs" / "gpu-runs" / "2026-12-03_whole_registry_same_output.csv"
    with open(run, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    committed = REPO / "profiles" / "h200_580.159.04_ncu2025.3.1_registry"
    later = tmp_path / committed.name
    later.mkdir()
    shutil.copy(committed / "timings.csv", later / "timings.csv")
    (later / "metadata.json").write_text(json.dumps({"date": "2026-12-03T21:00:00+00:00"}), encoding="utf-8")
    assert benchmark.job_time_fit(rows, "2026-12-03", profiles=tmp_path) != []  # the later run, same day
    assert benchmark.job_time_fit(rows, "2026-12-04", profiles=tmp_path) == []  # not the run's day
    assert benchmark.job_time_fit(rows, "2026-12-03", profiles=tmp_path, kept={}) == []
    assert benchmark.job_time_fit(rows, "2026-12-03", profiles=tmp_path,
                                  kept={"another_set": [["k", 512, 1.0]]}) == []
