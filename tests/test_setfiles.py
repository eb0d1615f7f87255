"""The files beside a set's reports are checked where they are read, and every error names
the file, the place and the fix (copies of the committed files, damaged as a user might)."""

from __future__ import annotations

import codecs
import json

import pandas as pd
import pytest

from analysis.reports.setfiles import SetFileError, read_metadata, read_references, read_timings

from .conftest import SET_DIR


def test_committed_files_pass(set_dir):
    assert read_metadata(set_dir / "metadata.json")["gpu"] == "NVIDIA H200"
    assert len(read_timings(set_dir / "timings.csv")) == len(pd.read_csv(set_dir / "timings.csv"))
    assert len(read_references(set_dir / "references.csv")) > 0
    assert read_metadata(None) == {} and read_metadata(set_dir / "absent.json") == {}


def test_metadata_with_a_byte_order_mark_is_read(tmp_path):
    p = tmp_path / "metadata.json"
    p.write_bytes(codecs.BOM_UTF8 + (SET_DIR / "metadata.json").read_bytes())
    assert read_metadata(p) == json.loads((SET_DIR / "metadata.json").read_text())


@pytest.mark.parametrize("content,cause", [
    (b"", "file is empty"),
    (b"  \n", "file is empty"),
    (b'["NVIDIA H200"]', "holds a JSON list, not an object"),
    (b'{"gpu": "NVIDIA H200",', "not valid JSON: Expecting property name enclosed in double quotes at line 1"),
    (b'{"cc": 9.0}', "field cc: 9.0 is not of type 'string'"),
    (b'{"arch": "hopper"}', "field arch: 'hopper' does not match"),
    (b"\xff\xfe{}", "not UTF-8 text"),
])
def test_broken_metadata_names_file_field_and_fix(tmp_path, content, cause):
    p = tmp_path / "metadata.json"
    p.write_bytes(content)
    with pytest.raises(SetFileError) as err:
        read_metadata(p)
    msg = str(err.value)
    assert msg.startswith(f"{p}: ") and cause in msg and "(" in msg.split(cause, 1)[1]


def _timings(tmp_path, edit) -> str:
    df = pd.read_csv(SET_DIR / "timings.csv")
    p = tmp_path / "timings.csv"
    out = edit(df)
    if isinstance(out, str):
        p.write_text(out)
    else:
        out.to_csv(p, index=False)
    with pytest.raises(SetFileError) as err:
        read_timings(p)
    assert str(err.value).startswith(f"{p}: ")
    return str(err.value)


def test_empty_timings(tmp_path):
    assert "file is empty" in _timings(tmp_path, lambda df: "")


def test_timings_without_columns_name_them(tmp_path):
    msg = _timings(tmp_path, lambda df: df.drop(columns=["p25_ns", "repeats"]))
    assert "no column p25_ns, repeats (columns: kernel, precision, n," in msg


def test_negative_duration_is_refused_with_its_row(tmp_path):
    def edit(df):
        df.loc[3, "median_ns"] = -df.loc[3, "median_ns"]
        return df
    msg = _timings(tmp_path, edit)
    assert "median_ns: greater_than(0) fails in row 5 (" in msg


def test_median_outside_its_quartiles_is_refused(tmp_path):
    def edit(df):
        df.loc[0, "median_ns"] = df.loc[0, "p75_ns"] * 2
        return df
    assert "p25_ns <= median_ns <= p75_ns" in _timings(tmp_path, edit)


def test_duplicate_timing_rows_are_refused(tmp_path):
    assert "kernel" in _timings(tmp_path, lambda df: pd.concat([df, df.head(1)]))


def test_references_without_a_column(tmp_path):
    p = tmp_path / "references.csv"
    pd.read_csv(SET_DIR / "references.csv").drop(columns=["rate"]).to_csv(p, index=False)
    with pytest.raises(SetFileError, match=r"references.csv: no column rate"):
        read_references(p)


def test_event_timing_far_from_ncu_duration_is_flagged(table, report_instances, timings, set_dir):
    """The committed timings agree with ncu within 0.98-1.27; a median ten times too large
    (a copy of timings.csv with one row damaged) is named with the file and the row."""
    from analysis.reports.tables import check_timings, summary

    assert check_timings(summary(table, report_instances, timings), set_dir / "timings.csv") == []
    bad = timings.copy()
    i = bad.index[(bad["kernel"] == "int8_wmma") & (bad["n"] == 1024)][0]
    bad.loc[i, ["median_ns", "p25_ns", "p75_ns"]] *= 10
    (msg,) = check_timings(summary(table, report_instances, bad), "timings.csv")
    assert msg.startswith("timings.csv: int8_wmma N=1024: event timing") and "x ncu's gpu__time_duration.sum" in msg


def test_rate_above_every_measured_reference_is_flagged(summ, references):
    """No kernel of the committed set exceeds the highest rate measured for its precision;
    against a copy of references.csv whose INT8 rates are a tenth of the measured ones, the
    INT8 kernels above it (and INT4 ones, which INT8 references bound too) are named with
    both files."""
    from analysis.reports.tables import check_rates

    assert check_rates(summ, references, "timings.csv", "references.csv") == []
    low = references.copy()
    low.loc[low["precision"] == "int8", "rate"] /= 10
    msgs = check_rates(summ, low, "timings.csv", "references.csv")
    top = low.loc[low["precision"] == "int8", "rate"].max()
    expected = summ[(summ["precision"].isin(["int8", "int4"])) & (summ["throughput"] > 1.05 * top)]
    assert len(msgs) == len(expected) > 0
    assert all(m.startswith("timings.csv: int") and "above every rate measured for int" in m for m in msgs)
    assert any(m.startswith("timings.csv: int8_") for m in msgs)


def test_wgmma_rates_are_not_held_to_the_mma_sync_ceilings():
    """In the _paths set int8_wgmma runs above every INT8 reference (the s8 mma.sync ceiling
    and cuBLASLt): flagged when held to them, not when named unbounded, as the registry's
    wgmma kernels are; the other kernels of the set stay checked (none flagged)."""
    import yaml

    from analysis.reports.tables import check_rates, unbounded_kernels

    folder = SET_DIR.parent / "h200_580.159.04_ncu2025.3.1_paths"
    summ = pd.read_csv(folder / "timings.csv")  # kernel, precision, n and the event-timed rate
    refs = read_references(folder / "references.csv")
    held = check_rates(summ, refs, "timings.csv", "references.csv")
    assert held and all(m.startswith("timings.csv: int8_wgmma N=") for m in held)
    kernels = yaml.safe_load((SET_DIR.parents[1] / "config" / "config.yaml").read_text())["kernels"]
    unbounded = unbounded_kernels(kernels)  # the registry's wgmma kernels, the mma.sync ones not
    assert unbounded == ["fp16_wgmma", "fp16_wgmma_cluster", "fp16_wgmma_cluster_f16c", "fp16_wgmma_lag",
                         "fp16_wgmma_serpentine", "int4_wgmma_epi_tma", "int4_wgmma_persistent",
                         "int4_wgmma_unpack_s8", "int8_wgmma", "int8_wgmma_cluster", "int8_wgmma_lag",
                         "int8_wgmma_serpentine"]
    assert check_rates(summ, refs, "timings.csv", "references.csv", unbounded) == []
