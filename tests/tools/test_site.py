"""The site's configuration (docs/conf.py), its pages' sources and tools/fast_mode_minutes.py, without building.

The built site in a browser is tests/browser/test_site.py (`make test-site`)."""

from __future__ import annotations

import importlib.util
import json
import os
import re

import pytest

from tools import fast_mode_minutes
from tools.template import NOTEBOOKS, ROOT

spec = importlib.util.spec_from_file_location("site_conf", ROOT / "docs" / "conf.py")
conf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(conf)
CHAPTERS = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
MACHINE = {"cpu": "Some CPU", "cores": 2, "date": "2026-11-26", "python": "3.11.7", "tensorflow": "2.21.0",
           "keras": "3.15.1"}


def test_the_notebooks_github_links_to_the_glossary_and_pictures_become_the_sites_own():
    repo = conf.REPOSITORY
    raw = repo.replace("https://github.com/", "https://raw.githubusercontent.com/")
    text = (f"[XLA]({repo}/blob/main/GLOSSARY.md#xla) ![step]({raw}/main/notebooks/images/step.png) "
            f"[an issue]({repo}/issues/1) [Keras](https://github.com/keras-team/keras/blob/main/GLOSSARY.md)")
    assert conf.local_links(text) == ("[XLA](../GLOSSARY.md#xla) ![step](images/step.png) "
                                      f"[an issue]({repo}/issues/1) "
                                      "[Keras](https://github.com/keras-team/keras/blob/main/GLOSSARY.md)")


def test_the_minutes_table_lists_each_measured_notebook_and_names_the_missing_ones(tmp_path):
    path = tmp_path / "minutes.json"
    path.write_text(json.dumps({"machine": MACHINE, "env": "COURSE_FAST=1", "note": "A busy machine.",
                                "notebooks": {CHAPTERS[1]: {"runs": 3, "seconds": [60.0, 66.0, 90.0], "min_s": 60.0,
                                                            "median_s": 66.0, "max_s": 90.0}}}))
    table = conf.minutes_table(path)
    assert "Some CPU, pinned to 2 cores, 2026-11-26: TensorFlow 2.21.0, Keras 3.15.1" in table
    stem = CHAPTERS[1].removesuffix(".ipynb")
    assert f"| [{stem}](../notebooks/{CHAPTERS[1]}) | 3 | 1.1 min (66 s) | 60 - 90 s |" in table
    assert f"Not measured yet: {CHAPTERS[0].removesuffix('.ipynb')}, " in table
    assert table.endswith("A busy machine.")


def test_without_measurements_the_page_says_how_to_make_them(tmp_path):
    assert conf.minutes_table(tmp_path / "none.json") == ("No measurements yet: `python -m tools.fast_mode_minutes "
                                                         "--runs 3` writes `none.json`.")


def test_the_committed_measurements_name_only_real_notebooks_and_hold_real_runs():
    data = json.loads(conf.MINUTES.read_text())
    assert data["notebooks"] and set(data["notebooks"]) <= set(CHAPTERS)
    for row in data["notebooks"].values():
        assert len(row["seconds"]) == row["runs"] and row["min_s"] <= row["median_s"] <= row["max_s"]
    assert conf.minutes_table().count("\n| [") == len(data["notebooks"])


def test_the_index_and_the_instructors_page_list_every_chapter_and_the_table_has_its_place():
    index, instructors = ((ROOT / "docs" / name).read_text() for name in ("index.md", "instructors.md"))
    for name in CHAPTERS:
        assert f"../notebooks/{name.removesuffix('.ipynb')}\n" in index
        assert f"(../notebooks/{name})" in instructors
    assert len(conf.MINUTES_BLOCK.findall(instructors)) == 1


def run_one_returning(*seconds, status="OK"):
    calls = iter(seconds)

    def run_one(path, build):
        assert os.environ["COURSE_FAST"] == "1" and os.environ["COURSE_DEVICES"] == "2"
        return {"notebook": path.name, "status": status, "seconds": next(calls), "figures": "-"}
    return run_one


def test_measure_keeps_every_run_and_its_min_median_max(monkeypatch):
    monkeypatch.setattr(os, "environ", dict(os.environ))
    rows = fast_mode_minutes.measure([NOTEBOOKS / CHAPTERS[0]], 3, run_one_returning(70.04, 50.0, 61.0))
    assert rows == {CHAPTERS[0]: {"runs": 3, "seconds": [70.0, 50.0, 61.0], "min_s": 50.0, "median_s": 61.0,
                                  "max_s": 70.0}}


