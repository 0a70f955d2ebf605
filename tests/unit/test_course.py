import contextlib
import dataclasses
import importlib
import logging
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import run_python

import helpers
from helpers import Course, CourseError, course, errors, installs, quiet, versions

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("raw", ["1", "true", "YES", " on ", "True"])
def test_flag_from_env_true_values(monkeypatch, raw):
    monkeypatch.setenv("COURSE_X", raw)
    assert errors.flag_from_env("COURSE_X") is True


@pytest.mark.parametrize("raw", ["0", "false", "No", "off", "", "  "])
def test_flag_from_env_false_values(monkeypatch, raw):
    monkeypatch.setenv("COURSE_X", raw)
    assert errors.flag_from_env("COURSE_X", default=True) is False


@pytest.mark.parametrize("default", [True, False])
def test_flag_from_env_unset_gives_default(monkeypatch, default):
    monkeypatch.delenv("COURSE_X", raising=False)
    assert errors.flag_from_env("COURSE_X", default=default) is default


def test_flag_from_env_rejects_typos(monkeypatch):
    monkeypatch.setenv("COURSE_X", "ye")
    with pytest.raises(CourseError, match=r"COURSE_X='ye' is not a yes/no value: use COURSE_X=1"):
        errors.flag_from_env("COURSE_X")


@pytest.mark.parametrize("raw, expected", [(None, 7), ("", 7), ("  ", 7), ("3", 3), (" 4 ", 4)])
def test_int_from_env(monkeypatch, raw, expected):
    if raw is None:
        monkeypatch.delenv("COURSE_N", raising=False)
    else:
        monkeypatch.setenv("COURSE_N", raw)
    assert errors.int_from_env("COURSE_N", 7) == expected


@pytest.mark.parametrize("raw", ["two", "2.5", "1e3"])
def test_int_from_env_rejects_non_integers(monkeypatch, raw):
    monkeypatch.setenv("COURSE_N", raw)
    with pytest.raises(CourseError, match=r"COURSE_N=.* is not a whole number: use e.g. COURSE_N"):
        errors.int_from_env("COURSE_N", 1)


@pytest.mark.parametrize("n", [1, 2, errors.MAX_DEVICES])
def test_check_devices_accepts_range(n):
    assert errors.check_devices(n) == n


@pytest.mark.parametrize("bad", [0, -1, errors.MAX_DEVICES + 1, True, 2.0, "2", None])
def test_check_devices_rejects(bad):
    with pytest.raises(CourseError,
                       match=r"whole number from 1 to 16 logical devices \(COURSE_DEVICES sets it too\)"):
        errors.check_devices(bad)


@pytest.mark.parametrize(
    "version, expected",
    [("2.21.0", (2, 21)), ("3.15.1", (3, 15)), ("2.16.0rc0", (2, 16)), ("3.0.0.dev2024", (3, 0))],
)
def test_version_tuple(version, expected):
    assert versions._version_tuple(version) == expected


def test_check_versions_passes_on_this_runtime():
    assert versions.check_versions() is None  # no CourseError: this runtime is new enough


@pytest.mark.parametrize("module, version", [("tensorflow", "2.19.1"), ("keras", "3.12.0"), ("keras", "2.15.0")])
def test_check_versions_rejects_runtimes_older_than_the_oldest_tested(monkeypatch, module, version):
    mod = importlib.import_module(module)
    monkeypatch.setattr(mod, "__version__", version)
    with pytest.raises(CourseError, match=r"needs TensorFlow >= 2.20 and Keras >= 3.13 \(the oldest versions it "
                                          r"is tested on\).*restart the runtime"):
        versions.check_versions()


@pytest.mark.parametrize("tf_version, keras_version", [("2.20.0", "3.13.2"), ("2.21.0", "3.15.1")])
def test_check_versions_accepts_both_tested_runtimes(monkeypatch, tf_version, keras_version):
    monkeypatch.setattr(importlib.import_module("tensorflow"), "__version__", tf_version)
    monkeypatch.setattr(importlib.import_module("keras"), "__version__", keras_version)
    assert versions.check_versions() is None  # no CourseError


