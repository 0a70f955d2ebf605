import json

import matplotlib.pyplot as plt
import pytest
import tensorflow as tf

from helpers import bench, data
from helpers.bench import Result, main
from helpers.tables import Table

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def fast(monkeypatch):
    monkeypatch.setenv("COURSE_FAST", "1")


@pytest.fixture
def offline(monkeypatch):
    def no_network():
        raise OSError("offline in tests")

    monkeypatch.setattr(data, "_download_reuters", no_network)


def only_json(capsys) -> dict:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out  # exactly one JSON object, nothing else on stdout
    return json.loads(out)


def test_registered_benchmarks():
    assert sorted(bench.BENCHMARKS) == ["epoch-time", "matmul"]


def test_accelerators_lists_cpu_then_gpus():
    devices = bench.accelerators()
    assert devices[0] == "/CPU:0"
    assert devices[1:] == [f"/GPU:{i}" for i in range(len(tf.config.list_logical_devices("GPU")))]


def test_result_table_and_json():
    result = Result("demo", ["device", "median_s"], [["/CPU:0", 0.25]], figure=None)
    table = result.table()
    assert isinstance(table, Table)
    assert table.title == "demo"
    assert table.rows == [["/CPU:0", "0.25"]]
    assert result.as_json("p.png") == {
        "benchmark": "demo", "results": [{"device": "/CPU:0", "median_s": 0.25}], "png": "p.png"
    }


def test_matmul_json(fast, capsys, tmp_path):
    png = tmp_path / "m.png"
    assert main(["matmul", "--json", "--png", str(png)]) == 0
    out = only_json(capsys)
    assert out["benchmark"] == "matmul"
    assert out["fast"] is True
    assert out["png"] == str(png)
    assert png.read_bytes()[:8] == PNG_MAGIC
    assert [row["device"] for row in out["results"]] == bench.accelerators()
    for row in out["results"]:
        assert set(row) == {"device", "median_s", "min_s", "max_s", "gflops", "sum"}
        assert 0 < row["min_s"] <= row["median_s"] <= row["max_s"]
        assert row["gflops"] > 0
        # entries of a and b are uniform in [0, 3): each of the 10000 x 10000 products averages
        # 100 * 1.5 * 1.5, so the total is close to 2.25e10 (it checks the right work was done)
        assert float(row["sum"]) == pytest.approx(2.25e10, rel=0.01)


def test_epoch_time_json(fast, offline, capsys, tmp_path):
    png = tmp_path / "e.png"
    assert main(["epoch-time", "--json", "--png", str(png)]) == 0
    out = only_json(capsys)
    assert out["benchmark"] == "epoch-time"
    assert out["fast"] is True
    assert png.read_bytes()[:8] == PNG_MAGIC
    [row] = [r for r in out["results"] if r["device"] == "/CPU:0"]
    assert set(row) == {"device", "steady_epoch_s", "samples_per_s", "first_epoch_s"}
    assert row["steady_epoch_s"] > 0 and row["first_epoch_s"] > 0
    # fast mode: 40 steps of 32 examples per epoch
    assert row["samples_per_s"] == round(40 * 32 / row["steady_epoch_s"])


def test_text_output_and_default_png_path(monkeypatch, capsys, tmp_path):
    def fake_benchmark(is_fast):
        fig, ax = plt.subplots()
        ax.bar(["x"], [1.0])
        return Result("fake", ["fast", "value"], [[is_fast, 1.5]], fig)

    monkeypatch.setitem(bench.BENCHMARKS, "fake", fake_benchmark)
    monkeypatch.setenv("COURSE_FAST", "0")
    monkeypatch.chdir(tmp_path)
    assert main(["fake"]) == 0
    out = capsys.readouterr().out
    expected_png = "build/bench/fake.png"
    table = Result("fake", ["fast", "value"], [[False, 1.5]], None).table()
    assert out == f"{table}\nplot: {expected_png}\n"
    assert (tmp_path / expected_png).read_bytes()[:8] == PNG_MAGIC


def test_unknown_benchmark_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["nope"])
    assert info.value.code == 2
    assert "unknown benchmark 'nope'; choose one of: epoch-time, matmul" in capsys.readouterr().err


def test_missing_name_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2
    assert "usage: python -m helpers.bench" in capsys.readouterr().err


def test_course_errors_are_reported_not_raised(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("COURSE_FAST", "maybe")
    assert main(["matmul", "--json", "--png", str(tmp_path / "m.png")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("error: COURSE_FAST='maybe' is not a yes/no value: use COURSE_FAST=1 "
                            "or COURSE_FAST=0.\n")
    assert not (tmp_path / "m.png").exists()
