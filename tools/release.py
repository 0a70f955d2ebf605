"""Prepare a release in one commit; tagging it publishes it (`make release VERSION=X.Y.Z`).

    python -m tools.release X.Y.Z [--date YYYY-MM-DD] [--root REPOSITORY]

Sets `__version__` in helpers/__init__.py, CITATION.cff's version and date-released, moves CHANGELOG.md's Unreleased
entries under `## [X.Y.Z] - DATE`, regenerates the notebooks' badges and setup cells (`python -m tools.template
--fix`), and commits exactly that as "Release X.Y.Z". The maintainer then pushes the tag vX.Y.Z, and
.github/workflows/publish.yml uploads the package to PyPI. Standard library only (template.py needs .venv's nbformat).
"""

from __future__ import annotations

import argparse
import datetime
import re
import subprocess
import sys
from pathlib import Path

# No leading zeros: setuptools would publish 01.2.0 as 1.2.0, and the tag would no longer match the package.
VERSION = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")
INIT, CITATION, CHANGELOG = "helpers/__init__.py", "CITATION.cff", "CHANGELOG.md"
UNRELEASED = "## [Unreleased]\n"


class ReleaseError(Exception):
    """A reason not to release, worded for the maintainer: what is wrong and what to do."""


def parse_version(text: str) -> tuple[int, ...] | None:
    """(X, Y, Z) for "X.Y.Z"; None for anything else."""
    return tuple(map(int, text.split("."))) if VERSION.fullmatch(text) else None


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if done.returncode:
        raise ReleaseError(f"git {' '.join(args)} failed in {root}: {done.stderr.strip()}")
    return done.stdout


def replace_once(text: str, pattern: str, replacement: str, where: str) -> str:
    """`text` with the one line matching `pattern` replaced; refuses where there is none, or several."""
    new, count = re.subn(pattern, replacement, text, flags=re.MULTILINE)
    if count != 1:
        raise ReleaseError(f"{where}: expected one line matching {pattern!r}, found {count}: fix the file by hand")
    return new


def current_version(init: str) -> str:
    found = re.search(r'^__version__ = "([^"]*)"', init, re.MULTILINE)
    if not found:
        raise ReleaseError(f'{INIT}: no line `__version__ = "X.Y.Z"` to read the current version from')
    return found.group(1)


def changelog_with_release(text: str, version: str, date: str) -> str:
    """CHANGELOG.md with the Unreleased entries under `## [version] - date` and an empty Unreleased section above."""
    if UNRELEASED not in text:
        raise ReleaseError(f"{CHANGELOG}: no `## [Unreleased]` heading to take the release's entries from")
    before, after = text.split(UNRELEASED, 1)
    next_section = re.search(r"^## \[", after, re.MULTILINE)
    end = next_section.start() if next_section else len(after)
    entries, older = after[:end].strip(), after[end:]
    # Subsection headings alone (### Added) say nothing changed.
    if not any(line.strip() and not line.startswith("#") for line in entries.splitlines()):
        raise ReleaseError(f"{CHANGELOG}: the Unreleased section lists no changes: add what this release changes "
                           "for learners and instructors, commit, then release")
    return f"{before}{UNRELEASED}\n## [{version}] - {date}\n\n{entries}\n" + (f"\n{older}" if older else "")


def check_clean(root: Path) -> None:
    # Untracked files are left out of the commit (it takes tracked files only), so they may stay.
    changed = git(root, "status", "--porcelain", "--untracked-files=no")
    if changed:
        raise ReleaseError("uncommitted changes would slip into the release commit: commit or stash them first:\n"
                           + changed.rstrip())


def release(root: Path, version: str, date: str) -> None:
    """Every check first, then the changes; if the template or the commit fails, the files are put back."""
    new = parse_version(version)
    if new is None:
        raise ReleaseError(f"{version!r} is not a version X.Y.Z: three numbers without leading zeros, "
                           "e.g. make release VERSION=0.2.0")
    init = (root / INIT).read_text()
    current = current_version(init)
    old = parse_version(current)
    if old is None:
        raise ReleaseError(f"{INIT}: the current version {current!r} is not X.Y.Z: set it by hand and commit")
    if new <= old:
        raise ReleaseError(f"the new version {version} must be greater than the current one, {current}")
    check_clean(root)
    citation = (root / CITATION).read_text()
    rewritten = {
        INIT: replace_once(init, r'^__version__ = "[^"]*"', f'__version__ = "{version}"', INIT),
        CITATION: replace_once(replace_once(citation, r'^version: ".*"$', f'version: "{version}"', CITATION),
                               r'^date-released: ".*"$', f'date-released: "{date}"', CITATION),
        CHANGELOG: changelog_with_release((root / CHANGELOG).read_text(), version, date),
    }
    try:
        for name, text in rewritten.items():
            (root / name).write_text(text)
        # The same Python as this script: `make release` runs .venv's, which has template.py's nbformat.
        if subprocess.run([sys.executable, "-m", "tools.template", "--fix"], cwd=root).returncode:
            raise ReleaseError("python -m tools.template --fix failed (its output is above): fix what it reports, "
                               "commit, then run make release again")
        git(root, "commit", "--quiet", "--all", "--message", f"Release {version}")
    except BaseException:  # a failure, or Ctrl-C during the template
        # The tree was clean before: every change to a tracked file is this release's, and is undone.
        git(root, "checkout", "HEAD", "--", ".")
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", nargs="?", help="the new version, X.Y.Z")
    parser.add_argument("--date", default=datetime.date.today().isoformat(),
                        help="date-released and the changelog's date, YYYY-MM-DD (default: today)")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1],
                        help="the repository to release (default: the one holding this script)")
    args = parser.parse_args(argv)
    try:
        if args.version is None:
            raise ReleaseError("give the new version: make release VERSION=X.Y.Z (python -m tools.release X.Y.Z)")
        try:
            valid = datetime.date.fromisoformat(args.date).isoformat() == args.date  # not 20310203, CFF wants dashes
        except ValueError:
            valid = False
        if not valid:
            raise ReleaseError(f"--date {args.date!r} is not a date YYYY-MM-DD")
        release(args.root.resolve(), args.version, args.date)
    except ReleaseError as error:
        print(f"release: {error}", file=sys.stderr)
        return 1
    print(f"Committed \"Release {args.version}\" (see it: git show --stat). To publish it, tag it and push the tag:\n"
          f"    git tag v{args.version} && git push origin v{args.version}\n"
          "The tag runs .github/workflows/publish.yml, which builds the package and uploads it to PyPI. "
          "Push the branch as well (git push), so that it holds the release.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
