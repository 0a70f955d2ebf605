"""tools/release.py (`make release VERSION=X.Y.Z`), run on throwaway git repositories holding copies of the files a
release rewrites: each refusal leaves the repository as it was, a release is one commit whose files agree."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

DATE = "2031-02-03"
# Stands in for tools.template: records how it was run and which version it found, in a tracked file.
RECORDING_TEMPLATE = """import pathlib, re, sys
root = pathlib.Path(__file__).resolve().parents[1]
version = re.search(r'^__version__ = "(.*)"', (root / "helpers" / "__init__.py").read_text(), re.MULTILINE)[1]
(root / "notebooks" / "ran.txt").write_text(f"{sys.executable} {sys.argv[1:]} {version}")
"""


def changelog_with_an_entry() -> str:
    """The course's CHANGELOG.md with an Unreleased entry, which it lacks right after a release."""
    return (ROOT / "CHANGELOG.md").read_text().replace(
        "## [Unreleased]\n", "## [Unreleased]\n\n### Fixed\n- An entry the release tests add.\n", 1)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def version_in(repo: Path) -> str:
    return re.search(r'^__version__ = "(.*)"', (repo / "helpers" / "__init__.py").read_text(), re.MULTILINE)[1]


def sections(changelog: str) -> dict[str, str]:
    """Each `## [...]` heading of a changelog -> the text under it, up to the next one."""
    parts = re.split(r"^(## \[.*)$", changelog, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


@pytest.fixture(autouse=True)
def hermetic_git(monkeypatch):
    # The user's git configuration (commit signing, hooks) stays out; an identity for the commits.
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Release Test")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "release@example.org")


def make_repo(path: Path, version: str | None = None, changelog: str | None = None,
              template: str = RECORDING_TEMPLATE) -> Path:
    """A git repository with copies of the course's versioned files (optionally another version or changelog) and
    `template` as tools/template.py, all committed."""
    (path / "helpers").mkdir(parents=True)
    (path / "tools").mkdir()
    (path / "notebooks").mkdir()
    init = (ROOT / "helpers" / "__init__.py").read_text()
    if version:
        init = re.sub(r'^__version__ = "[^"]*"', f'__version__ = "{version}"', init, flags=re.MULTILINE)
    (path / "helpers" / "__init__.py").write_text(init)
    shutil.copy(ROOT / "CITATION.cff", path)
    (path / "CHANGELOG.md").write_text(changelog if changelog is not None else changelog_with_an_entry())
    (path / "tools" / "template.py").write_text(template)
    (path / "notebooks" / "ran.txt").write_text("not yet\n")
    shutil.copy(ROOT / ".gitignore", path)  # as in the course: `python -m tools.template` leaves bytecode behind
    git(path, "init", "-q")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "start")
    return path


