"""`make replica P=colab|kaggle|colab-tpu`'s decisions: what counts as the course install changing the
platform, which versions the replicas pin, a notebook run by the wrong kernel, and on the TPU runtime (no TensorFlow)
which chapters run and how the others must stop."""

import json
import sys
import zipfile
from pathlib import Path

import pytest

from tools import replica

COLAB, KAGGLE, COLAB_TPU = (replica.PLATFORMS[key] for key in ("colab", "kaggle", "colab-tpu"))


def test_changed_packages_names_every_change_but_the_course_itself():
    before = {"ipywidgets": "7.7.1", "numpy": "2.1.3", "keras": "3.13.2"}
    after = {"ipywidgets": "8.1.9", "numpy": "2.1.3", "jaraco-functools": "9.9", "tf-fast-course": "0.1.0"}
    shipped = COLAB.published()["jaraco-functools"]
    assert replica.changed_packages(before, after, COLAB) == [
        "ipywidgets: 7.7.1 -> 8.1.9", f"jaraco-functools: absent -> 9.9 (Colab ships {shipped}: pin it in colab.txt)",
        "keras: 3.13.2 -> absent"]


def test_an_added_package_kaggle_ships_is_named_with_kaggle_s_version_and_pins_file():
    # comm is not in the Colab image Kaggle builds on; Kaggle's requirements add it (unpinned, so no version
    # there), but ipywidgets 8.1.5 is pinned only in Kaggle's requirements.
    assert replica.changed_packages({}, {"ipywidgets": "8.1.7"}, KAGGLE) == [
        "ipywidgets: absent -> 8.1.7 (Kaggle ships 8.1.5: pin it in kaggle.txt)"]


@pytest.mark.parametrize("platform", [COLAB, KAGGLE])
def test_new_packages_the_platform_does_not_ship_are_no_change(platform):
    before = {"numpy": "2.1.3"}
    after = {**before, "tf-fast-course": "0.1.0", "xprof": "2.22.2", "gviz-api": "1.10.0"}
    assert replica.changed_packages(before, after, platform) == []


def test_freeze_lines_are_compared_by_normalized_name():
    lines = ["# a comment", "jaraco.functools==4.6.0", "pyasn1_modules==0.4.2", "x @ file:///y", "fastcore<2"]
    assert replica.versions(lines) == {"jaraco-functools": "4.6.0", "pyasn1-modules": "0.4.2"}


@pytest.mark.parametrize("platform", [COLAB, KAGGLE])
def test_packages_the_replica_does_not_pin_are_named(platform):
    installed = {"numpy": "2.1.3", "pip": "24.1.2", "left-pad": "1.0"}
    assert replica.unpinned_packages(installed, platform) == ["left-pad==1.0"]


def test_kaggle_s_own_pins_override_the_colab_image_s():
    published = KAGGLE.published()
    assert published["ipywidgets"] == "8.1.5" and published["nbconvert"] == "6.4.5"
    assert published["jupyter-server"] == "2.12.5" and published["numpy"] == "2.0.2"


def test_the_colab_replica_pins_only_colab_s_published_versions():
    """colab.txt is a subset of Colab's published list at the same versions, but for its two stand-ins."""
    published, pins = COLAB.published(), replica.versions(COLAB.pins.read_text().splitlines())
    differ = {name: (version, published.get(name)) for name, version in pins.items() if published.get(name) != version}
    assert differ == {"tensorflow-cpu": ("2.20.0", None), "jedi": (pins["jedi"], None)}
    assert published["tensorflow"] == "2.20.0"


def test_the_kaggle_replica_pins_only_kaggle_s_published_versions():
    """kaggle.txt is a subset of Kaggle's lists at the same versions, but for the stand-in TensorFlow and the
    packages Kaggle's build resolved without naming a version (kaggle.txt says why each has its version)."""
    published, pins = KAGGLE.published(), replica.versions(KAGGLE.pins.read_text().splitlines())
    differ = {name: (version, published.get(name)) for name, version in pins.items() if published.get(name) != version}
    resolved = {"comm", "jedi", "widgetsnbextension", "mistune", "nbclient", "testpath"}
    assert differ.pop("tensorflow-cpu") == ("2.20.0", None) and published["tensorflow"] == "2.20.0"
    assert set(differ) <= resolved, sorted(set(differ) - resolved)
    text = KAGGLE.pins.read_text()
    assert all(f"# {name}" in text for name in differ), "each resolved version needs a comment saying where it is from"


