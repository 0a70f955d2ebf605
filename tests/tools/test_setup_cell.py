"""The setup cell's install path, as a learner's first cell runs it on Colab or Kaggle: `pip install
tf-fast-course==VERSION`, here from a package index on 127.0.0.1 serving wheels built from this tree (COURSE_SOURCE
points the cell at it, as it points an offline room at its own), in a fresh venv with no network. The course's
dependencies are the platform's (numpy, matplotlib...): this venv installs without them (PIP_NO_DEPS)."""

import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest
import setuptools

import helpers
from tools import replica, servers, template

VERSION = helpers.__version__
OTHER = "0.0.1"  # another release, installed before
CALL = ("course = helpers.setup(  # AttributeError: rename your helpers.py\n"
        "    fast=FAST, devices=DEVICES, version=VERSION)")
# What pip and git say where this machine cannot ask PyPI or GitHub (recorded from pip 24.1 and git 2.39).
NO_DNS_FOR_PYPI = ("WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after "
                   "connection broken by 'NameResolutionError(\"<pip._vendor.urllib3.connection.HTTPSConnection "
                   "object at 0x7f>: Failed to resolve 'pypi.org' ([Errno -3] Temporary failure in name "
                   "resolution)\")': /simple/tf-fast-course/\nERROR: Could not find a version that satisfies the "
                   "requirement tf-fast-course==0.1.0 (from versions: none)")
NO_DNS_FOR_GITHUB = "fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com"
NO_SUCH_TAG = "error: pathspec 'v9.9.9' did not match any file(s) known to git"
MESSAGES = {"network": "cannot reach it or find tf-fast-course (offline? Kaggle: Settings, Internet)",
            "version": "no such version", "other": "failed"}


def sources(tmp: Path, version: str) -> Path:
    """A copy of what the wheel is built from, at `version`."""
    replica.copy_wheel_sources(tmp)
    init = tmp / "helpers" / "__init__.py"
    init.write_text(re.sub(r'^__version__ = "[^"]+"', f'__version__ = "{version}"', init.read_text(), flags=re.M))
    return tmp


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """This tree's wheel and an older release's, served as PyPI serves them."""
    out = tmp_path_factory.mktemp("wheels")
    wheels = [replica.build_wheel(Path(sys.executable), out / version, sources(tmp_path_factory.mktemp(version),
                                                                                  version), isolation=False)
              for version in (VERSION, OTHER)]
    with servers.package_index(wheels) as url:
        yield url


@pytest.fixture(scope="module")
def fresh_python(tmp_path_factory):
    """A venv with pip and nothing else, and the environment its pip runs in: no pip configuration of this machine,
    and setuptools (for a git source's build) from this venv, offline."""
    base = tmp_path_factory.mktemp("learner")
    venv.create(base / "venv", with_pip=True)
    build_tools = base / "build-tools"  # setuptools (>= 77, pyproject's build requirement) without site-packages
    build_tools.mkdir()
    site = Path(setuptools.__file__).parents[1]
    for name in ("setuptools", "pkg_resources", "_distutils_hack", f"setuptools-{setuptools.__version__}.dist-info"):
        (build_tools / name).symlink_to(site / name)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PIP_", "VIRTUAL_ENV"))}
    # pip reads PIP_NO_BUILD_ISOLATION as the value of build_isolation: "0" turns isolation off.
    env.update(PIP_NO_DEPS="1", PIP_CONFIG_FILE=os.devnull, PIP_NO_BUILD_ISOLATION="0",
               PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONPATH=str(build_tools))
    return base / "venv" / "bin" / "python", env


def run_cell(fresh_python, cwd, source, version=VERSION, prelude="", call=None):
    """The setup cell of `version`, with COURSE_SOURCE=`source`, in the fresh venv; its last line replaced by `call`
    (default: print where helpers came from, as the real call needs TensorFlow)."""
    python, env = fresh_python
    cell = template.setup_source(version).replace(CALL, call or "print('helpers from', helpers.__file__)")
    return subprocess.run([python, "-c", f"FAST = DEVICES = None\n{prelude}\n{cell}"], cwd=cwd, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL, env={**env, "COURSE_SOURCE": source})


def installed(fresh_python) -> str | None:
    python, env = fresh_python
    code = "import importlib.metadata as m\nprint([d.version for d in m.distributions(name='tf-fast-course')])"
    found = eval(subprocess.run([python, "-c", code], capture_output=True, text=True, check=True, env=env,
                                cwd=Path(python).parents[2]).stdout)
    return found[0] if found else None


def pip(fresh_python, *args):
    python, env = fresh_python
    subprocess.run([python, "-m", "pip", *args], env=env, capture_output=True, check=True)


def test_installs_the_release_once_replacing_another_version(fresh_python, index, tmp_path):
    pip(fresh_python, "install", "-q", "-i", index, f"tf-fast-course=={OTHER}")
    first = run_cell(fresh_python, tmp_path, index)
    assert first.returncode == 0, first.stderr
    assert re.search(r"helpers from .*/site-packages/helpers/__init__.py", first.stdout)
    assert installed(fresh_python) == VERSION  # replaced, not kept
    closed = f"http://127.0.0.1:{servers.free_port()}/simple"
    again = run_cell(fresh_python, tmp_path, closed)  # once per runtime: pip is not asked again
    assert again.returncode == 0, again.stderr