def test_versions_line_shows_found_beside_the_tested_combinations(monkeypatch):
    monkeypatch.setattr(importlib.import_module("keras"), "__version__", "3.14.0")
    monkeypatch.setattr(importlib.import_module("tensorflow"), "__version__", "2.20.1")
    line = versions.versions_line()
    assert line.startswith(f"Versions: TensorFlow 2.20.1 + Keras 3.14.0 + Python {sys.version_info.major}."
                           f"{sys.version_info.minor}.")
    assert line.endswith("(tested: TensorFlow 2.20.0 + Keras 3.13.2 + Python 3.13 as on Colab, "
                         "TensorFlow 2.20.0 + Keras 3.13.2 + Python 3.12 as on Kaggle, "
                         "and TensorFlow 2.21.0 + Keras 3.15.1 + Python 3.12)")


NO_ACCELERATOR_NOTE = r"No GPU or TPU in this runtime, so this notebook runs at fast sizes.*FAST = \"full\""


@pytest.mark.parametrize("requested, env, accelerator, fast, note", [
    (None, None, "1 GPU(s)", False, None),  # auto with a GPU: full size
    ("auto", None, "a TPU", False, None),
    (None, None, None, True, NO_ACCELERATOR_NOTE),  # auto on a CPU: never a full run by accident
    ("auto", None, None, True, NO_ACCELERATOR_NOTE),
    (None, "1", "1 GPU(s)", True, None),  # COURSE_FAST decides when set
    (None, "0", None, False, r"Full mode on a CPU only"),
    (True, "0", None, True, None),  # the argument wins over the environment
    ("fast", None, "1 GPU(s)", True, None),
    (False, None, "1 GPU(s)", False, None),
    ("full", "1", None, False, r"Full mode on a CPU only.*FAST = \"fast\".*T4 GPU"),
])
def test_choose_fast(monkeypatch, requested, env, accelerator, fast, note):
    if env is None:
        monkeypatch.delenv("COURSE_FAST", raising=False)
    else:
        monkeypatch.setenv("COURSE_FAST", env)
    chosen, message = course.choose_fast(requested, accelerator)
    assert chosen is fast
    if note is None:
        assert message is None
    else:
        assert re.search(note, message)


def test_setup_on_a_tpu_runtime_without_tensorflow_points_to_chapters_5_and_9(monkeypatch):
    # Colab's TPU runtime has no TensorFlow: setup() must say where the TPU works, not raise a ModuleNotFoundError.
    import helpers.devices

    monkeypatch.delitem(sys.modules, "helpers.devices")  # so that importing it again would import TensorFlow
    monkeypatch.delattr(helpers, "devices")
    monkeypatch.setitem(sys.modules, "tensorflow", None)
    with pytest.raises(CourseError, match=r"^This chapter needs TensorFlow.*chapters 5 and 9 run on the TPU") as caught:
        helpers.setup(verbose=False)
    assert "pip install" not in str(caught.value)


