"""Chapter 8's profile reading, on real traces captured here (XProf's JSON is internal: these tests pin the fields
the chapter reads), and the profile benchmark."""

from __future__ import annotations

import json
import re
import time
import tomllib
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

from helpers import CourseError
from helpers.bench import ch08_profiling as ch8_benchmark
from helpers.bench import main
from helpers.chapters import ch08_profiling as ch8

ROOT = Path(__file__).resolve().parents[2]


def tiny_model():
    model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(4)])
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def batches(slow_s: float = 0.0):
    """Random batches of 16 features; with slow_s, each batch waits that long in a Python function first."""
    ds = tf.data.Dataset.from_tensor_slices((np.random.rand(64, 16).astype("float32"), np.arange(64) % 4))
    if slow_s:
        def wait(x, y):
            time.sleep(slow_s)
            return x, y
        ds = ds.map(lambda x, y: tf.numpy_function(wait, [x, y], [tf.float32, tf.int64]))
        ds = ds.map(lambda x, y: (tf.ensure_shape(x, [16]), tf.ensure_shape(y, [])))
    return ds.batch(8).repeat()


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """Real profiles of a few fit steps: input-bound, not input-bound, and the TensorBoard callback alone."""
    root = tmp_path_factory.mktemp("profiles")
    keras.utils.set_random_seed(0)
    ch8.profile_fit(tiny_model(), batches(slow_s=0.03), root / "slow", first=2, last=5)
    ch8.profile_fit(tiny_model(), batches(), root / "quick", first=2, last=5)
    tiny_model().fit(batches(), steps_per_epoch=5, epochs=1, verbose=0,
                     callbacks=[keras.callbacks.TensorBoard(str(root / "callback"), profile_batch=(2, 5))])
    return root


def test_the_input_pipeline_view_has_the_fields_the_chapter_reads(traces):
    step_table = ch8.xprof_view(traces / "slow", "input_pipeline_analyzer")[1]
    for key in ch8.STEP_PARTS.values():
        assert f"{key}_time_ms_avg" in step_table["p"]
    assert {"steptime_ms_average", "input_conclusion"} <= set(step_table["p"])
    assert step_table["cols"][0]["id"] == "stepnum" and step_table["rows"]
    assert "stepTimeMs" in [col["id"] for col in step_table["cols"]]


def test_a_step_that_waits_for_data_is_input_bound(traces):
    slow = ch8.step_breakdown(traces / "slow")
    assert slow["steps"] >= 3
    parts = sum(slow[p] for p in ch8.STEP_PARTS)
    assert parts == pytest.approx(slow["step ms"], rel=0.05)  # the parts add up to the step
    assert len(slow["step ms each"]) == slow["steps"]
    assert np.mean(slow["step ms each"]) == pytest.approx(slow["step ms"], rel=0.05)  # and the steps to the average
    assert slow["input"] >= 0.5 * slow["step ms"]  # 30 ms of sleep per batch against a tiny model
    assert ch8.verdict(slow).startswith("input-bound: ") and "of the step waits for data" in ch8.verdict(slow)
    assert "input-bound" in slow["xprof says"]


def test_a_step_fed_from_memory_is_not_input_bound(traces):
    quick, slow = ch8.step_breakdown(traces / "quick"), ch8.step_breakdown(traces / "slow")
    assert quick["steps"] >= 3 and quick["step ms"] < slow["step ms"]
    assert not ch8.verdict(quick).startswith("input-bound")
    assert quick["input"] < slow["input"]


def test_the_tensorboard_callback_alone_marks_no_steps(traces):
    breakdown = ch8.step_breakdown(traces / "callback")
    assert breakdown["steps"] == 0 and breakdown["step ms"] == 0
    assert ch8.verdict(breakdown).startswith("unknown: the trace has no marked steps")


def test_top_ops_are_sorted_by_self_time_and_leave_out_idle(traces):
    ops = ch8.top_ops(traces / "slow", 4)
    assert len(ops) == 4
    assert all(len(op) == 5 and op[1] != "IDLE" for op in ops)
    assert [op[3] for op in ops] == sorted((op[3] for op in ops), reverse=True) and ops[0][3] > 0
    assert any(op[1] == "PyFunc" for op in ops)  # the sleeping Python function is among the most expensive


def test_missing_and_empty_folders_are_clear_errors(tmp_path):
    with pytest.raises(CourseError, match="there is no such folder"):
        ch8.step_breakdown(tmp_path / "nowhere")
    (tmp_path / "empty" / "plugins" / "profile").mkdir(parents=True)
    with pytest.raises(CourseError, match=r"holds no trace \(\*\.xplane\.pb\)\. Capture one first"):
        ch8.step_breakdown(tmp_path / "empty")


