"""analysis.gpu.cluster: node descriptions of a cluster's GPU partition and the node check."""

from __future__ import annotations

import json

import pytest

from analysis.gpu.cluster import check_node, describe_node, main, node_gpu, read_node
from analysis.errors import AnalysisError
from analysis.gpu.device import detect_gpu

H100 = {"host": "gpu01", "gpu": {"name": "NVIDIA H100 80GB HBM3", "cc": "9.0", "arch": "sm_90",
                                 "driver": "570.86.15", "cuda_driver": "12.8"},
        "ncu_version": "2025.1.0", "set": "h100-80gb-hbm3_570.86.15_ncu2025.1.0"}


def test_node_description_names_the_set_and_architecture(tmp_path):
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps(H100))
    gpu, set_name = read_node(path)
    assert (gpu.arch, gpu.slug, set_name) == ("sm_90", "h100-80gb-hbm3", H100["set"])
    local, note = node_gpu({"gpu_partition": "gpu"}, tmp_path)
    assert note is None and local.set_name == H100["set"] and local.info == gpu


def test_partition_without_description_gets_a_note_not_an_error(tmp_path):
    local, note = node_gpu({"gpu_partition": "a100"}, tmp_path)
    assert local is None and "a100.json not written yet" in note and "gpu_node" in note


@pytest.mark.parametrize("text, cause", [
    ("", "not a node description"), ("[1, 2]", "an object with an object 'gpu' expected"),
    ('{"gpu": [], "set": "x"}', "an object with an object 'gpu' expected"),
    ('{"gpu": {"name": "x"}, "set": "s"}', "without field 'cc'"),
    (json.dumps({**H100, "set": "h100/sub"}), "set 'h100/sub' is not a profile-set name"),
    (json.dumps({**H100, "set": ""}), "set '' is not a profile-set name"),
    (json.dumps({**H100, "set": "default"}), "'default' is Snakemake's profile folder"),
    (json.dumps({**H100, "set": "null"}), "pandas reads 'null' in a table as a missing value"),
    (json.dumps({**H100, "gpu": {**H100["gpu"], "arch": "sm_xx"}}), "arch 'sm_xx' is not an nvcc target")])
def test_broken_description_names_the_file_and_the_fix(tmp_path, text, cause):
    path = tmp_path / "gpu.json"
    path.write_text(text)
    with pytest.raises(AnalysisError, match=cause) as err:
        read_node(path)
    assert str(path) in str(err.value) and "run the gpu_node target again" in str(err.value)


@pytest.mark.skipif(detect_gpu() is not None, reason="this machine has a GPU")
def test_node_without_gpu_is_refused_by_name(tmp_path, capsys):
    with pytest.raises(AnalysisError, match=r"node \S+: no NVIDIA GPU"):
        describe_node()
    assert main(["--describe", str(tmp_path / "n.json")]) == 1
    assert "no NVIDIA GPU" in capsys.readouterr().err and not (tmp_path / "n.json").exists()


@pytest.mark.gpu
def test_gpu_node_describes_itself_and_refuses_another_set(tmp_path):
    out = tmp_path / "n.json"
    assert main(["--describe", str(out)]) == 0
    gpu, set_name = read_node(out)
    assert gpu == detect_gpu() and check_node(set_name)["set"] == set_name
    with pytest.raises(AnalysisError, match=f"make profile set '{set_name}'.*writes to 'h100-80gb-hbm3_"):
        check_node(H100["set"])