def test_check_versions_without_tensorflow_says_in_one_line_which_runtime_to_switch_to(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorflow", None)
    with pytest.raises(CourseError) as caught:
        versions.check_versions()
    message = str(caught.value)
    # one line: `make replica P=colab-tpu` checks the same in every chapter that needs TensorFlow
    assert "\n" not in message
    assert message.startswith("This chapter needs TensorFlow, which this runtime (e.g. Colab's TPU runtime) does not "
                              "have: switch to a runtime with it (")
    assert "Colab: Runtime > Change runtime type > T4 GPU or CPU; Kaggle: Settings > Accelerator > GPU T4 x2" in message
    assert "locally, `make setup`" in message
    assert message.endswith("; chapters 5 and 9 run on the TPU runtime as it is (Keras on JAX).")
    # No install: TensorFlow's TPU build would replace the libtpu that the runtime's JAX uses.
    assert "pip install" not in message and "tensorflow-tpu" not in message


def test_check_versions_with_a_tensorflow_that_fails_to_import_shows_why_in_one_line(monkeypatch):
    def broken():
        raise ImportError("Failed to load the native TensorFlow runtime.\nlibcudart.so.12: cannot open shared object")

    monkeypatch.setattr(versions, "import_tensorflow_quietly", broken)
    with pytest.raises(CourseError, match=r"^This chapter needs TensorFlow, which this runtime \(e.g. Colab's TPU "
                                          r"runtime\) does not have \(Failed to load the native TensorFlow runtime. "
                                          r"libcudart.so.12: cannot open shared object\): switch to [^\n]*$"):
        versions.check_versions()


def test_import_helpers_and_chapter_9_never_import_tensorflow_nor_print_an_install(no_tensorflow):
    # Colab's TPU runtime has JAX and no TensorFlow: chapter 9's setup and imports must not need it.
    found = run_python("""
import contextlib, io, json, sitecustomize
printed = io.StringIO()
with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
    import helpers
    after_import = list(sitecustomize.tried)
    course = helpers.setup(fast="auto", devices=2, backend="jax")  # chapter 9's setup cell
    after_setup = list(sitecustomize.tried)
    import keras, jax  # chapter 9's device cell, then what its cells import
    from helpers.chapters.ch01_single_gpu import reuters_conv1d
    from helpers.chapters.ch09_bigger_than_one_device import largest_batch
    import helpers.memory
    import helpers.exercises
    reuters_conv1d()
print(json.dumps({"import": after_import, "setup": after_setup, "fast": course.fast, "backend": keras.backend.backend(),
                  "tried": sitecustomize.tried, "printed": printed.getvalue()}))
""", PYTHONPATH=f"{no_tensorflow}{os.pathsep}{ROOT}", KERAS_BACKEND="tensorflow", COURSE_FAST="1")
    assert found["import"] == [] and found["setup"] == []  # never even tried
    assert found["fast"] is True and found["backend"] == "jax"
    # Keras on JAX looks for TensorFlow (to seed it, to read tf.data) and goes on without it; no module of ours does.
    assert all(name == "tensorflow" for name in found["tried"])
    assert "Versions: Keras" in found["printed"] and "pip install" not in found["printed"]
    found = run_python("""
import json, sitecustomize, helpers
try:
    helpers.setup()  # chapters 0-8, with the TensorFlow backend
except helpers.CourseError as err:
    print(json.dumps({"tried": sitecustomize.tried, "error": str(err)}))
""", PYTHONPATH=f"{no_tensorflow}{os.pathsep}{ROOT}", COURSE_FAST="1")
    assert found["tried"] == ["tensorflow"]
    assert found["error"].startswith("This chapter needs TensorFlow, which this runtime (e.g. Colab's TPU runtime) "
                                     "does not have: ") and "chapters 5 and 9 run on the TPU runtime" in found["error"]
    assert "pip install" not in found["error"]


def test_no_helper_and_no_notebook_code_names_tensorflows_tpu_install():
    # tensorflow-tpu pins its own libtpu: installing it on a TPU runtime replaces the one the runtime's JAX uses.
    import nbformat

    banned = ("pip install tensorflow-tpu", "libtpu-tf-releases")
    sources = {str(path): path.read_text(encoding="utf-8") for path in (ROOT / "helpers").rglob("*.py")}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type == "code":
                printed = "".join(output.get("text", "") for output in cell.outputs)
                sources[f"{path.name} cell {i}"] = cell.source + printed
    assert len(sources) > 50
    found = [where for where, text in sources.items() if any(words in text for words in banned)]
    assert found == []


def test_quiet_logs_sets_error_level_and_ignores_shuffle_warning():
    import tensorflow as tf

    tf_logger, absl_logger = tf.get_logger(), logging.getLogger("absl")
    old = tf_logger.level, absl_logger.level
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            quiet.quiet_logs()
            warnings.warn("`shuffle=True` was passed, but ignored", UserWarning, stacklevel=1)
            warnings.warn("something else", UserWarning, stacklevel=1)
        assert [str(w.message) for w in caught] == ["something else"]
        assert tf_logger.level == logging.ERROR
        assert absl_logger.level == logging.ERROR
    finally:
        tf_logger.setLevel(old[0])
        absl_logger.setLevel(old[1])


def test_course_pick_and_str():
    fast = Course(fast=True, devices=2, logical_devices=("/device:CPU:0", "/device:CPU:1"))
    full = dataclasses.replace(fast, fast=False)
    assert fast.pick(full=10, fast=2) == 2
    assert full.pick(full=10, fast=2) == 10
    assert str(fast) == (
        "fast mode ON (small data, few epochs); 2 logical devices: /device:CPU:0, /device:CPU:1"
    )
    assert str(full).startswith("fast mode off (full size); 2 logical devices")
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.fast = False


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"fast": "yes"}, r"setup\(fast='yes'\): use \"auto\" \(or None\), \"fast\" \(or True\) or \"full\""),
        ({"fast": 1}, r"setup\(fast=1\)"),
        ({"fast": 0}, r"setup\(fast=0\)"),
        ({"fast": ["fast"]}, r"setup\(fast=\['fast'\]\)"),
        ({"devices": 0}, r"setup\(devices=0\).*from 1 to 16"),
        ({"devices": True}, r"setup\(devices=True\)"),
        ({"devices": 17}, r"setup\(devices=17\)"),
        ({"devices": 2.0}, r"setup\(devices=2.0\)"),
        ({"seed": -1}, r"setup\(seed=-1\): use a whole number >= 0\."),
        ({"seed": True}, r"setup\(seed=True\)"),
        ({"seed": 1.5}, r"setup\(seed=1.5\)"),
        # A kernel that imported other helpers before the setup cell installed this release keeps them.
        ({"version": "9.9.9"}, r"setup\(version='9.9.9'\): this runtime imported the course's helpers \d+\.\d+\.\d+ "
                               r"before the setup cell installed 9.9.9. Restart it \(Colab: Runtime > Restart session"),
    ],
)
def test_setup_rejects_bad_arguments(kwargs, message):
    with pytest.raises(CourseError, match=message):
        helpers.setup(verbose=False, **kwargs)


