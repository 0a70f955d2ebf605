"""Chapter 7: profile a few `fit` steps, read the trace with XProf's own converters, fix what it blames
(`python -m helpers.bench profile`)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import keras
import tensorflow as tf

# The notebook-cell blocks below use helpers.CourseError and helpers.images.IMAGE_SIZE by module, as the notebook does.
import helpers.images
from helpers.chapters.ch05_input_pipelines import IO_THREADS, LATENCY_S, file_dataset, generator_dataset
from helpers.images import default_root, list_image_folder, make_image_folder
from helpers.plots import stacked_bars
from helpers.results import Result

# XProf reads the traces (it is also TensorBoard's Profile tab). 2.22.3 is the newest release that installs on
# Colab without changing its packages: 2.23 and later require absl-py>=2.1 and urllib3>=2.7 (Colab: 1.4.0, 2.5.0).
# The same pins are pyproject.toml's `profile` extra (a test keeps them equal).
PROFILE_REQUIREMENTS = ("xprof==2.22.3", "tensorboard>=2.20")


# notebook cell: step_markers
class ProfileSteps(keras.callbacks.Callback):
    """Profiles training batches `first`..`last` (counted from 1 over the whole fit) into `logdir`, each marked as
    one step the way the TensorFlow docs mark a custom loop's steps: `Trace("train", step_num=..., _r=1)`.
    Keras's TensorBoard(profile_batch=...) marks its profiled batches without `_r=1`, and XProf's step-time
    analysis then finds no steps."""

    def __init__(self, logdir, first=3, last=8):
        super().__init__()
        self.logdir, self.first, self.last = str(logdir), first, last
        self.batches, self.running, self.step = 0, False, None

    def on_train_batch_begin(self, batch, logs=None):
        self.batches += 1
        if self.batches == self.first:
            try:
                tf.profiler.experimental.start(self.logdir)
            except tf.errors.AlreadyExistsError:  # left running by an interrupted cell: drop it, start afresh
                tf.profiler.experimental.stop(save=False)
                tf.profiler.experimental.start(self.logdir)
            self.running = True
        if self.running:
            self.step = tf.profiler.experimental.Trace("train", step_num=self.batches, _r=1)
            self.step.__enter__()

    def on_train_batch_end(self, batch, logs=None):
        if self.step is not None:
            self.step.__exit__(None, None, None)
            self.step = None
        if self.running and self.batches == self.last:
            self.on_train_end()

    def on_train_end(self, logs=None):  # also when fit ends before `last`: keep what was captured
        if self.running:
            tf.profiler.experimental.stop()
            self.running = False


def profile_fit(model, dataset, logdir, *, first=3, last=8):
    """Train for `last` batches and profile batches first..last. The first batches are left out: they trace and
    compile the step function, which is not the steady state you want to optimise."""
    model.fit(dataset, steps_per_epoch=last, epochs=1, verbose=0, callbacks=[ProfileSteps(logdir, first, last)])
# end of notebook cell


# notebook cell: read_profile
def xplane_files(logdir) -> list[str]:
    """The trace files (*.xplane.pb, one per host) of the newest capture under `logdir`."""
    root = Path(logdir)
    if not root.is_dir():
        raise helpers.CourseError(
            f"read the profile of {str(logdir)!r}: there is no such folder. Pass the log_dir given to the TensorBoard "
            "callback (or to tf.profiler.experimental.start).")
    captures = sorted({path.parent for path in root.rglob("*.xplane.pb")}, key=lambda folder: folder.name)
    if not captures:
        raise helpers.CourseError(
            f"read the profile of {str(logdir)!r}: the folder holds no trace (*.xplane.pb). Capture one first: "
            "fit with TensorBoard(log_dir, profile_batch=(first, last)) and train past batch `last`.")
    return sorted(str(path) for path in captures[-1].glob("*.xplane.pb"))  # folders are named by capture time


def xprof_view(logdir, tool: str):
    """One of XProf's views of the newest trace, as the JSON its web page draws: a list of Google Charts tables,
    each {"cols": [...], "rows": [...], "p": {properties}}. This JSON is XProf's internal format, not an API.
    `_pywrap_profiler_plugin` is XProf's converter itself (C++, called through ctypes); the public-looking
    `raw_to_tool_data` around it also loads XProf's protobuf code, which needs protobuf >= 6.31 (Colab: 5.29.6)."""
    from xprof.convert import _pywrap_profiler_plugin

    data, converted = _pywrap_profiler_plugin.xspace_to_tools_data(xplane_files(logdir), tool,
                                                                  {"use_saved_result": True})
    if not converted:
        raise helpers.CourseError(f"XProf could not build its {tool!r} view of {str(logdir)!r}: "
                                  f"{data.decode(errors='replace')[:300] or 'no reason given'}.")
    return json.loads(data)


# The parts of a step in XProf's input-pipeline analysis (its step-time table's properties), in ms per step.
STEP_PARTS = {"input": "infeed", "host compute": "host_compute", "device compute": "device_compute",
              "kernel launch": "kernel_launch", "device to device": "device_to_device",
              "collectives": "device_collectives", "output": "outfeed", "compilation": "compile", "other": "other"}