@pytest.mark.parametrize("platform", [COLAB, KAGGLE])
def test_the_profile_extra_s_new_packages_are_uninstalled_before_each_replica_run(platform):
    assert replica.profile_packages(platform) == ["xprof"]  # TensorBoard ships on both: never uninstalled


@pytest.mark.parametrize("platform, python", [(COLAB, "3.13.0"), (KAGGLE, "3.12.1")])
def test_a_notebook_run_by_other_versions_is_named(tmp_path, platform, python):
    tf, keras = platform.pinned("tensorflow-cpu"), platform.pinned("keras")
    good, other, other_python = (tmp_path / f"0{i}_x.ipynb" for i in range(3))
    good.write_text(f'"Versions: TensorFlow {tf} + Keras {keras} + Python {python} (tested: ...)"')
    other.write_text(f'"Versions: TensorFlow 2.21.0 + Keras {keras} + Python {python} (tested: ...)"')
    other_python.write_text(f'"Versions: TensorFlow {tf} + Keras {keras} + Python 3.11.7 (tested: ...)"')
    missing = tmp_path / "03_x.ipynb"
    assert replica.not_run_on_the_replica([good, other, other_python, missing], platform) == [
        "01_x.ipynb", "02_x.ipynb", "03_x.ipynb"]


@pytest.mark.parametrize("platform, python", [(COLAB, "3.13.0"), (KAGGLE, "3.12.1")])
def test_a_jax_chapter_run_by_another_keras_or_jax_is_named(tmp_path, platform, python):
    keras, jax = platform.pinned("keras"), platform.pinned("jax")
    good, newer_jax = tmp_path / "09_a.ipynb", tmp_path / "09_b.ipynb"
    good.write_text(f'"Versions: Keras {keras} on JAX {jax} (backend jax), Python {python}"')
    newer_jax.write_text(f'"Versions: Keras {keras} on JAX 0.10.2 (backend jax), Python {python}"')
    assert replica.not_run_on_the_replica([good, newer_jax], platform) == ["09_b.ipynb"]


def test_the_replicas_pin_what_the_platforms_ship_for_the_course_s_packages():
    colab = replica.versions(COLAB.pins.read_text().splitlines())
    assert colab["ipywidgets"] == "7.7.1" and colab["keras"] == "3.13.2" and colab["numpy"] == "2.1.3"
    kaggle = replica.versions(KAGGLE.pins.read_text().splitlines())
    assert kaggle["ipywidgets"] == "8.1.5" and kaggle["keras"] == "3.13.2" and kaggle["numpy"] == "2.0.2"
    assert kaggle["jax"] == "0.7.2" and kaggle["jaxlib"] == "0.7.2"
    for pins in colab, kaggle:  # the CPU build stands in for the GPU one
        assert pins["tensorflow-cpu"] == "2.20.0" and "tensorflow" not in pins


def test_each_platform_has_its_own_venv_build_folder_and_python():
    assert (COLAB.venv.name, COLAB.build.name, COLAB.python) == (".venv-colab", "colab", "3.13")
    assert (KAGGLE.venv.name, KAGGLE.build.name, KAGGLE.python) == (".venv-kaggle", "kaggle", "3.12")
    assert COLAB.profile_tab and not KAGGLE.profile_tab  # chapter 8 tells Kaggle learners to download the logs
    assert (COLAB_TPU.venv.name, COLAB_TPU.build.name, COLAB_TPU.python) == (".venv-colab-tpu", "colab-tpu", "3.13")
    # No TensorFlow there (chapter 8 does not run); 8 host devices stand in for a v5e-8's chips.
    assert (COLAB_TPU.tensorflow, COLAB_TPU.profile_tab, COLAB_TPU.devices) == (False, False, 8)
    assert COLAB.tensorflow and KAGGLE.tensorflow and COLAB.devices == KAGGLE.devices == 2