@pytest.mark.parametrize(
    "var, value, message",
    [
        ("COURSE_FAST", "maybe", r"COURSE_FAST='maybe' is not a yes/no value"),
        ("COURSE_DEVICES", "two", r"COURSE_DEVICES='two' is not a whole number"),
        ("COURSE_DEVICES", "0", r"setup\(devices=0\)"),
    ],
)
def test_setup_rejects_bad_environment(monkeypatch, var, value, message):
    monkeypatch.setenv(var, value)
    with pytest.raises(CourseError, match=message):
        helpers.setup(verbose=False)


def test_setup_accepts_the_version_of_the_helpers_it_runs(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICES", "1")
    assert helpers.setup(verbose=False, version=helpers.__version__).devices == 1


def test_setup_arguments_override_environment(monkeypatch):
    monkeypatch.setenv("COURSE_FAST", "maybe")  # not read: the argument wins
    monkeypatch.setenv("COURSE_DEVICES", "nope")
    result = helpers.setup(fast=False, devices=1, verbose=False)
    assert result.fast is False
    assert result.devices == 1


def test_setup_in_process_with_one_device(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_FAST", "1")
    result = helpers.setup()
    assert result == Course(fast=True, devices=1, logical_devices=("/device:CPU:0",))
    first, second = capsys.readouterr().out.splitlines()
    assert first == "Course setup: fast mode ON (small data, few epochs); 1 logical device: /device:CPU:0"
    assert re.fullmatch(r"Versions: TensorFlow [\d.]+ \+ Keras [\d.]+ \+ Python [\d.]+ \(tested: TensorFlow 2\.20\.0 "
                        r"\+ Keras 3\.13\.2 \+ Python 3\.13 as on Colab, TensorFlow 2\.20\.0 .* as on Kaggle, "
                        r"and TensorFlow 2\.21\.0 .*\)", second), second
    helpers.setup(verbose=False)
    assert capsys.readouterr().out == ""


def test_setup_seeds_random_generators():
    helpers.setup(devices=1, seed=7, verbose=False)
    first = np.random.rand(3)
    helpers.setup(devices=1, seed=7, verbose=False)
    assert np.array_equal(np.random.rand(3), first)
    helpers.setup(devices=1, seed=8, verbose=False)
    assert not np.array_equal(np.random.rand(3), first)


SETUP_AFTER_INIT = """
import json
import tensorflow as tf
tf.constant(1.0)  # initialises the runtime, as a learner's early cell would
import helpers
out = {}
try:
    helpers.setup(devices=2, verbose=False)
    out["split2"] = "no error"
except helpers.CourseError as err:
    out["split2"] = str(err)
out["same"] = list(helpers.setup(devices=1, verbose=False).logical_devices)
print(json.dumps(out))
"""


def test_setup_after_runtime_initialised_asks_for_restart():
    out = run_python(SETUP_AFTER_INIT)
    assert out["split2"].startswith(
        "split_device(2): this runtime already has 1 logical CPU device(s)."
    )
    assert "Restart the runtime" in out["split2"]
    assert "TensorFlow said:" in out["split2"]
    assert out["same"] == ["/device:CPU:0"]  # asking for what it already has is harmless


def test_every_plumbing_module_loads_on_first_use_and_nothing_else_does():
    folder = Path(helpers.__file__).parent
    on_disk = {p.stem for p in folder.glob("*.py")} - {"__init__", "bench"} | {"exercises"}  # a package of its own
    assert (folder / "exercises" / "__init__.py").is_file()
    assert set(helpers.PLUMBING) == on_disk  # a new plumbing module must be listed, a deleted one dropped
    for name in helpers.PLUMBING:
        assert getattr(helpers, name) is importlib.import_module(f"helpers.{name}")
    with pytest.raises(AttributeError, match="module 'helpers' has no attribute 'nope'"):
        helpers.nope  # noqa: B018


def test_importing_the_package_imports_neither_tensorflow_nor_chapter_code():
    loaded = run_python("import json, sys, helpers; print(json.dumps(sorted(m for m in sys.modules if m in "
                        "('tensorflow', 'keras') or m.startswith(('helpers.chapters', 'helpers.bench', "
                        "'helpers.programs')))))")
    assert loaded == []


GROWTH_IN_CHILD = """
import json, os, subprocess, sys
import helpers
child = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('TF_FORCE_GPU_ALLOW_GROWTH'))"],
                       capture_output=True, text=True).stdout.strip()
print(json.dumps({"child": child}))
"""


def test_processes_started_after_import_take_gpu_memory_as_needed(monkeypatch):
    # A benchmark or worker started beside the kernel must not find the GPU's memory all taken.
    monkeypatch.delenv("TF_FORCE_GPU_ALLOW_GROWTH", raising=False)
    assert run_python(GROWTH_IN_CHILD) == {"child": "true"}


@pytest.mark.parametrize("value, minimum, maximum, message", [
    (0, 1, None, r"f\(n=0\): use a whole number >= 1\.$"),
    (True, 0, None, r"f\(n=True\): use a whole number >= 0\.$"),
    (2.0, 1, None, r"f\(n=2\.0\): use a whole number >= 1\.$"),
    ("3", 1, None, r"f\(n='3'\): use a whole number >= 1\.$"),
    (9, 1, 8, r"f\(n=9\): use a whole number from 1 to 8\.$"),
])
def test_whole_number_names_the_call_and_the_allowed_range(value, minimum, maximum, message):
    with pytest.raises(CourseError, match=message):
        errors.whole_number("f(n=", value, minimum, maximum)


def test_whole_number_returns_a_good_value_and_adds_the_hint():
    assert errors.whole_number("f(n=", 8, 1, 8) == 8
    with pytest.raises(CourseError, match=r"f\(n=0\): use a whole number >= 1 tokens, e.g. 300\.$"):
        errors.whole_number("f(n=", 0, hint=" tokens, e.g. 300")


def test_missing_requirements_compares_installed_versions():
    numpy_version = importlib.metadata.version("numpy")
    assert installs.missing_requirements([f"numpy=={numpy_version}", "numpy>=1.0"]) == []
    assert installs.missing_requirements(["numpy==0.0.1", "no-such-package-here>=1"]) == [
        "numpy==0.0.1", "no-such-package-here>=1"]


def test_ensure_installed_says_when_nothing_is_missing(capsys, monkeypatch):
    import subprocess

    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("pip must not run"))
    installs.ensure_installed(["numpy>=1.0"], why="tests")
    assert capsys.readouterr().out == "Already installed: numpy>=1.0 (tests).\n"


def test_ensure_installed_runs_pip_for_what_is_missing_and_explains_a_failure(capsys, monkeypatch):
    import subprocess

    calls = []

    def fake_pip(cmd, **kwargs):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution found for nope>=1\n")

    monkeypatch.setattr(subprocess, "run", fake_pip)
    with pytest.raises(CourseError, match=r"(?s)pip could not install nope>=1:\nERROR: No matching distribution.*Turn "
                                          r"internet access on.*run `pip install nope>=1` yourself"):
        installs.ensure_installed(["numpy>=1.0", "nope>=1"], why="tests")
    assert calls == [[sys.executable, "-m", "pip", "install", "-q", "nope>=1"]]
    assert capsys.readouterr().out == "Installing nope>=1 (tests) ...\n"
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kwargs: subprocess.CompletedProcess(cmd, 0, "", ""))
    installs.ensure_installed(["nope>=1"], why="tests")
    assert capsys.readouterr().out.endswith("Installed.\n")