def test_helpers_of_another_version_imported_before_ask_for_a_restart(fresh_python, index, tmp_path):
    pip(fresh_python, "install", "-q", "-i", index, f"tf-fast-course=={OTHER}")
    proc = run_cell(fresh_python, tmp_path, index, prelude="import helpers", call=CALL)  # a kernel kept running
    assert proc.returncode == 1
    assert (f"CourseError: setup(version='{VERSION}'): this runtime imported the course's helpers {OTHER} before the "
            f"setup cell installed {VERSION}. Restart it") in proc.stderr
    assert installed(fresh_python) == VERSION  # the restart then finds the right ones


def test_a_learners_helpers_py_hiding_the_course_is_named(fresh_python, index, tmp_path):
    (tmp_path / "helpers.py").write_text("x = 1\n")
    proc = run_cell(fresh_python, tmp_path, index, call=CALL)
    assert proc.returncode == 1
    assert "module 'helpers' has no attribute 'setup'" in proc.stderr
    assert CALL in template.setup_source(VERSION)  # the trace shows the call's first line, which names the fix


def test_inside_a_clone_the_clones_helpers_are_used(fresh_python):
    proc = run_cell(fresh_python, template.NOTEBOOKS, "https://course.invalid/simple", version="9.9.9")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"helpers from {template.ROOT / 'helpers' / '__init__.py'}"


def tagged_clone(tmp_path: Path, tag: str) -> str:
    """A git repository of this tree's wheel sources with `tag`: a fork's, as COURSE_SOURCE=git+URL@tag names it."""
    repo = sources(tmp_path, VERSION)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "fork"], ["tag", tag]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    return f"git+file://{repo}"


def test_a_fork_s_tag_is_installed_from_git(fresh_python, tmp_path):
    pip(fresh_python, "uninstall", "-y", "-q", "tf-fast-course")
    proc = run_cell(fresh_python, tmp_path, tagged_clone(tmp_path / "fork", f"v{VERSION}") + f"@v{VERSION}")
    assert proc.returncode == 0, proc.stderr
    assert installed(fresh_python) == VERSION


def broken_index(tmp_path: Path):
    """An index whose wheel of 8.8.8 is not a zip file: pip finds it, then fails for a reason of its own."""
    wheel = tmp_path / "tf_fast_course-8.8.8-py3-none-any.whl"
    wheel.write_text("not a wheel\n")
    return servers.package_index([wheel])


@pytest.mark.parametrize("case", ["no DNS", "closed port", "version", "git tag", "other"])
def test_each_failure_gets_its_own_message(fresh_python, index, tmp_path, case):
    pip(fresh_python, "uninstall", "-y", "-q", "tf-fast-course")
    version, expected = {"version": ("9.9.9", "version"), "git tag": ("9.9.9", "version"),
                         "other": ("8.8.8", "other")}.get(case, (VERSION, "network"))
    if case == "other":
        with broken_index(tmp_path) as broken:
            proc = run_cell(fresh_python, tmp_path, broken, version=version)
        assert "is invalid" in proc.stderr  # pip's own words follow the message
    else:
        source = {"no DNS": "https://course.invalid/simple", "closed port": f"http://127.0.0.1:{servers.free_port()}",
                  "version": index, "git tag": tagged_clone(tmp_path / "fork", "v1") + "@v9.9.9"}[case]
        proc = run_cell(fresh_python, tmp_path, source, version=version)
    assert proc.returncode == 1
    message = next(line for line in proc.stderr.splitlines() if line.startswith("RuntimeError: pip install "))
    assert message.startswith(f"RuntimeError: pip install tf-fast-course=={version} from ")
    assert [key for key, words in MESSAGES.items() if message.endswith(words)] == [expected]
    assert installed(fresh_python) is None


def diagnosis(monkeypatch, stderr: str) -> str:
    """The cell's own reading of pip's `stderr` (the cell run here with pip's answer faked)."""
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "distributions", lambda **kwargs: [])
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: subprocess.CompletedProcess(args, 1, "", stderr))
    cell = template.setup_source(VERSION)
    with pytest.raises(RuntimeError) as raised:
        exec(cell[:cell.index("import helpers\n")], {"__name__": "cell"})
    return str(raised.value).splitlines()[0]


@pytest.mark.parametrize("stderr, expected", [(NO_DNS_FOR_PYPI, "network"), (NO_DNS_FOR_GITHUB, "network"),
                                              (NO_SUCH_TAG, "version")])
def test_what_pypi_and_github_say_elsewhere_is_read_the_same_way(monkeypatch, tmp_path, stderr, expected):
    monkeypatch.chdir(tmp_path)  # outside the clone
    assert diagnosis(monkeypatch, stderr).endswith(MESSAGES[expected])


def test_the_cell_never_installs_tensorflow_numpy_or_widgets():
    source = template.setup_source(VERSION)
    install = re.sub(r"#.*", "", source.split("import helpers\n")[0])  # its code, not the title's "not TensorFlow"
    assert not re.search(r"tensorflow|numpy|jax|ipywidgets|--upgrade|-U\b|--force", install, re.IGNORECASE)
    assert '["tf-fast-course==" + VERSION, *index]' in source
    assert '[sys.executable, "-m", "pip", "install", "-q", *where]' in source