def step_breakdown(logdir) -> dict:
    """Average step time and its parts in ms, the number of steps, each step's time (their spread), and XProf's own
    conclusion."""
    step_table = xprof_view(logdir, "input_pipeline_analyzer")[1]  # table 1: the step-time breakdown, a row a step
    summary = step_table["p"]
    parts = {name: float(summary[f"{key}_time_ms_avg"]) for name, key in STEP_PARTS.items()}
    column = [col["id"] for col in step_table["cols"]].index("stepTimeMs")
    return {"steps": len(step_table["rows"]), "step ms": float(summary["steptime_ms_average"]), **parts,
            "step ms each": [float(row["c"][column]["v"]) for row in step_table["rows"]],
            "xprof says": summary["input_conclusion"]}


def verdict(breakdown: dict) -> str:
    """One line: is the step waiting for data? The largest part of the step is the bottleneck."""
    if not breakdown["steps"]:
        return "unknown: the trace has no marked steps (" + breakdown["xprof says"] + ")"
    parts = {name: breakdown[name] for name in STEP_PARTS}
    largest = max(parts, key=parts.get)
    waiting = 100 * parts["input"] / breakdown["step ms"]
    if largest == "input":
        return f"input-bound: {waiting:.0f}% of the step waits for data"
    return f"{largest}-bound: {100 * parts[largest] / breakdown['step ms']:.0f}% of the step is {largest}, " \
           f"{waiting:.0f}% waits for data"


def top_ops(logdir, count: int = 5) -> list[tuple]:
    """The TensorFlow ops with the most self time (their own time, without the ops they call), summed over every
    thread and every profiled step, from XProf's framework-op statistics: (where, op type, op name (its last three
    parts), self ms, % of all self time on that host or device)."""
    table = xprof_view(logdir, "framework_op_stats")[0]
    column = {col["id"]: i for i, col in enumerate(table["cols"])}
    rows = [[cell["v"] for cell in row["c"]] for row in table["rows"]]
    rows = [r for r in rows if r[column["type"]] != "IDLE"]
    rows.sort(key=lambda r: -r[column["total_self_time"]])
    return [(r[column["host_or_device"]], r[column["type"]], "/".join(r[column["operation"]].split("/")[-3:]),
             round(r[column["total_self_time"]] / 1000, 2),
             round(100 * max(r[column["host_total_self_time_percent"]], r[column["device_total_self_time_percent"]]),
                   1))
            for r in rows[:count]]
# end of notebook cell


# notebook cell: case
def small_convnet(num_classes, size=helpers.images.IMAGE_SIZE):
    """A small image classifier, light enough that a CPU trains it faster than a naive pipeline reads files."""
    model = keras.Sequential([
        keras.Input((size, size, 3)),
        keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
        keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(num_classes),
    ])
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def naive_pipeline(paths, labels, class_names, batch=32):
    """Chapter 5's baseline: a Python generator reads one file at a time (2 ms simulated storage latency each)."""
    return generator_dataset(paths, labels, latency_s=LATENCY_S).batch(batch).repeat()


def fixed_pipeline(paths, labels, class_names, batch=32):
    """Chapter 5's fix: tf.data reads many files at once, in any order, and prepares the next batches while the
    model trains on this one."""
    ds = file_dataset(paths, class_names, latency_s=LATENCY_S, io_threads=IO_THREADS, deterministic=False)
    return ds.batch(batch).repeat().prefetch(tf.data.AUTOTUNE)
# end of notebook cell


def profile_both(logdir, fast: bool, root=None) -> dict:
    """{"naive": breakdown, "fixed": breakdown} of the same model trained on each pipeline."""
    root = root or default_root()
    if not root.is_dir():
        make_image_folder(root)
    paths, labels, class_names = list_image_folder(root)
    last = 8 if fast else 20
    breakdowns = {}
    for name, pipeline in (("naive", naive_pipeline), ("fixed", fixed_pipeline)):
        keras.utils.set_random_seed(0)
        profile_fit(small_convnet(len(class_names)), pipeline(paths, labels, class_names), Path(logdir) / name,
                    last=last)
        breakdowns[name] = step_breakdown(Path(logdir) / name)
    return breakdowns


def breakdown_figure(breakdowns: dict):
    """Each pipeline's average step, split into its parts."""
    return stacked_bars({name: {part: b[part] for part in STEP_PARTS} for name, b in breakdowns.items()},
                        xlabel="ms per step (average of the profiled steps)",
                        title="Where a training step's time goes, read from the profile")


def profile(fast: bool) -> Result:
    """Step-time breakdown of the same model fed by chapter 5's naive and fixed pipelines, and the speed-up."""
    with tempfile.TemporaryDirectory() as logdir:
        breakdowns = profile_both(logdir, fast)
    rows = [[name, b["steps"], round(b["step ms"], 1), *(round(b[p], 1) for p in STEP_PARTS), verdict(b)]
            for name, b in breakdowns.items()]
    speedup = breakdowns["naive"]["step ms"] / breakdowns["fixed"]["step ms"]
    return Result("profile", ["pipeline", "steps", "step_ms", *(p.replace(" ", "_") + "_ms" for p in STEP_PARTS),
                              "verdict"], rows, breakdown_figure(breakdowns), {"speedup": round(speedup, 2)})
