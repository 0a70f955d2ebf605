"""The setup cell's install path, as a learner's first cell runs it on Colab or Kaggle: `pip install
git+REPOSITORY@REVISION` from a git server on this machine (COURSE_REPOSITORY points the cell at it), in a fresh venv
with no network. The course's dependencies are the platform's (numpy, matplotlib...): this venv installs without them
(PIP_NO_DEPS), and builds the course with this venv's setuptools (no download of a build environment)."""

import json
import os
import subprocess
import venv
from pathlib import Path

import nbformat
import pytest
import setuptools

from tools import servers, template

NOTEBOOK = sorted(template.NOTEBOOKS.glob("*.ipynb"))[0]
REVISION = template.pinned_revision(nbformat.read(NOTEBOOK, as_version=4))
CALL = "course = helpers.setup(fast=FAST, devices=DEVICES)"
# What GitHub and git say where this machine cannot ask them (recorded from git 2.39 and pip 24).
GITHUB_UNKNOWN_REPOSITORY = "fatal: could not read Username for 'https://github.com': terminal prompts disabled"
GITHUB_PRIVATE_OR_GONE = "remote: Repository not found.\nfatal: repository 'https://github.com/x/y/' not found"
NO_DNS_FOR_GIT_PROTOCOL = "fatal: unable to look up github.com (port 9418) (Temporary failure in name resolution)"


@pytest.fixture(scope="module")
def served():
    with servers.git_repository(template.ROOT) as url:
        yield url


@pytest.fixture(scope="module")
def fresh_python(tmp_path_factory):
    """A venv with pip and nothing else, and the environment its pip builds the course in offline."""
    base = tmp_path_factory.mktemp("learner")
    venv.create(base / "venv", with_pip=True)
    build_tools = base / "build-tools"  # setuptools (>= 77, pyproject's build requirement) without site-packages
    build_tools.mkdir()
    site = Path(setuptools.__file__).parents[1]
    for name in ("setuptools", "pkg_resources", "_distutils_hack", f"setuptools-{setuptools.__version__}.dist-info"):
        (build_tools / name).symlink_to(site / name)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PIP_", "VIRTUAL_ENV"))}
    # pip reads PIP_NO_BUILD_ISOLATION as the value of build_isolation: "0" turns isolation off.
    env.update(PIP_NO_DEPS="1", PIP_NO_INDEX="1", PIP_NO_BUILD_ISOLATION="0", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PYTHONPATH=str(build_tools))
    return base / "venv" / "bin" / "python", env


def run_cell(fresh_python, cwd, repository, revision=REVISION, prelude="", call=None):
    """The setup cell at `revision`, reading `repository` from COURSE_REPOSITORY, in the fresh venv; its last line
    replaced by `call` (default: print where helpers came from, as the real call needs TensorFlow)."""
    python, env = fresh_python
    source = template.setup_source(revision).replace(CALL, call or "print('helpers from', helpers.__file__)")
    code = f"FAST = DEVICES = None\n{prelude}\n{source}"
    return subprocess.run([python, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, env={**env, "COURSE_REPOSITORY": repository})


def installed(fresh_python) -> dict:
    """The installed course's direct_url.json ({} when it is not installed)."""
    python, env = fresh_python
    code = ("from importlib import metadata\ntry:\n    print(metadata.distribution('tf-fast-course').read_text("
            "'direct_url.json'))\nexcept metadata.PackageNotFoundError:\n    print('{}')")
    return json.loads(subprocess.run([python, "-c", code], capture_output=True, text=True, check=True, env=env,
                                     cwd=Path(python).parents[2]).stdout)


def uninstall(fresh_python):
    python, env = fresh_python
    subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", "tf-fast-course"], env=env, capture_output=True)


def test_installs_the_revision_keeps_it_and_replaces_another(fresh_python, served, tmp_path):
    uninstall(fresh_python)
    first = run_cell(fresh_python, tmp_path, served)
    assert first.returncode == 0, first.stderr
    assert f"Installing the course's helpers at {REVISION[:12]} from {served}" in first.stdout
    assert "site-packages/helpers/__init__.py" in first.stdout
    assert installed(fresh_python)["vcs_info"]["commit_id"] == REVISION

    again = run_cell(fresh_python, tmp_path, served)
    assert again.returncode == 0 and "Installing" not in again.stdout  # once per runtime

    older = template.git("rev-parse", f"{REVISION}~1").stdout.strip()
    other = run_cell(fresh_python, tmp_path, served, revision=older)
    assert other.returncode == 0, other.stderr
    assert installed(fresh_python)["vcs_info"]["commit_id"] == older  # replaced, not kept


def test_helpers_imported_before_are_replaced_and_a_restart_asked_for(fresh_python, served, tmp_path):
    older = template.git("rev-parse", f"{REVISION}~1").stdout.strip()
    if installed(fresh_python).get("vcs_info", {}).get("commit_id") != older:
        assert run_cell(fresh_python, tmp_path, served, revision=older).returncode == 0
    proc = run_cell(fresh_python, tmp_path, served, prelude="import helpers")  # a persistent JupyterLab's kernel
    assert proc.returncode == 1
    assert ("RuntimeError: This runtime imported other helpers before: restart it (Colab: Runtime > Restart session; "
            "Jupyter: Kernel > Restart)") in proc.stderr
    assert installed(fresh_python)["vcs_info"]["commit_id"] == REVISION  # the restart then finds the right ones


def test_a_learners_helpers_py_hiding_the_course_is_named(fresh_python, served, tmp_path):
    if installed(fresh_python).get("vcs_info", {}).get("commit_id") != REVISION:
        assert run_cell(fresh_python, tmp_path, served).returncode == 0
    (tmp_path / "helpers.py").write_text("x = 1\n")
    proc = run_cell(fresh_python, tmp_path, served, call=CALL)
    assert proc.returncode == 1
    assert "module 'helpers' has no attribute 'setup'" in proc.stderr
    assert CALL + "  # AttributeError: rename your helpers.py" in template.setup_source(REVISION)  # shown in the trace


def test_an_install_from_a_folder_is_used_and_said(fresh_python, served, tmp_path):
    uninstall(fresh_python)
    python, _ = fresh_python
    site = next(Path(python).parents[1].glob("lib/python3.*/site-packages"))
    info = site / "tf_fast_course-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tf-fast-course\nVersion: 0.0\n")
    (info / "direct_url.json").write_text(json.dumps({"url": "file:///course", "dir_info": {}}))
    (site / "helpers").mkdir()
    (site / "helpers" / "__init__.py").write_text("")
    try:
        proc = run_cell(fresh_python, tmp_path, served, revision="0" * 40)
    finally:
        subprocess.run(["rm", "-r", str(info), str(site / "helpers")], check=True)
    assert proc.returncode == 0, proc.stderr
    assert "installed from a local folder: its revision is not checked" in proc.stdout
    assert "Installing" not in proc.stdout


