"""pip-installing a chapter's extra packages, only those missing, saying what and why."""

from __future__ import annotations

import importlib
import subprocess
import sys

from helpers.errors import CourseError


def missing_requirements(requirements) -> list[str]:
    """Those of `requirements` ("name==1.2", "name>=1.0") not installed at a version they accept."""
    from importlib import metadata

    from packaging.requirements import Requirement

    missing = []
    for text in requirements:
        requirement = Requirement(text)
        try:
            found = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            found = None
        if found is None or not requirement.specifier.contains(found, prereleases=True):
            missing.append(text)
    return missing


def ensure_installed(requirements, why: str) -> None:
    """pip-install what of `requirements` is missing (a chapter's extra packages), saying what and why."""
    missing = missing_requirements(requirements)
    if not missing:
        print(f"Already installed: {', '.join(requirements)} ({why}).")
        return
    print(f"Installing {' '.join(missing)} ({why}) ...")
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", *missing], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL)
    if pip.returncode:
        last = "\n".join((pip.stdout + pip.stderr).strip().splitlines()[-8:])
        raise CourseError(f"pip could not install {' '.join(missing)}:\n{last}\nTurn internet access on (Kaggle: "
                          f"Settings > Internet) and run this cell again, or run `pip install {' '.join(missing)}` "
                          "yourself.")
    importlib.invalidate_caches()
    print("Installed.")