def test_the_platform_s_python_is_found_by_tools_find_python(monkeypatch):
    asked = []
    monkeypatch.setattr(replica.subprocess, "run", lambda args, **kwargs: asked.append(args) or
                        replica.subprocess.CompletedProcess(args, 1, "", "No Python 3.12 found. Install one"))
    with pytest.raises(SystemExit, match=r"make replica P=kaggle: Kaggle's Python is needed. No Python 3.12 found. "
                                         "Install one"):
        replica.find_python(KAGGLE)
    assert asked == [[replica.ROOT / "tools" / "find-python", "3.12"]]


@pytest.mark.parametrize("uv, bytecode", [(None, None), (None, "1"), ("/ci/uv", None), ("/ci/uv", "1")])
def test_the_venv_gets_exactly_the_pins_through_pip_or_uv(monkeypatch, tmp_path, uv, bytecode):
    monkeypatch.setattr(replica, "ROOT", tmp_path)
    for name, value in {"UV": uv, "PYTHONDONTWRITEBYTECODE": bytecode}.items():
        monkeypatch.setenv(name, value) if value else monkeypatch.delenv(name, raising=False)
    commands = []
    monkeypatch.setattr(replica, "run", lambda *args, **kwargs: commands.append([str(a) for a in args]))
    monkeypatch.setattr(replica, "freeze", lambda python: {"numpy": "2.1.3", "surprise": "1.0"})
    with pytest.raises(SystemExit, match=r"misses what these packages' dependencies pulled in: surprise==1\.0"):
        replica.build_environment(COLAB, "python3.13")
    venv_python = str(tmp_path / ".venv-colab" / "bin" / "python")
    installs = commands[1:]
    assert commands[0] == ["python3.13", "-m", "venv", str(tmp_path / ".venv-colab")]
    if uv:  # one install, the pip pin included (uv installs pip like any package)
        assert installs == [[uv, "pip", "install", "-q", "--python", venv_python,
                             *(["--compile-bytecode"] if bytecode else []), "-r", str(COLAB.pins)]]
    else:
        assert installs[0][-1] == f"pip=={COLAB.pinned('pip')}" and installs[1][-2:] == ["-r", str(COLAB.pins)]
        assert ("--no-compile" in installs[1]) == (not bytecode) and installs[1][0] == venv_python
    assert not (tmp_path / ".venv-colab" / ".pins").exists()  # a venv with more than the pins is built again


@pytest.mark.parametrize("key", ["colab", "kaggle", "colab-tpu"])
def test_environment_only_builds_the_venv_and_stops(monkeypatch, key):
    built = []
    monkeypatch.setattr(replica, "build_environment", lambda platform, python: built.append((platform.key, python)))
    monkeypatch.setattr(replica, "install_course", lambda *args: pytest.fail("the course was installed"))
    assert replica.main(["--platform", key, "--environment-only", "--python", "python3.x"]) == 0
    assert built == [(key, "python3.x")]


def test_an_unknown_platform_is_refused(capsys):
    with pytest.raises(SystemExit):
        replica.main(["--platform", "sagemaker", "--environment-only"])
    err = capsys.readouterr().err
    assert "invalid choice: 'sagemaker'" in err and "colab" in err and "kaggle" in err


def notebook(path, setup_source):
    cells = [{"cell_type": "markdown", "source": ["# Title"]}, {"cell_type": "code", "source": ["FAST = 1"]},
             {"cell_type": "code", "source": setup_source}]
    path.write_text(json.dumps({"cells": cells}))
    return path


def test_the_version_the_notebooks_setup_cells_install_is_the_one_installed(tmp_path):
    setup = ["import os\n", 'VERSION, SOURCE = "1.2.3", os.environ.get("COURSE_SOURCE", "")\n']
    paths = [notebook(tmp_path / f"0{i}.ipynb", setup) for i in range(2)]
    assert replica.release(paths) == "1.2.3"


