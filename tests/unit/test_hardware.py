import json
from pathlib import Path

import pytest

from helpers import hardware
from helpers.hardware import ACCELERATORS, DTYPES, MEASURED_H100, MEASURED_H100_SWEEPS, lookup

MEASURED_JSON = Path(__file__).resolve().parents[2] / "data" / "measured" / "nvidia-h100-80gb-hbm3.json"


@pytest.mark.parametrize("reported, row", [
    ("Tesla T4", "T4"),
    ("Tesla P100-PCIE-16GB", "P100 PCIe 16GB"),
    ("Tesla V100-SXM2-16GB", "V100 SXM2 16GB"),
    ("NVIDIA A100-SXM4-40GB", "A100 SXM 40GB"),
    ("NVIDIA A100-SXM4-80GB", "A100 SXM 80GB"),
    ("NVIDIA H100 80GB HBM3", "H100 SXM 80GB"),
    ("NVIDIA H100 PCIe", "H100 PCIe 80GB"),
    ("TPU v2", "TPU v2-8"),
    ("TPU v3", "TPU v3-8"),
    ("TPU v5 lite", "TPU v5e-8"),
    ("TPU v5e", "TPU v5e-8"),
    ("kaggle 2x t4", "Kaggle 2x T4"),
])
def test_lookup_matches_the_names_runtimes_report(reported, row):
    assert lookup(reported).name == row


@pytest.mark.parametrize("reported", ["cpu", "/device:CPU:0", "", "TPU v5p", "TPU v4", "NVIDIA A100-PCIE-40GB",
                                      "Tesla V100-SXM2-32GB", "Tesla P100-PCIE-12GB", "NVIDIA H100 NVL"])
def test_lookup_returns_none_for_hardware_not_in_the_table(reported):
    assert lookup(reported) is None


def test_row_names_are_unique_and_every_row_has_every_dtype():
    assert len({a.name for a in ACCELERATORS}) == len(ACCELERATORS)
    assert all(tuple(a.peak_tflops) == DTYPES for a in ACCELERATORS)


def test_ridge_point_is_peak_over_bandwidth_for_every_row_with_figures():
    with_figures = [(a, d) for a in ACCELERATORS for d in DTYPES
                    if a.peak_tflops[d] is not None and a.bandwidth_gb_s is not None]
    assert len(with_figures) >= 10
    for a, d in with_figures:
        assert a.ridge_point(d) == pytest.approx(a.peak_tflops[d] * 1e3 / a.bandwidth_gb_s)
    assert lookup("NVIDIA H100 80GB HBM3").ridge_point("bfloat16") == pytest.approx(989.5e12 / 3350e9)
    assert lookup("TPU v2").ridge_point("bfloat16") is None  # no verified bandwidth


def test_unit_peak_multiplies_by_chips():
    assert lookup("TPU v5 lite").unit_tflops("bfloat16") == pytest.approx(8 * 197)
    assert lookup("Kaggle 2x T4").unit_tflops("float16") == pytest.approx(130)
    assert lookup("Tesla T4").unit_tflops("bfloat16") is None


@pytest.mark.parametrize("row, dtype, sparse", [
    ("H100 SXM 80GB", "bfloat16", 1979), ("H100 SXM 80GB", "float16", 1979), ("H100 SXM 80GB", "tf32", 989),
    ("A100 SXM 80GB", "bfloat16", 624), ("A100 SXM 80GB", "tf32", 312), ("A100 SXM 40GB", "float16", 624),
])
def test_no_row_claims_a_sparse_figure(row, dtype, sparse):
    dense = lookup(row).peak_tflops[dtype]
    assert dense == pytest.approx(sparse / 2, abs=0.5)
    assert dense < sparse


def test_chips_without_bfloat16_or_tf32_hardware_say_none():
    for name in ("Tesla T4", "Tesla P100-PCIE-16GB", "Tesla V100-SXM2-16GB"):
        assert lookup(name).peak_tflops["bfloat16"] is None
        assert lookup(name).peak_tflops["tf32"] is None


