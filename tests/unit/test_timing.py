import os
import re
import statistics
import time
from datetime import UTC, datetime, timedelta

import keras
import numpy as np
import pytest
import tensorflow as tf

from helpers import CourseError
from helpers.chapters import ch01_single_gpu
from helpers.chapters.ch01_single_gpu import Timing, force, measure, printbar
from helpers.timing import EpochTimer, format_seconds

BAR = re.compile(r"^={80}(\d\d):(\d\d):(\d\d)\.(\d{3}) (\S+)(?:  (.*))?$")


@pytest.fixture
def local_zone():
    """Set the process's local time zone (a POSIX TZ string needs no tz database)."""
    saved = os.environ.get("TZ")

    def use(tz):
        os.environ["TZ"] = tz
        time.tzset()

    yield use
    if saved is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = saved
    time.tzset()


def test_printbar_format_and_local_time(capsys):
    before = datetime.now().astimezone()
    assert printbar() is None
    after = datetime.now().astimezone()
    out = capsys.readouterr().out
    assert out.endswith("\n") and out.count("\n") == 1
    line = out.rstrip("\n")
    match = BAR.match(line)
    assert match, line
    hh, mm, ss, _ms, zone, label = match.groups()
    assert label is None
    assert int(hh) in {before.hour, after.hour}
    assert int(mm) in {before.minute, after.minute}
    assert zone == before.strftime("%Z")


def test_printbar_uses_the_local_time_zone_not_a_fixed_offset(local_zone, capsys):
    local_zone("XYZ-05:30")  # UTC+5:30, a zone the seeds' fixed UTC+8 got wrong
    before = datetime.now(UTC) + timedelta(hours=5, minutes=30)
    printbar("epoch 1")
    after = datetime.now(UTC) + timedelta(hours=5, minutes=30)
    line = capsys.readouterr().out.rstrip("\n")
    hh, mm, _ss, _ms, zone, label = BAR.match(line).groups()
    assert zone == "XYZ"
    assert label == "epoch 1"
    assert (int(hh), int(mm)) in {(before.hour, before.minute), (after.hour, after.minute)}


def test_force_turns_tensors_into_numpy_in_nested_structures():
    result = force({"a": tf.constant([1.0, 2.0]), "b": (tf.constant(3), "text", 4)})
    assert isinstance(result["a"], np.ndarray)
    np.testing.assert_array_equal(result["a"], [1.0, 2.0])
    assert result["b"][0] == 3 and result["b"][1:] == ("text", 4)


def test_format_seconds_in_ms_under_a_second_else_in_s():
    assert [format_seconds(s) for s in (0.0004, 0.1234, 0.9999, 1.0, 12.345)] == [
        "0.4 ms", "123.4 ms", "999.9 ms", "1.00 s", "12.35 s"]


def test_timing_statistics_and_text():
    t = Timing("matmul", [0.3, 0.1, 0.2])
    assert (t.median, t.min, t.max) == (0.2, 0.1, 0.3)
    assert str(t) == "matmul: median 200.0 ms (min 100.0 ms, max 300.0 ms, 3 runs)"
    assert str(Timing("slow", [1.5, 2.0])) == "slow: median 1.75 s (min 1.50 s, max 2.00 s, 2 runs)"


class CountingWork:
    """A function that counts its calls and returns a TensorFlow tensor."""

    __name__ = "counting_work"

    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return tf.constant(float(self.calls))


@pytest.mark.parametrize("warmup, repeats", [(0, 1), (1, 5), (3, 2)])
def test_measure_calls_warmup_plus_repeats(warmup, repeats):
    work = CountingWork()
    result = measure(work, warmup=warmup, repeats=repeats)
    assert work.calls == warmup + repeats
    assert len(result.times) == repeats
    assert result.name == "counting_work"


def test_measure_forces_each_result(monkeypatch):
    forced = []
    monkeypatch.setattr(ch01_single_gpu, "force", lambda result: forced.append(result))
    work = CountingWork()
    measure(work, warmup=2, repeats=3)
    assert [float(t) for t in forced] == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_measure_names():
    assert measure(lambda: 1, repeats=1).name == "<lambda>"
    assert measure(lambda: 1, repeats=1, name="a @ b").name == "a @ b"
    assert measure(CountingWork(), repeats=1, name="named").name == "named"


@pytest.mark.parametrize("fn", [None, 3, tf.constant(1.0), "a @ b"])
def test_measure_rejects_non_callables(fn):
    with pytest.raises(CourseError, match=r"measure\(\): expected a function to call.*lambda"):
        measure(fn)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"warmup": -1}, r"measure\(warmup=-1\): use a whole number >= 0"),
        ({"warmup": True}, r"measure\(warmup=True\)"),
        ({"warmup": 1.0}, r"measure\(warmup=1.0\)"),
        ({"repeats": 0}, r"measure\(repeats=0\): use a whole number >= 1"),
        ({"repeats": False}, r"measure\(repeats=False\)"),
        ({"repeats": "5"}, r"measure\(repeats='5'\)"),
    ],
)
def test_measure_rejects_bad_counts(kwargs, message):
    work = CountingWork()
    with pytest.raises(CourseError, match=message):
        measure(work, **kwargs)
    assert work.calls == 0


