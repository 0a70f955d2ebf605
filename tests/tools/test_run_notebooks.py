"""The one executor (`make run`, `make outputs`): executes notebooks into build/ or in place, keeps going past failures,
writes the report, cleans what differs between runs."""

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
    path = notebook(tmp_path / "01_bad.ipynb", "1 / 0", "print('never')")
    row = run_notebooks.run_one(path)
    assert row["status"] == ("FAILED: cell 1: raised ZeroDivisionError: division by zero; "
                             "cell 2: did not run: the run stopped before it")
    assert row["figures"] == "-"
    assert "ZeroDivisionError" in (build / "01_bad.html").read_text()  # the page shows the error to the report's reader


def test_run_one_fails_a_notebook_whose_outputs_show_stray_stderr(tmp_path, build):
    # tools/output_checks.py, as in JupyterLab: stderr that the stored notebook does not show is a problem.
    path = notebook(tmp_path / "02_log.ipynb", "import sys\nprint('a log line', file=sys.stderr)")
    assert run_notebooks.run_one(path)["status"] == ("FAILED: cell 1: shows log lines on stderr (red in JupyterLab): "
                                                     "a log line")


def test_write_report_has_one_row_per_notebook(build, monkeypatch):
    monkeypatch.setenv("COURSE_FAST", "1")
    monkeypatch.setenv("COURSE_DEVICES", "2")
    rows = [{"notebook": "00_a.ipynb", "status": "OK", "seconds": 12.3, "figures": "x: 1"},
            {"notebook": "01_b.ipynb", "status": "FAILED: E: boom", "seconds": 4.0, "figures": "-"}]
    text = run_notebooks.write_report(rows).read_text()
    assert "Mode: fast; COURSE_DEVICES=2" in text
    assert "| 00_a.ipynb | OK | 12 s | x: 1 |" in text
    assert "| 01_b.ipynb | FAILED: E: boom | 4 s | - |" in text


def test_run_one_names_the_slowest_cells(tmp_path, build, capsys):
    path = notebook(tmp_path / "03_slow.ipynb", "x = 1", "import time\ntime.sleep(1.5)", "y = 2")
    run_notebooks.run_one(path)
    printed = capsys.readouterr().out
    assert "03_slow.ipynb: OK in" in printed
    assert printed.split("slowest cells: ")[1].startswith("cell 2 ")  # where a slow run spent its time


def test_in_place_stores_a_finished_run_and_keeps_a_notebook_an_error_stopped(tmp_path, build, capsys):
    ok = notebook(tmp_path / "04_ok.ipynb", "print('fresh')")
    assert run_notebooks.main(["--in-place", str(ok)]) == 0
    [cell] = nbformat.read(ok, as_version=4).cells
    assert cell.outputs[0].text == "fresh\n" and cell.execution_count == 1
    assert "execution" not in cell.metadata  # cleaned as the repository stores notebooks
    bad = notebook(tmp_path / "05_bad.ipynb", "1 / 0")
    stored_bad = bad.read_text()
    logs = notebook(tmp_path / "06_log.ipynb", "import sys\nprint('a log line', file=sys.stderr)")
    assert run_notebooks.main(["--in-place", str(bad), str(logs)]) == 1
    assert bad.read_text() == stored_bad
    # Finished, so stored, but reported: `make run` would flag the line.
    assert nbformat.read(logs, as_version=4).cells[0].outputs[0].text == "a log line\n"
    assert "06_log.ipynb: FAILED: cell 1: shows log lines on stderr" in capsys.readouterr().out
    assert list(build.iterdir()) == []  # no report, nothing in build/


def test_clean_drops_widget_state_and_timing_metadata():
    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {"state": {}}
    cell = nbformat.v4.new_code_cell("1")
    cell.metadata["execution"] = {"iopub.status.busy": "now"}
    cell.outputs = [nbformat.v4.new_output("display_data", data={
        "application/vnd.jupyter.widget-view+json": {"model_id": "x"}, "text/plain": "Output()"})]
    nb.cells = [cell]
    run_notebooks.clean(nb)
    assert "widgets" not in nb.metadata
    assert "execution" not in nb.cells[0].metadata
    assert nb.cells[0].outputs == []


def test_clean_keeps_printbars_line_without_the_wall_clock_time(capsys):
    from helpers.chapters.ch01_single_gpu import printbar

    printbar("start")
    printbar()
    printed = capsys.readouterr().out
    cell = nbformat.v4.new_code_cell("printbar()")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="before\n" + printed + "10:11:12.345 stays\n")]
    nb = nbformat.v4.new_notebook(cells=[cell])
    run_notebooks.clean(nb)
    assert nb.cells[0].outputs[0].text == ("before\n" + "=" * 80 + "HH:MM:SS.mmm TZ  start\n" + "=" * 80
                                           + "HH:MM:SS.mmm TZ\n10:11:12.345 stays\n")
