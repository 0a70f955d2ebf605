import json

import numpy as np
import pytest
import tensorflow as tf

from helpers import report


@pytest.fixture
def report_file(monkeypatch, tmp_path):
    path = tmp_path / "figures.jsonl"
    monkeypatch.setenv(report.REPORT_FILE_VAR, str(path))
    return path


def test_record_without_report_file_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert report.record("median epoch time", 1.23, "s") is None
    assert list(tmp_path.iterdir()) == []


def test_record_with_empty_variable_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(report.REPORT_FILE_VAR, "")
    report.record("k", 1)
    assert list(tmp_path.iterdir()) == []


def test_record_appends_json_lines(report_file):
    assert report.record("median epoch time on CPU:0", 1.23456, "s") is None
    report.record(42, "text value")
    lines = report_file.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [
        {"key": "median epoch time on CPU:0", "value": 1.235, "unit": "s"},
        {"key": "42", "value": "text value", "unit": ""},
    ]


@pytest.mark.parametrize(
    "value, expected",
    [
        (np.float64(0.000123456), 0.0001235),
        (np.float32(2.5), 2.5),
        (np.int64(3), 3),
        (np.bool_(True), True),
        (123456.0, 123500.0),
        (7, 7),
        (None, None),
    ],
)
def test_record_converts_to_plain_json(report_file, value, expected):
    report.record("k", value)
    [entry] = report.read(str(report_file))
    assert entry["value"] == expected
    assert type(entry["value"]) is type(expected)


def test_read_missing_file_is_empty(tmp_path):
    assert report.read(str(tmp_path / "none.jsonl")) == []


def test_read_skips_blank_lines(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"key": "a", "value": 1, "unit": ""}\n\n   \n{"key": "b", "value": 2, '
                    '"unit": "s"}\n', encoding="utf-8")
    assert [e["key"] for e in report.read(str(path))] == ["a", "b"]


def test_record_then_read_round_trip(report_file):
    for i in range(3):
        report.record(f"epoch {i}", i * 0.5, "s")
    assert report.read(str(report_file)) == [
        {"key": f"epoch {i}", "value": i * 0.5, "unit": "s"} for i in range(3)
    ]


def test_record_tensorflow_scalar(report_file):
    report.record("loss", tf.constant(1.5))
    assert report.read(str(report_file))[0]["value"] == 1.5