# ---------------------------------------------------------------------------- EpochTimer


def tiny_model(steps_per_execution=1):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer="sgd", loss=loss, steps_per_execution=steps_per_execution)
    return model


@pytest.fixture(scope="module")
def tiny_data():
    rng = np.random.default_rng(0)
    return rng.random((32, 4), dtype=np.float32), rng.integers(0, 3, 32)


def test_epoch_timer_during_fit(tiny_data):
    x, y = tiny_data
    timer = EpochTimer(samples_per_epoch=len(x))
    tiny_model().fit(x, y, batch_size=8, epochs=3, verbose=0, callbacks=[timer])
    assert len(timer.epoch_seconds) == 3
    assert all(s > 0 for s in timer.epoch_seconds)
    assert timer.epoch_steps == [4, 4, 4]
    assert timer.steady_seconds == statistics.median(timer.epoch_seconds[1:])
    assert timer.samples_per_second == pytest.approx(32 / timer.steady_seconds)
    text = str(timer)
    assert text.startswith("epochs: ")
    assert text.count(",") >= 2 and "steady" in text and text.endswith("samples/s")


def test_epoch_timer_counts_training_time_only_in_its_throughput(tiny_data):
    # fit validates inside each epoch: samples/s is training throughput, not samples over training + validation.
    x, y = tiny_data
    timer = EpochTimer(samples_per_epoch=len(x))
    model = tiny_model()
    model.fit(x, y, batch_size=8, epochs=3, verbose=0, validation_data=(x, y), callbacks=[timer])
    assert len(timer.validation_seconds) == 3 and all(v > 0 for v in timer.validation_seconds)
    assert timer.train_seconds == [e - v for e, v in zip(timer.epoch_seconds, timer.validation_seconds)]
    assert timer.samples_per_second == pytest.approx(32 / statistics.median(timer.train_seconds[1:]))
    assert ", of which training " in str(timer) and str(timer).endswith("training samples/s")
    model.evaluate(x, y, verbose=0, callbacks=[timer])  # outside fit: no epoch to charge it to
    assert len(timer.validation_seconds) == 3


def test_epoch_timer_splits_validation_from_training():
    timer = EpochTimer(samples_per_epoch=100)
    timer.epoch_seconds, timer.validation_seconds = [5.0, 3.0, 4.0], [1.0, 1.0, 2.0]
    assert timer.steady_seconds == 3.5 and timer.steady_train_seconds == 2.0
    assert timer.samples_per_second == 50.0
    assert str(timer) == ("epochs: 5.00 s, 3.00 s, 4.00 s; steady 3.50 s, of which training 2.00 s (the rest is "
                          "validation), 50 training samples/s")


def test_epoch_timer_without_samples_has_no_throughput(tiny_data):
    x, y = tiny_data
    timer = EpochTimer()
    tiny_model().fit(x, y, batch_size=16, epochs=1, verbose=0, callbacks=[timer])
    assert timer.epoch_steps == [2]
    assert timer.steady_seconds == timer.epoch_seconds[0]  # one epoch: it is the steady one
    assert timer.samples_per_second is None
    assert "samples/s" not in str(timer)


def test_epoch_timer_steady_is_median_without_first_epoch():
    timer = EpochTimer(samples_per_epoch=100)
    timer.epoch_seconds = [5.0, 1.0, 3.0, 2.0]
    assert timer.steady_seconds == 2.0
    assert timer.samples_per_second == 50.0
    assert str(timer) == "epochs: 5.00 s, 1.00 s, 3.00 s, 2.00 s; steady 2.00 s, 50 samples/s"


def test_epoch_timer_before_any_epoch():
    timer = EpochTimer(samples_per_epoch=10)
    reads = (lambda: timer.steady_seconds, lambda: timer.samples_per_second, lambda: str(timer))
    for read in reads:
        with pytest.raises(CourseError, match=r"no epoch has finished yet; pass it to fit"):
            read()


@pytest.mark.parametrize("bad", [0, -5, True, 10.0, "32"])
def test_epoch_timer_rejects_bad_samples(bad):
    with pytest.raises(CourseError, match=rf"samples_per_epoch={bad!r}\): use a whole number >= 1"):
        EpochTimer(samples_per_epoch=bad)


def test_epoch_timer_error_names_epoch_timer():
    with pytest.raises(CourseError, match=r"^EpochTimer\(samples_per_epoch=0\)"):
        EpochTimer(samples_per_epoch=0)


def test_epoch_timer_counts_steps_with_steps_per_execution(tiny_data):
    x, y = tiny_data
    timer = EpochTimer()
    model = tiny_model(steps_per_execution=2)
    model.fit(x, y, batch_size=4, epochs=1, verbose=0, callbacks=[timer])
    assert timer.epoch_steps == [8]