def test_every_figure_has_a_source_and_unverified_rows_say_so():
    for a in ACCELERATORS:
        figures = [*a.peak_tflops.values(), a.memory_gb, a.bandwidth_gb_s, a.interconnect_gb_s]
        if any(f is not None for f in figures):
            assert a.source_urls and all(u.startswith("https://") for u in a.source_urls), a.name
        if all(f is None for f in figures) or a.bandwidth_gb_s is None:
            assert "not verified" in a.notes, a.name


def test_measured_h100_constants_equal_the_json():
    measured = json.loads(MEASURED_JSON.read_text())
    assert MEASURED_H100["device"] == measured["device_kind"]
    assert MEASURED_H100["date"] == measured["date"]
    assert MEASURED_H100["jax"] == measured["jax"]
    for dtype, sweep in MEASURED_H100_SWEEPS.items():
        best = max(r["tflops"] for r in measured["matmul"][sweep])
        assert MEASURED_H100["matmul_tflops"][dtype] == round(best, 1), dtype
    assert MEASURED_H100["memory_bandwidth_gb_s"] == round(max(r["gb_per_s"] for r in measured["memory_bandwidth"]), 1)
    assert MEASURED_H100["host_to_device_gb_s"] == round(max(r["gb_per_s"] for r in measured["host_to_device"]), 1)


def test_measured_h100_stays_below_the_published_peaks():
    published = lookup(MEASURED_H100["device"])
    for dtype in DTYPES:
        assert 0 < MEASURED_H100["matmul_tflops"][dtype] < published.peak_tflops[dtype]
    assert MEASURED_H100["memory_bandwidth_gb_s"] < published.bandwidth_gb_s


def test_published_table_prints_one_row_per_accelerator():
    table = hardware.published_table()
    text = str(table)
    assert len(table.rows) == len(ACCELERATORS)
    assert "H100 SXM 80GB" in text and "989.5" in text and "1979" not in text
    t4 = table.rows[0]
    assert t4[:7] == ["T4", "1", "8.1", "-", "65", "-", "16"]
    assert t4[-1] == "nvidia.com"
    assert "<table>" in table._repr_html_()


def test_sources_lists_every_url():
    urls = {row[1] for row in hardware.sources().rows}
    assert urls == {u for a in ACCELERATORS for u in a.source_urls}
    assert "https://cloud.google.com/tpu/docs/v5e" in urls


def test_a_ring_sends_one_way_pcie_as_printed_and_half_of_nvlink_and_ici():
    assert hardware.one_way_link_gb_s(hardware.lookup("Tesla T4")) == 16.0
    assert hardware.one_way_link_gb_s(hardware.lookup("Tesla V100-SXM2-16GB")) == 150.0
    assert hardware.one_way_link_gb_s(hardware.lookup("TPU v5 lite")) == 200.0
    assert hardware.one_way_link_gb_s(hardware.lookup("TPU v3")) is None


@pytest.mark.parametrize("name, tf32, dtype, expected", [
    ("NVIDIA A100-SXM4-80GB", True, "float32",
     ("A100 SXM 80GB (TF32, TensorFlow's default for float32 there)", 156e12)),
    ("NVIDIA A100-SXM4-80GB", False, "float32", ("A100 SXM 80GB", 19.5e12)),
    ("Tesla T4", True, "float32", ("T4", 8.1e12)),  # no TF32 on Turing
    ("Tesla T4", True, "bfloat16", None),  # no bfloat16 peak published for a T4
    ("NVIDIA H100 80GB HBM3", True, "bfloat16", ("H100 SXM 80GB", 989.5e12)),
])
def test_published_peak_reads_this_runtimes_gpu(monkeypatch, name, tf32, dtype, expected):
    import tensorflow as tf

    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: ["GPU:0"] if kind == "GPU" else [])
    monkeypatch.setattr(tf.config.experimental, "get_device_details", lambda device: {"device_name": name})
    monkeypatch.setattr(tf.config.experimental, "tensor_float_32_execution_enabled", lambda: tf32)
    found = hardware.published_peak(dtype)
    assert found is None if expected is None else (found[0] == expected[0] and found[1] == pytest.approx(expected[1]))


def test_published_peak_is_none_without_a_gpu():
    assert hardware.published_peak("float32") is None  # the CPU runtime of the tests
