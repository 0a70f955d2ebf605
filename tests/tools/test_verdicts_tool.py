"""tools/verdicts.py: the table of recorded verdicts across runs marks flips and missing readings."""

import json

from tools import verdicts


def write_run(folder, stem, figures):
    folder.mkdir(parents=True)
    (folder / f"{stem}.figures.jsonl").write_text(
        "".join(json.dumps(f) + "\n" for f in figures), encoding="utf-8")


def reading(key, value, verdict):
    return {"key": key, "value": value, "unit": "x", "verdict": verdict}


def test_a_flip_and_a_missing_reading_are_defects_and_within_noise_beside_above_is_not(tmp_path, capsys):
    write_run(tmp_path / "run-1", "05_tpu", [reading("fusing: 8", 1.6, "above"), reading("fusing: 32", 1.1, "above"),
                                             reading("gone", 1.0, "within noise"),
                                             {"key": "plain figure", "value": 3, "unit": "s"}])
    write_run(tmp_path / "run-2", "05_tpu", [reading("fusing: 8", 0.8, "below"),
                                             reading("fusing: 32", 1.0, "within noise")])
    code = verdicts.main(["--table-only", "--runs", "2", "--build", str(tmp_path),
                          "--write", str(tmp_path / "table.md"), "notebooks/05_tpu.ipynb"])
    out = capsys.readouterr().out
    assert code == 1 and "2 defect(s)" in out
    rows = {line.split(" | ")[1]: line for line in out.splitlines() if line.startswith("| 05_tpu")}
    assert rows["fusing: 8"].endswith("| 1.60x above | 0.80x below | FLIPS |")
    assert rows["fusing: 32"].endswith("| 1.10x above | 1.00x within noise |  |")
    assert rows["gone"].endswith("| 1.00x within noise | - | missing in a run |")
    assert "plain figure" not in out
    written = (tmp_path / "table.md").read_text()
    assert "Machine:" in written and "cores" in written and "| fusing: 8 |" in written


def test_runs_that_agree_pass(tmp_path, capsys):
    for run in ("run-1", "run-2", "run-3"):
        write_run(tmp_path / run, "06_input_pipelines", [reading("cache", 0.5, "below")])
    assert verdicts.main(["--table-only", "--build", str(tmp_path), "notebooks/06_input_pipelines.ipynb"]) == 0
    assert "no reading flips" in capsys.readouterr().out