def test_inside_a_clone_the_clones_helpers_are_used(fresh_python):
    proc = run_cell(fresh_python, template.NOTEBOOKS, "https://course.invalid/course.git", revision="0" * 40)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"helpers from {template.ROOT / 'helpers' / '__init__.py'}"


def no_project(tmp_path):
    """A repository whose commit holds no Python project: pip fails after fetching it."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "README.md").write_text("not a course\n")
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "readme"], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()


MESSAGES = {"no network": "no network: cannot reach", "repository": "repository not found:",
            "revision": "revision not found:", "other": "pip failed for another reason. Its last lines:"}


@pytest.mark.parametrize("case", ["no DNS", "closed port", "repository", "revision", "other"])
def test_each_failure_gets_its_own_message_and_never_a_prompt(fresh_python, served, tmp_path, case):
    uninstall(fresh_python)
    revision, expected = REVISION, MESSAGES.get(case, MESSAGES["no network"])
    repository = {"no DNS": "https://course.invalid/course.git",
                  "closed port": f"https://127.0.0.1:{servers.free_port()}/course.git",
                  "repository": served.replace("/course.git", "/missing.git"), "revision": served}.get(case)
    if case == "revision":
        revision = "0" * 40
    if case == "other":
        revision = no_project(tmp_path / "other")
        with servers.git_repository(tmp_path / "other") as other:
            proc = run_cell(fresh_python, tmp_path, other, revision=revision)
        assert "does not appear to be a Python project" in proc.stderr  # pip's own words, its last lines
    else:
        proc = run_cell(fresh_python, tmp_path, repository, revision=revision)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()
    message = next(line for line in last if line.startswith("RuntimeError: Installing the course failed: "))
    assert expected in message
    assert [words for words in MESSAGES.values() if words in message] == [expected]
    assert installed(fresh_python) == {}


def failure_for(output: str) -> str:
    """The cell's own diagnosis of pip's `output` (its functions, run here)."""
    source = template.setup_source(REVISION)
    namespace = {}
    exec(source[:source.index("\nif os.path.isfile")], namespace)
    return namespace["why_the_install_failed"](output)


@pytest.mark.parametrize("output, expected", [(GITHUB_UNKNOWN_REPOSITORY, "repository"),
                                              (GITHUB_PRIVATE_OR_GONE, "repository"),
                                              (NO_DNS_FOR_GIT_PROTOCOL, "no network")])
def test_what_github_and_git_say_elsewhere_is_read_the_same_way(output, expected):
    assert failure_for(output).startswith(MESSAGES[expected])


def test_the_cell_reads_the_repository_from_the_environment_else_pyprojects():
    source = template.setup_source(REVISION)
    assert f'REPOSITORY = os.environ.get("COURSE_REPOSITORY", "{template.repository()}")' in source
    assert "tensorflow" not in source.split("import helpers")[0].replace("TensorFlow", "")
    assert '[sys.executable, "-m", "pip", "install"' in source