def test_notebooks_naming_different_versions_are_named(tmp_path):
    first = notebook(tmp_path / "00_a.ipynb", ['VERSION, SOURCE = "1.0.0", ""\n'])
    second = notebook(tmp_path / "01_b.ipynb", ['VERSION, SOURCE = "1.0.1", ""\n'])
    unversioned = notebook(tmp_path / "02_c.ipynb", ["import helpers\n"])
    with pytest.raises(SystemExit, match=r"name no single VERSION \(1.0.0: 00_a.ipynb; 1.0.1: 01_b.ipynb; None: "
                                         r"02_c.ipynb\): run `make template`"):
        replica.release([first, second, unversioned])


def test_the_course_s_notebooks_install_the_version_of_their_helpers():
    import helpers

    assert replica.release(sorted((replica.ROOT / "notebooks").glob("*.ipynb"))) == helpers.__version__


def test_the_wheel_is_built_from_the_tree_without_touching_it(tmp_path):
    import helpers

    def leftovers():  # what setuptools writes where it builds (other files come and go: CI runs replicas beside)
        return sorted(map(str, [*replica.ROOT.glob("*.egg-info"), *replica.ROOT.glob("build/lib"),
                                *replica.ROOT.glob("build/bdist.*")]))

    before = leftovers()
    wheel = replica.build_wheel(Path(sys.executable), tmp_path, isolation=False)  # .venv's setuptools, offline
    assert wheel.name == f"tf_fast_course-{helpers.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "helpers/course.py" in names and "helpers/chapters/ch01_single_gpu.py" in names
    # Colab and Kaggle get the helpers from this wheel: a package missing here is missing there.
    packages = {str(init.parent.relative_to(replica.ROOT)) for init in (replica.ROOT / "helpers").rglob("__init__.py")}
    assert packages <= {name.rpartition("/")[0] for name in names}
    assert not any("__pycache__" in name or name.startswith("tests/") for name in names)
    assert leftovers() == before  # nothing of the build left in the clone


def test_the_notebooks_run_outside_the_clone_and_their_own_installs_are_checked(monkeypatch, tmp_path, capsys):
    import contextlib

    source = notebook(tmp_path / "00_a.ipynb", ['VERSION, SOURCE = "1.2.3", ""\n'])
    monkeypatch.setattr(replica, "ROOT", tmp_path / "clone")
    monkeypatch.setattr(replica, "build_wheel", lambda python, out: out / "tf_fast_course-1.2.3-py3-none-any.whl")
    monkeypatch.setattr(replica.servers, "package_index", contextlib.contextmanager(
        lambda wheels: iter([f"http://index/{wheels[0].name}"])))
    monkeypatch.setattr(replica, "build_environment", lambda platform, python: "venv-python")
    installed = []
    monkeypatch.setattr(replica, "install_course", lambda platform, python, first, version, env: (
        installed.append((env["COURSE_SOURCE"], first.name, str(first.parent), version))
        or ({"cryptography": "43.0.3"}, [])))
    monkeypatch.setattr(replica, "freeze", lambda python: {"cryptography": "50.0.2"})  # as chapter 8's XProf did
    runs = []

    def run_notebooks(args, env, cwd, check):
        runs.append((env["COURSE_SOURCE"], cwd, [str(a) for a in args[1:3]], Path(args[-1]).parent))
        build = tmp_path / "clone" / "build" / "kaggle"
        build.mkdir(parents=True)
        (build / "00_a.ipynb").write_text('"Versions: TensorFlow 2.20.0 + Keras 3.13.2 + Python 3.12.1 (tested"')
        return replica.subprocess.CompletedProcess(args, 0)

    monkeypatch.setattr(replica.subprocess, "run", run_notebooks)
    assert replica.main(["--platform", "kaggle", "--python", "python3.12", str(source)]) == 1
    [(index, cwd, command, folder)] = runs
    # The first notebook's setup cell, outside the clone, installs the version it names from the wheel's index.
    assert installed == [("http://index/tf_fast_course-1.2.3-py3-none-any.whl", "00_a.ipynb", str(folder), "1.2.3")]
    # The course's executor, run from the clone, on copies outside it (each kernel starts in its notebook's folder).
    assert command == ["-m", "tools.run_notebooks"] and cwd == replica.ROOT
    assert index == installed[0][0] and not str(folder).startswith(str(replica.ROOT))
    out = capsys.readouterr().out
    assert "own installs changed packages the platform installed:\n  cryptography: 43.0.3 -> 50.0.2" in out


