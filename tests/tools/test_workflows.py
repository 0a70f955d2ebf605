"""The GitHub Actions workflows: actionlint finds nothing, CI runs the README's test command, and a v* tag publishes
to PyPI through trusted publishing, with no token or password anywhere."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
# pip puts actionlint beside the Python that runs the tests: .venv/bin, whatever PATH says.
ACTIONLINT = Path(sys.executable).parent / "actionlint"


def workflow(name: str) -> dict:
    loaded = yaml.safe_load((WORKFLOWS / name).read_text())
    loaded["on"] = loaded.pop(True, loaded.get("on"))  # YAML 1.1 reads the key `on` as true
    return loaded


def actionlint(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    if not ACTIONLINT.exists():
        pytest.fail(f"actionlint is not installed beside {sys.executable}: run `make setup` (pyproject's dev extra "
                    "installs it)")
    return subprocess.run([str(ACTIONLINT), "-no-color", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_actionlint_finds_nothing_in_the_workflows():
    # Shell scripts in run: steps are checked too where shellcheck is on PATH (GitHub's runners have it).
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert {path.name for path in files} >= {"test.yml", "publish.yml"}
    done = actionlint(*map(str, files))
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    broken = (WORKFLOWS / "publish.yml").read_text().replace("id-token: write", "id-token: writ")
    (tmp_path / "broken.yml").write_text(broken)
    done = actionlint("broken.yml", cwd=tmp_path)
    assert done.returncode == 1 and '"writ" is invalid as permission of scope "id-token"' in done.stdout


def test_ci_runs_the_readme_test_command_on_every_push_and_pull_request():
    test = workflow("test.yml")
    assert set(test["on"]) == {"push", "pull_request"}
    (job,) = test["jobs"].values()
    assert job["runs-on"].startswith("ubuntu") and job["timeout-minutes"] > 0
    assert [step.get("run") for step in job["steps"] if "run" in step] == ["make test"]
    (python,) = [step for step in job["steps"] if step.get("uses", "").startswith("actions/setup-python@")]
    assert python["with"]["python-version"] == "3.12"
    assert "make test" in (ROOT / "README.md").read_text(), "the README no longer names `make test`"


def test_a_v_tag_publishes_through_trusted_publishing_alone():
    publish = workflow("publish.yml")
    assert publish["on"] == {"push": {"tags": ["v*"]}}
    upload = publish["jobs"]["publish"]
    assert upload["needs"] == "build" and upload["environment"]["name"] == "pypi"
    assert upload["permissions"] == {"id-token": "write"}, "only the upload job may ask for an OpenID Connect token"
    assert publish["permissions"] == {"contents": "read"}
    assert any(step.get("uses", "").startswith("pypa/gh-action-pypi-publish@") for step in upload["steps"])
    # No credential: no secret read anywhere (comments aside), no step given a token or a password.
    assert "secrets." not in yaml.safe_dump(publish)
    inputs = [key for job in publish["jobs"].values() for step in job["steps"] for key in step.get("with", {})]
    assert inputs and not [key for key in inputs if re.search("token|password|user", key)]


def test_every_action_is_pinned_to_a_major_version():
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for used in re.findall(r"uses:\s*(\S+)", path.read_text()):
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@(v\d+|release/v\d+)", used), f"{path.name}: {used}"


@pytest.mark.parametrize(("tag", "refused"), [("v0.2.0", False), ("v0.2.1", True), ("v0.2", True)])
def test_the_build_refuses_a_tag_other_than_v_and_the_built_version(tmp_path, tag, refused):
    (step,) = [step for step in workflow("publish.yml")["jobs"]["build"]["steps"] if "built version" in
               step.get("name", "")]
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "tf_fast_course-0.2.0-py3-none-any.whl").write_bytes(b"")
    (tmp_path / "dist" / "tf_fast_course-0.2.0.tar.gz").write_bytes(b"")
    # The shell GitHub runs a step's script in.
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin", "GITHUB_REF_NAME": tag}, capture_output=True, text=True)
    assert done.returncode == (1 if refused else 0)
    assert ("::error::" in done.stdout) == refused