def run_release(repo: Path, *args: str, date: str = DATE) -> subprocess.CompletedProcess:
    """`python -m tools.release` from this clone, on `repo`."""
    return subprocess.run([sys.executable, "-m", "tools.release", *args, "--root", str(repo), "--date", date],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def bumped(version: str) -> str:
    major, minor, _ = map(int, version.split("."))
    return f"{major}.{minor + 1}.0"


def assert_unchanged(repo: Path, head: str, status: str = "") -> None:
    assert git(repo, "rev-parse", "HEAD").strip() == head, "a refused release made a commit"
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == status, "a refused release changed files"


def test_a_release_is_one_commit_of_the_version_citation_changelog_and_regenerated_notebooks(tmp_path):
    repo = make_repo(tmp_path)
    old = version_in(repo)
    new = bumped(old)
    before = {name: (repo / name).read_text() for name in ("helpers/__init__.py", "CITATION.cff", "CHANGELOG.md")}
    head = git(repo, "rev-parse", "HEAD").strip()
    (repo / "scratch.txt").write_text("an untracked file stays out of the release\n")

    done = run_release(repo, new)

    assert done.returncode == 0, done.stderr
    assert f"git tag v{new} && git push origin v{new}" in done.stdout
    assert git(repo, "rev-list", f"{head}..HEAD").split() == [git(repo, "rev-parse", "HEAD").strip()]
    assert git(repo, "log", "-1", "--format=%s") == f"Release {new}\n"
    assert sorted(git(repo, "show", "--name-only", "--format=", "HEAD").split()) == [
        "CHANGELOG.md", "CITATION.cff", "helpers/__init__.py", "notebooks/ran.txt"]
    assert git(repo, "status", "--porcelain") == "?? scratch.txt\n"
    # Only the version changes in helpers/__init__.py: its comment stays.
    assert (repo / "helpers" / "__init__.py").read_text() == before["helpers/__init__.py"].replace(
        f'__version__ = "{old}"', f'__version__ = "{new}"')
    # The template ran after the version was set, with the same Python, to fix the notebooks.
    assert (repo / "notebooks" / "ran.txt").read_text() == f"{sys.executable} ['--fix'] {new}"
    # An empty Unreleased section, then the new release holding its entries, then the older releases unchanged.
    changelog = (repo / "CHANGELOG.md").read_text()
    old_sections, new_sections = sections(before["CHANGELOG.md"]), sections(changelog)
    entries = old_sections["## [Unreleased]"].strip()
    assert entries and f"## [Unreleased]\n\n## [{new}] - {DATE}\n\n{entries}\n\n## [" in changelog
    assert list(new_sections)[:2] == ["## [Unreleased]", f"## [{new}] - {DATE}"]
    assert list(new_sections.items())[2:] == list(old_sections.items())[1:], "older releases changed"
    assert_files_agree(repo)


def assert_files_agree(repo: Path) -> None:
    """tests/tools/test_release_files.py's check, on `repo`."""
    citation = (repo / "CITATION.cff").read_text()
    released = re.findall(r"^## \[(\d[^\]]*)\] - (\d{4}-\d\d-\d\d)$", (repo / "CHANGELOG.md").read_text(),
                          re.MULTILINE)
    assert re.search(r'^version: "(.+)"$', citation, re.MULTILINE)[1] == version_in(repo) == released[0][0]
    assert re.search(r'^date-released: "(.+)"$', citation, re.MULTILINE)[1] == released[0][1] == DATE


def test_versions_compare_as_numbers_not_text(tmp_path):
    repo = make_repo(tmp_path, version="0.9.0")
    done = run_release(repo, "0.10.0")
    assert done.returncode == 0, done.stderr
    assert version_in(repo) == "0.10.0"
    assert_files_agree(repo)


@pytest.mark.parametrize("args", [[], ["1.2"], ["v1.2.3"], ["1.2.3rc1"], ["01.2.3"], ["1.2.3.4"]])
def test_refuses_a_missing_or_ill_formed_version(tmp_path, args):
    repo = make_repo(tmp_path)
    head = git(repo, "rev-parse", "HEAD").strip()
    done = run_release(repo, *args)
    assert done.returncode == 1
    assert "make release VERSION=" in done.stderr and "X.Y.Z" in done.stderr
    assert_unchanged(repo, head)


@pytest.mark.parametrize("date", ["20310203", "2031-2-3", "2031-02-30", "today"])
def test_refuses_a_date_other_than_yyyy_mm_dd(tmp_path, date):
    repo = make_repo(tmp_path)
    head = git(repo, "rev-parse", "HEAD").strip()
    done = run_release(repo, bumped(version_in(repo)), date=date)
    assert done.returncode == 1 and f"--date {date!r} is not a date YYYY-MM-DD" in done.stderr
    assert_unchanged(repo, head)


@pytest.mark.parametrize("new", ["0.10.0", "0.9.9", "0.2.11"])
def test_refuses_a_version_not_greater_than_the_current_one(tmp_path, new):
    repo = make_repo(tmp_path, version="0.10.0")
    head = git(repo, "rev-parse", "HEAD").strip()
    done = run_release(repo, new)
    assert done.returncode == 1
    assert f"{new} must be greater than the current one, 0.10.0" in done.stderr
    assert_unchanged(repo, head)


@pytest.mark.parametrize("unreleased", ["", "\n### Added\n\n### Fixed\n\n"])
@pytest.mark.parametrize("older", ["## [0.1.0] - 2026-11-26\n\n- The first release.\n", ""])
def test_refuses_an_empty_unreleased_section(tmp_path, unreleased, older):
    repo = make_repo(tmp_path, changelog=f"# Changelog\n\n## [Unreleased]\n{unreleased}\n{older}")
    head = git(repo, "rev-parse", "HEAD").strip()
    done = run_release(repo, bumped(version_in(repo)))
    assert done.returncode == 1
    assert "Unreleased section lists no changes" in done.stderr
    assert_unchanged(repo, head)


@pytest.mark.parametrize("stage", [False, True])
def test_refuses_uncommitted_changes(tmp_path, stage):
    repo = make_repo(tmp_path)
    head = git(repo, "rev-parse", "HEAD").strip()
    with open(repo / "CITATION.cff", "a") as f:
        f.write("# an edit that is not committed\n")
    if stage:
        git(repo, "add", "CITATION.cff")
    status = git(repo, "status", "--porcelain", "--untracked-files=no")
    done = run_release(repo, bumped(version_in(repo)))
    assert done.returncode == 1
    assert "uncommitted changes" in done.stderr and "CITATION.cff" in done.stderr
    assert_unchanged(repo, head, status)


def test_a_failing_template_leaves_no_commit_and_no_change(tmp_path):
    broken = "import pathlib, sys\npathlib.Path('notebooks/ran.txt').write_text('half done')\nsys.exit(1)\n"
    repo = make_repo(tmp_path, template=broken)
    head = git(repo, "rev-parse", "HEAD").strip()
    done = run_release(repo, bumped(version_in(repo)))
    assert done.returncode == 1
    assert "python -m tools.template --fix failed" in done.stderr
    assert_unchanged(repo, head)


def test_the_real_template_moves_every_notebook_to_the_release(tmp_path):
    """The release as `make release` runs it, on a copy of this working tree as a clone would hold it (new files
    included): the course's own tools.template, the repository being the one that holds the script (no --root)."""
    names = git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard", "-z").split("\0")
    for name in filter(None, names):
        if (ROOT / name).is_file():  # not a file deleted but not yet committed
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "CHANGELOG.md").write_text(changelog_with_an_entry())
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "start")
    new = bumped(version_in(tmp_path))

    done = subprocess.run([sys.executable, "-m", "tools.release", new, "--date", DATE], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)

    assert done.returncode == 0, done.stdout + done.stderr
    assert git(tmp_path, "status", "--porcelain") == ""
    notebooks = sorted((tmp_path / "notebooks").glob("*.ipynb"))
    assert notebooks
    for path in notebooks:
        cells = ["".join(cell["source"]) for cell in json.loads(path.read_text())["cells"][:3]]
        assert (f"https://colab.research.google.com/github/tf-fast-course/tf-fast-course/blob/v{new}/notebooks/"
                f"{path.name}") in cells[0], path.name
        assert f'"{new}"' in cells[2] and "VERSION" in cells[2], path.name
    assert_files_agree(tmp_path)