@pytest.mark.parametrize("installed, installs", [("1.2.3", True), ("1.2.2", False), (None, False)])
def test_the_course_is_installed_by_the_first_notebook_s_setup_cell_alone(monkeypatch, tmp_path, installed, installs):
    first = notebook(tmp_path / "00_a.ipynb", ["# @title Setup"])
    monkeypatch.setattr(replica, "ROOT", tmp_path / "clone")
    monkeypatch.setattr(replica.subprocess, "run", lambda *args, **kwargs: None)  # the uninstall
    monkeypatch.setattr(replica, "profile_packages", lambda platform: [])
    ran = []
    monkeypatch.setattr(replica, "freeze", lambda python: {"numpy": "2.0.2", **(
        {"tf-fast-course": installed} if ran and installed else {})})
    monkeypatch.setattr(replica, "run", lambda *args, env, cwd: ran.append(json.loads(args[-1].read_text())["cells"]))
    if installs:
        assert replica.install_course(replica.PLATFORMS["kaggle"], "python", first, "1.2.3", {}) == (
            {"numpy": "2.0.2"}, [])
    else:
        with pytest.raises(SystemExit, match="the setup cell did not install tf-fast-course 1.2.3"):
            replica.install_course(replica.PLATFORMS["kaggle"], "python", first, "1.2.3", {})
    [cells] = ran
    assert ["".join(cell["source"]) for cell in cells] == ["FAST = 1", "# @title Setup"]


# Colab's TPU runtime: JAX, no TensorFlow ----------------------------------------------------------------------------


def test_the_tpu_replica_pins_colab_s_tpu_versions_and_no_tensorflow():
    """colab-tpu.txt is a subset of Colab's TPU list at the same versions, but for jedi (its stand-in); it leaves out
    TensorFlow's packages (the runtime has none) and libtpu (it needs a TPU)."""
    published, pins = COLAB_TPU.published(), replica.versions(COLAB_TPU.pins.read_text().splitlines())
    differ = {name: (version, published.get(name)) for name, version in pins.items() if published.get(name) != version}
    assert differ == {"jedi": (pins["jedi"], None)}
    assert not [name for name in pins if name.startswith("tensorflow") or name in ("libtpu", "tf-keras")]
    assert "libtpu" in published and "tensorflow" not in published  # what the header says of Colab's list
    assert (pins["jax"], pins["jaxlib"], pins["keras"]) == ("0.7.2", "0.7.2", "3.13.2")
    assert (pins["numpy"], pins["ipywidgets"]) == ("2.1.3", "7.7.1")
    assert {"ipykernel", "nbclient", "nbconvert", "matplotlib", "psutil", "pillow"} <= set(pins)  # what the run needs


def test_the_tpu_replica_s_published_list_is_colab_s_at_the_commit_its_header_names():
    text = (replica.PLATFORMS_DIR / "colab-tpu-pip-freeze.txt").read_text()
    assert "googlecolab/backend-info," in text and "pip-freeze.tpu.txt at commit a724079" in text
    assert "2026-08-19" in text.splitlines()[1]


def test_jax_chapters_are_those_whose_setup_cell_puts_keras_on_jax(tmp_path):
    jax = notebook(tmp_path / "09_a.ipynb", ["import helpers\n", "\n",
                                             'course = helpers.setup(fast=FAST, version=VERSION, backend="jax")\n'])
    tensorflow = notebook(tmp_path / "01_b.ipynb", ["import helpers\n", "\n",
                                                    "course = helpers.setup(fast=FAST, version=VERSION)\n"])
    cells = json.loads(tensorflow.read_text())
    cells["cells"].append({"cell_type": "code", "source": ['os.environ["KERAS_BACKEND"] = "jax"  # backend="jax"']})
    later = tmp_path / "07_c.ipynb"
    later.write_text(json.dumps(cells))  # a later cell on JAX does not make the chapter a JAX one
    assert [replica.jax_chapter(path) for path in (jax, tensorflow, later)] == [True, False, False]


