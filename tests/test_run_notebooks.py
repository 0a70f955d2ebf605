"""`make run`'s driver: executes notebooks into build/, keeps going past failures, writes the report."""

import nbformat
import pytest

from tools import run_notebooks


def notebook(path, *sources):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


@pytest.fixture
def build(tmp_path, monkeypatch):
    out = tmp_path / "build"
    out.mkdir()
    monkeypatch.setattr(run_notebooks, "BUILD", out)
    return out


def test_run_one_executes_records_figures_and_writes_html(tmp_path, build):
    path = notebook(tmp_path / "00_ok.ipynb", "import helpers.report\nhelpers.report.record('speed', 1.5, 's')")
    row = run_notebooks.run_one(path)
    assert row["status"] == "OK"
    assert row["figures"] == "speed: 1.5 s"
    assert (build / "00_ok.ipynb").exists() and (build / "00_ok.html").exists()
    executed = nbformat.read(build / "00_ok.ipynb", as_version=4)
    assert executed.cells[0].execution_count == 1


def test_run_one_reports_a_failing_notebook_instead_of_stopping(tmp_path, build):
    path = notebook(tmp_path / "01_bad.ipynb", "1 / 0")
    row = run_notebooks.run_one(path)
    assert row["status"].startswith("FAILED: CellExecutionError")
    assert "ZeroDivisionError" in row["status"]
    assert row["figures"] == "-"
    assert (build / "01_bad.html").exists()  # the page shows the error to whoever reads the report


def test_write_report_has_one_row_per_notebook(build, monkeypatch):
    monkeypatch.setenv("COURSE_FAST", "1")
    monkeypatch.setenv("COURSE_DEVICES", "2")
    rows = [{"notebook": "00_a.ipynb", "status": "OK", "seconds": 12.3, "figures": "x: 1"},
            {"notebook": "01_b.ipynb", "status": "FAILED: E: boom", "seconds": 4.0, "figures": "-"}]
    text = run_notebooks.write_report(rows).read_text()
    assert "Mode: fast; COURSE_DEVICES=2" in text
    assert "| 00_a.ipynb | OK | 12 s | x: 1 |" in text
    assert "| 01_b.ipynb | FAILED: E: boom | 4 s | - |" in text
