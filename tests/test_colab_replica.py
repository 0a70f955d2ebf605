"""`make colab`'s decisions: what counts as the course install changing the platform, and a wrong kernel."""

import pytest

from tools import colab_replica


def test_changed_packages_names_every_change_but_the_course_itself():
    before = {"ipywidgets": "7.7.1", "numpy": "2.1.3", "keras": "3.13.2"}
    after = {"ipywidgets": "8.1.9", "numpy": "2.1.3", "comm": "0.2.3", "tf-fast-course": "0.1.0"}
    published = {"ipywidgets": "7.7.1", "numpy": "2.1.3", "keras": "3.13.2", "comm": "0.2.2"}
    assert colab_replica.changed_packages(before, after, published) == [
        "comm: absent -> 0.2.3 (Colab ships 0.2.2: pin it in colab.txt)", "ipywidgets: 7.7.1 -> 8.1.9",
        "keras: 3.13.2 -> absent"]


def test_new_packages_colab_does_not_ship_are_no_change():
    before = {"numpy": "2.1.3"}
    after = {**before, "tf-fast-course": "0.1.0", "xprof": "2.22.3", "gviz-api": "1.10.0"}
    assert colab_replica.changed_packages(before, after, {"numpy": "2.1.3"}) == []


def test_freeze_lines_are_compared_by_normalized_name():
    lines = ["# a comment", "jaraco.functools==4.6.0", "pyasn1_modules==0.4.2", "x @ file:///y"]
    assert colab_replica.versions(lines) == {"jaraco-functools": "4.6.0", "pyasn1-modules": "0.4.2"}


def test_packages_the_replica_does_not_pin_are_named():
    assert colab_replica.unpinned_packages({"numpy": "2.1.3", "pip": "24.1.2", "left-pad": "1.0"}) == ["left-pad==1.0"]


def test_the_replica_pins_only_colab_s_published_versions():
    """colab.txt is a subset of Colab's published list at the same versions, but for its two stand-ins."""
    published = colab_replica.versions(colab_replica.PUBLISHED.read_text().splitlines())
    pins = colab_replica.versions(colab_replica.PINS.read_text().splitlines())
    differ = {name: (version, published.get(name)) for name, version in pins.items() if published.get(name) != version}
    assert differ == {"tensorflow-cpu": ("2.20.0", None), "jedi": (pins["jedi"], None)}
    assert published["tensorflow"] == "2.20.0"


def test_the_profile_extra_s_new_packages_are_uninstalled_before_each_replica_run():
    assert colab_replica.profile_packages() == ["xprof"]  # TensorBoard is on Colab: never uninstalled


def test_a_notebook_run_by_another_tensorflow_is_named(tmp_path):
    version = colab_replica.pinned("tensorflow-cpu")
    good, other = tmp_path / "00_a.ipynb", tmp_path / "01_b.ipynb"
    good.write_text(f'"Versions: TensorFlow {version} (tested: ...)"')
    other.write_text('"Versions: TensorFlow 2.21.0 (tested: ...)"')
    missing = tmp_path / "02_c.ipynb"
    assert colab_replica.not_run_on_the_replica([good, other, missing]) == ["01_b.ipynb", "02_c.ipynb"]


def test_the_replica_pins_what_colab_ships_for_the_course_s_packages():
    pins = dict(line.split("==") for line in colab_replica.PINS.read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    assert pins["ipywidgets"] == "7.7.1" and pins["keras"] == "3.13.2" and pins["numpy"] == "2.1.3"
    assert pins["tensorflow-cpu"] == "2.20.0" and "tensorflow" not in pins  # the CPU build stands in for the GPU one


def test_a_jax_chapter_run_by_another_keras_or_jax_is_named(tmp_path):
    keras_version, jax_version = colab_replica.pinned("keras"), colab_replica.pinned("jax")
    good, newer_jax = tmp_path / "09_a.ipynb", tmp_path / "09_b.ipynb"
    good.write_text(f'"Versions: Keras {keras_version} on JAX {jax_version} (backend jax), Python 3.13.0"')
    newer_jax.write_text(f'"Versions: Keras {keras_version} on JAX 0.10.2 (backend jax), Python 3.13.0"')
    assert colab_replica.not_run_on_the_replica([good, newer_jax]) == ["09_b.ipynb"]


def test_environment_only_builds_the_venv_and_stops(monkeypatch):
    built = []
    monkeypatch.setattr(colab_replica, "build_environment", lambda python: built.append(python) or "venv-python")
    monkeypatch.setattr(colab_replica, "install_course", lambda venv_python: pytest.fail("the course was installed"))
    assert colab_replica.main(["--environment-only", "--python", "python3.13"]) == 0
    assert built == ["python3.13"]