def test_the_course_s_jax_chapters_are_found_in_the_notebooks_themselves():
    notebooks = replica.ROOT / "notebooks"
    assert replica.jax_chapter(notebooks / "09_bigger_than_one_device.ipynb")
    assert not replica.jax_chapter(notebooks / "00_runtime_and_accelerators.ipynb")
    assert not replica.jax_chapter(notebooks / "01_single_gpu.ipynb")


def executed(*outputs):
    """An executed notebook of a chapter's parameters and setup cells, the setup cell's outputs as given."""
    return {"cells": [{"cell_type": "code", "source": "FAST = 1", "outputs": []},
                      {"cell_type": "code", "source": "course = helpers.setup()", "outputs": list(outputs)}]}


def error(ename, evalue):
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": ["..."]}


def test_the_course_s_own_message_without_tensorflow_is_a_stop_the_tpu_replica_accepts(monkeypatch):
    from helpers import CourseError, versions

    monkeypatch.setitem(sys.modules, "tensorflow", None)
    with pytest.raises(CourseError) as caught:
        versions.check_versions()
    assert replica.stop_problems(executed(error("CourseError", str(caught.value)))) == []


ONE_LINE = ("This chapter needs TensorFlow (Colab: Runtime > Change runtime type > T4 GPU; Kaggle: Settings > "
            "Accelerator > GPU T4 x2).")


@pytest.mark.parametrize("outputs, problem", [
    ([], "the setup cell did not stop: without TensorFlow it must say which runtime to switch to"),
    ([error("CourseError", "TensorFlow is missing.\nColab: Runtime > Change runtime type; Kaggle: Settings > "
                           "Accelerator")], "its CourseError takes 2 lines, not one: TensorFlow is missing."),
    ([error("CourseError", "TensorFlow is not installed: run `make setup`.")],
     "its CourseError names no runtime to switch to (Runtime > Change runtime type and Settings > Accelerator)"),
    ([error("CourseError", "This chapter needs TensorFlow: Colab: Runtime > Change runtime type > T4 GPU.")],
     "its CourseError names no runtime to switch to"),  # Kaggle's learners are told nothing
    ([error("ModuleNotFoundError", "No module named 'tensorflow'")],
     "the setup cell stopped with ModuleNotFoundError: No module named 'tensorflow', not a CourseError"),
    ([{"output_type": "stream", "name": "stderr", "text": "WARNING: oneDNN is on\n"}, error("CourseError", ONE_LINE)],
     "shows lines on stderr: WARNING: oneDNN is on"),
])
def test_a_stop_that_is_not_one_course_error_line_naming_the_runtime_is_refused(outputs, problem):
    [found] = replica.stop_problems(executed(*outputs))
    assert found.startswith(problem)


def test_a_jax_chapter_on_the_tpu_replica_must_report_its_keras_and_jax(tmp_path):
    keras, jax = COLAB_TPU.pinned("keras"), COLAB_TPU.pinned("jax")
    good, tensorflow = tmp_path / "09_a.ipynb", tmp_path / "05_b.ipynb"
    good.write_text(f'"Versions: Keras {keras} on JAX {jax} (backend jax), Python 3.13.0"')
    tensorflow.write_text(f'"Versions: TensorFlow 2.20.0 + Keras {keras} + Python 3.13.0 (tested: ...)"')
    assert replica.not_run_on_the_replica([good, tensorflow], COLAB_TPU) == ["05_b.ipynb"]