@pytest.mark.parametrize("level, shown", [("2", ""), (None, ""), ("0", "oneDNN notice\n"), ("1", "oneDNN notice\n")])
def test_tensorflow_is_imported_without_its_native_import_time_lines(tmp_path, level, shown):
    # A stand-in TensorFlow that, like TensorFlow 2.21 on CPUs where oneDNN is on, writes to file descriptor 2 as
    # it is imported. helpers/__init__ sets TF_CPP_MIN_LOG_LEVEL=2 unless the learner set it.
    (tmp_path / "tensorflow.py").write_text("import os\nos.write(2, b'oneDNN notice\\n')\n")
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    env.update(PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}", **({"TF_CPP_MIN_LOG_LEVEL": level} if level else {}))
    code = "import helpers; from helpers.quiet import import_tensorflow_quietly as q; q(); q(); print('imported')"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "imported\n", shown)


@pytest.mark.parametrize("level, silenced, version, xla", [("2", True, "2.20.0", True), ("0", False, "2.20.0", True),
                                                      ("2", True, "2.21.0", False)])
def test_one_time_cpu_notices_are_used_up_silently_at_the_course_log_level(monkeypatch, level, silenced, version, xla):
    blocks = []

    @contextlib.contextmanager
    def recording(silence=True):
        blocks.append(silence)
        yield

    monkeypatch.setattr(quiet, "native_stderr_silenced", recording)
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", level)
    import tensorflow as tf

    ran, compiled = [], []
    real_ones, real_function = tf.ones, tf.function
    monkeypatch.setattr(tf, "ones", lambda shape, dtype: ran.append(dtype) or real_ones(shape, dtype))
    monkeypatch.setattr(tf, "function", lambda fn, **kw: compiled.append(kw) or real_function(fn, **kw))
    monkeypatch.setattr(tf, "__version__", version)  # 2.21 no longer logs XLA's one-time line: nothing to use up
    quiet.use_up_one_time_cpu_notices()
    assert blocks == [silenced] and ran == [tf.float16, *[tf.float32] * xla]
    assert compiled == [{"jit_compile": True}] * xla