def test_the_newest_capture_is_read(tmp_path):
    for capture in ("2026_01_01_00_00_00", "2026_01_02_00_00_00"):
        folder = tmp_path / "run" / "plugins" / "profile" / capture
        folder.mkdir(parents=True)
        (folder / "host.xplane.pb").write_bytes(b"")
    assert ch8.xplane_files(tmp_path) == [str(folder / "host.xplane.pb")]


def test_profile_steps_stops_when_fit_ends_early_and_recovers_a_profiler_left_running(tmp_path):
    tf.profiler.experimental.start(str(tmp_path / "left_running"))  # as an interrupted cell would leave it
    ch8.profile_fit(tiny_model(), batches().take(4), tmp_path / "short", first=2, last=50)  # the data ends at 4
    assert ch8.step_breakdown(tmp_path / "short")["steps"] >= 1
    tf.profiler.experimental.start(str(tmp_path / "again"))  # no profiler is left running
    tf.profiler.experimental.stop(save=False)


def test_the_pins_are_pyproject_s_profile_extra():
    with open(ROOT / "pyproject.toml", "rb") as f:
        extra = tomllib.load(f)["project"]["optional-dependencies"]["profile"]
    assert tuple(extra) == ch8.PROFILE_REQUIREMENTS


def test_profile_benchmark_prints_both_breakdowns_and_the_speedup(monkeypatch, capsys, tmp_path):
    import helpers.images as images

    folder = images.make_image_folder(tmp_path / "shapes", per_class=40)
    monkeypatch.setattr(ch8_benchmark, "default_root", lambda: folder)
    monkeypatch.setenv("COURSE_FAST", "1")
    assert main(["profile", "--json", "--png", str(tmp_path / "p.png")]) == 0
    result = json.loads(capsys.readouterr().out)
    naive, fixed = result["results"]
    assert naive["pipeline"] == "naive" and fixed["pipeline"] == "fixed"
    assert naive["steps"] > 0 and fixed["steps"] > 0
    # How input-bound the naive step is depends on the load beside it (47% to 90% seen), so compare the two runs
    waiting = {r["pipeline"]: r["input_ms"] / r["step_ms"] for r in (naive, fixed)}
    assert waiting["naive"] > 0.25 and waiting["naive"] > 3 * waiting["fixed"]
    assert all(re.fullmatch(r"[a-z ]+-bound: \d+% .*waits for data", r["verdict"]) for r in (naive, fixed))
    assert result["speedup"] == pytest.approx(naive["step_ms"] / fixed["step_ms"], rel=0.02) and result["speedup"] > 1
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_a_file_xprof_cannot_read_is_a_clear_error(tmp_path):
    capture = tmp_path / "plugins" / "profile" / "2026_01_01_00_00_00"
    capture.mkdir(parents=True)
    (capture / "host.xplane.pb").write_bytes(b"not a trace")
    with pytest.raises(CourseError, match="XProf could not build its 'input_pipeline_analyzer' view of"):
        ch8.step_breakdown(tmp_path)


def test_colab_learners_are_told_the_protobuf_the_replica_checks():
    from tools import replica

    notebook = (ROOT / "notebooks" / "08_profiling.ipynb").read_text()
    assert f"--no-deps --target /content/protobuf6 {replica.TENSORBOARD_PROTOBUF}" in notebook
    assert "%env PYTHONPATH=/content/protobuf6" in notebook


def test_a_fit_that_fails_mid_profile_leaves_no_profiler_running(tmp_path):
    # Keras calls on_train_end only when fit completes (keras/src/backend/tensorflow/trainer.py): profile_fit stops
    # the profiler itself, so that a failing cell does not leave it running.
    import itertools

    produced = itertools.count()

    def fourth_fails(x, y):  # batches 1-3 pass; the profiler starts at batch 2
        if next(produced) >= 3:
            raise ValueError("a broken batch")
        return x, y

    broken = batches().map(lambda x, y: tf.numpy_function(fourth_fails, [x, y], [tf.float32, tf.int64]))
    broken = broken.map(lambda x, y: (tf.ensure_shape(x, [None, 16]), tf.ensure_shape(y, [None])))
    with pytest.raises(Exception, match="a broken batch"):
        ch8.profile_fit(tiny_model(), broken, tmp_path / "broken", first=2, last=6)
    tf.profiler.experimental.start(str(tmp_path / "again"))  # raises AlreadyExistsError if one were left running
    tf.profiler.experimental.stop(save=False)