@pytest.mark.parametrize("installed, change, problems", [
    ("1.2.3", {}, []),
    (None, {}, ["the setup cell did not install tf-fast-course 1.2.3"]),
    ("1.2.3", {"numpy": "2.3.0"}, ["numpy: 2.1.3 -> 2.3.0"]),
])
def test_a_chapter_that_needs_tensorflow_runs_its_setup_cells_alone_from_a_runtime_without_the_course(
        monkeypatch, tmp_path, capsys, installed, change, problems):
    first = notebook(tmp_path / "01_b.ipynb", ["course = helpers.setup()"])
    monkeypatch.setattr(replica, "ROOT", tmp_path / "clone")
    uninstalled, ran = [], []
    monkeypatch.setattr(replica.subprocess, "run", lambda args, **kwargs: uninstalled.append(args[-1]))
    monkeypatch.setattr(replica, "freeze", lambda python: {"numpy": "2.1.3", **(change if ran else {}), **(
        {"tf-fast-course": installed} if ran and installed else {})})
    build = tmp_path / "clone" / "build" / "colab-tpu" / "setup-cells"

    def run_notebooks(*args, env, cwd, check, **kwargs):
        assert not check and args[-1].parent == tmp_path  # it fails, in the notebook's folder
        ran.append(json.loads(args[-1].read_text())["cells"])
        build.mkdir(parents=True)
        (build / args[-1].name).write_text(json.dumps(executed(error("CourseError", ONE_LINE))))
        return replica.subprocess.CompletedProcess(args, 1, "01_b_setup_cells.ipynb: FAILED\n", "")

    monkeypatch.setattr(replica, "run", run_notebooks)
    assert replica.stop_without_tensorflow(COLAB_TPU, "python", first, "1.2.3", {}) == problems
    assert uninstalled == ["tf-fast-course"]  # before the cells run: the learner's first run of this chapter
    [cells] = ran
    assert ["".join(cell["source"]) for cell in cells] == ["FAST = 1", "course = helpers.setup()"]
    assert ("FAILED" in capsys.readouterr().out) == bool(problems)  # the run's own report only when it helps
    assert not (tmp_path / "01_b_setup_cells.ipynb").exists()


def test_the_tpu_replica_runs_the_jax_chapters_on_8_devices_and_stops_the_others(monkeypatch, tmp_path, capsys):
    import contextlib

    tensorflow = notebook(tmp_path / "01_a.ipynb", ['VERSION, SOURCE = "1.2.3", ""\n', "helpers.setup()"])
    jax = notebook(tmp_path / "09_b.ipynb", ['VERSION, SOURCE = "1.2.3", ""\n', 'helpers.setup(backend="jax")'])
    monkeypatch.setattr(replica, "ROOT", tmp_path / "clone")
    monkeypatch.setattr(replica, "build_wheel", lambda python, out: out / "tf_fast_course-1.2.3-py3-none-any.whl")
    monkeypatch.setattr(replica.servers, "package_index", contextlib.contextmanager(lambda wheels: iter(["index"])))
    monkeypatch.setattr(replica, "build_environment", lambda platform, python: "venv-python")
    monkeypatch.setattr(replica, "freeze", lambda python: {})
    steps = []
    monkeypatch.setattr(replica, "stop_without_tensorflow", lambda platform, python, path, version, env: (
        steps.append(("stop", path.name, env["COURSE_DEVICES"])) or ["its CourseError takes 2 lines, not one"]))
    monkeypatch.setattr(replica, "install_course", lambda platform, python, first, version, env: (
        steps.append(("install", first.name, env["COURSE_DEVICES"])) or ({}, [])))

    def run_notebooks(args, env, cwd, check):
        steps.append(("run", [Path(a).name for a in args[7:]], env["COURSE_DEVICES"]))
        build = tmp_path / "clone" / "build" / "colab-tpu"
        build.mkdir(parents=True)
        (build / "09_b.ipynb").write_text('"Versions: Keras 3.13.2 on JAX 0.7.2 (backend jax), Python 3.13.0"')
        return replica.subprocess.CompletedProcess(args, 0)

    monkeypatch.setattr(replica.subprocess, "run", run_notebooks)
    assert replica.main(["--platform", "colab-tpu", "--python", "python3.13", str(tensorflow), str(jax)]) == 1
    assert steps == [("stop", "01_a.ipynb", "8"), ("install", "09_b.ipynb", "8"), ("run", ["09_b.ipynb"], "8")]
    out = capsys.readouterr().out
    assert "01_a.ipynb: its CourseError takes 2 lines, not one" in out
    assert "Without TensorFlow, these chapters did not stop as they should: 01_a.ipynb" in out