def test_a_failed_run_records_nothing_and_says_what_to_do(monkeypatch):
    monkeypatch.setattr(os, "environ", dict(os.environ))
    with pytest.raises(SystemExit, match=re.escape(f"{CHAPTERS[0]}, run 1 of 2 (2 devices): FAILED: cell 3: raised")):
        fast_mode_minutes.measure([NOTEBOOKS / CHAPTERS[0]], 2, run_one_returning(5.0, status="FAILED: cell 3: raised"))


def test_merge_keeps_rows_from_the_same_machine_and_drops_another_machines():
    row = {"runs": 1, "seconds": [60.0], "min_s": 60.0, "median_s": 60.0, "max_s": 60.0}
    old = fast_mode_minutes.merge(None, {"a.ipynb": row, "b.ipynb": row}, MACHINE, note="first")
    new = fast_mode_minutes.merge(old, {"b.ipynb": {**row, "runs": 3}}, {**MACHINE, "date": "2026-11-27"})
    assert new["notebooks"] == {"a.ipynb": row, "b.ipynb": {**row, "runs": 3}} and new["note"] == "first"
    other = fast_mode_minutes.merge(old, {"b.ipynb": row}, {**MACHINE, "cpu": "Another CPU"})
    assert other["notebooks"] == {"b.ipynb": row} and other["note"] == ""


def test_other_device_counts_are_kept_apart_and_tabled(tmp_path):
    row = {"runs": 1, "seconds": [60.0], "min_s": 60.0, "median_s": 60.0, "max_s": 60.0}
    two = fast_mode_minutes.merge(None, {"a.ipynb": row}, MACHINE)
    four = fast_mode_minutes.merge(two, {"a.ipynb": {**row, "median_s": 80.0}}, MACHINE, devices=4)
    one = fast_mode_minutes.merge(four, {"b.ipynb": {**row, "median_s": 40.0}}, MACHINE, devices=1)
    assert one["notebooks"] == {"a.ipynb": row}
    assert one["other_devices"] == {"1": {"b.ipynb": {**row, "median_s": 40.0}},
                                    "4": {"a.ipynb": {**row, "median_s": 80.0}}}
    path = tmp_path / "minutes.json"
    path.write_text(json.dumps(one))
    table = conf.minutes_table(path)
    assert "| chapter | 1 devices | 4 devices |" in table
    assert "| a | not measured | 80 s (1 runs) |" in table and "| b | 40 s (1 runs) | not measured |" in table


def test_measure_sets_the_device_count(monkeypatch):
    monkeypatch.setattr(os, "environ", dict(os.environ))
    seen = []

    def run_one(path, build):
        seen.append(os.environ["COURSE_DEVICES"])
        return {"notebook": path.name, "status": "OK", "seconds": 1.0, "figures": "-"}
    fast_mode_minutes.measure([NOTEBOOKS / CHAPTERS[0]], 1, run_one, devices=3)
    assert seen == ["3"]


def test_pinning_to_more_cores_than_the_process_has_is_refused(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "sched_setaffinity", lambda pid, cpus: None, raising=False)
    with pytest.raises(SystemExit, match="--cores 4: only 2 CPU core"):
        fast_mode_minutes.pin(4)
    assert fast_mode_minutes.pin(2) == 2


@pytest.mark.parametrize("argv, message", [(["--runs", "0"],
                                            "--runs 0 --cores 2 --devices 2: each must be a whole number >= 1"),
                                           (["nowhere.ipynb"], "no such notebook: ")])
def test_bad_arguments_are_refused_with_the_reason(argv, message, capsys):
    with pytest.raises(SystemExit):
        fast_mode_minutes.main(argv)
    assert message in capsys.readouterr().err


def test_the_site_reads_the_instructors_page_with_the_table_and_a_notebook_with_local_links():
    source = [(ROOT / "docs" / "instructors.md").read_text()]
    conf.on_source_read(None, "docs/instructors", source)
    assert "On GitHub this section shows no table" not in source[0] and conf.minutes_table() in source[0]
    raw = conf.REPOSITORY.replace("https://github.com/", "https://raw.githubusercontent.com/")
    notebook = [json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": f"![a]({raw}/main/notebooks/"
                                       "images/a.png)"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})]
    conf.on_source_read(None, "notebooks/00_x", notebook)
    read = json.loads(notebook[0])
    assert read["cells"][0]["source"] == "![a](images/a.png)"
    assert read["metadata"]["language_info"]["pygments_lexer"] == "ipython3"  # the setup cell's `!pip` line
