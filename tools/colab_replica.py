"""`make colab`: the course on a replica of Colab's runtime, installed the way a learner's setup cell installs it.

1. A venv (.venv-colab) on Python 3.13 with exactly the versions in tools/platforms/colab.txt (a subset of
   Colab's published list, tools/platforms/colab-pip-freeze.txt; anything else pip pulled in is a failure).
2. `pip freeze`, then the installs the notebooks make: this repository without extras (every setup cell), then
   its `profile` extra (chapter 8 installs XProf), then `pip freeze` again. A preinstalled package that changed
   or went is a failure (learners must not get a different TensorFlow, widgets or NumPy than their platform
   gave them), and so is an added package that Colab ships (the replica would be missing it).
3. Every notebook executed top to bottom (fast mode, 2 logical devices) with that environment's own
   nbclient; results in build/colab/report.md.
4. TensorBoard's Profile tab on chapter 8's profile, started as that chapter tells Colab learners to (a newer
   protobuf in a folder of its own, on PYTHONPATH for TensorBoard's process only).

Standard library only: it runs before any venv exists.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "tools" / "platforms" / "colab.txt"
PUBLISHED = ROOT / "tools" / "platforms" / "colab-pip-freeze.txt"
VENV = ROOT / ".venv-colab"
BUILD = ROOT / "build" / "colab"
COURSE_PACKAGE = "tf-fast-course"
PIP = ("-m", "pip", "--disable-pip-version-check", "-q")
# What chapter 8 tells Colab learners to install for TensorBoard's process: XProf's generated protobuf code needs
# protobuf >= 6.31.1, Colab's TensorFlow 2.20 comes with 5.29.6 (tests check the notebook says the same).
TENSORBOARD_PROTOBUF = "protobuf==6.31.1"


def find_python313() -> str:
    """Colab's Python: python3.13 on PATH, or one pyenv installed."""
    found = shutil.which("python3.13")
    if found and subprocess.run([found, "-c", "pass"], capture_output=True).returncode == 0:
        return found
    for candidate in sorted(Path.home().glob(".pyenv/versions/3.13*/bin/python3.13")):
        return str(candidate)
    raise SystemExit("make colab: Python 3.13 (Colab's version) is needed; install it, e.g. `pyenv install 3.13`.")


def pinned(name: str) -> str:
    """The version tools/platforms/colab.txt pins for `name`."""
    return next(line.split("==")[1] for line in PINS.read_text().splitlines() if line.startswith(f"{name}=="))


def run(*args, **kwargs) -> subprocess.CompletedProcess:
    print("+", " ".join(str(a) for a in args), flush=True)
    return subprocess.run([str(a) for a in args], check=True, **kwargs)


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def versions(lines) -> dict[str, str]:
    """{normalized name: version} of `name==version` lines (comments and other lines skipped)."""
    pairs = (line.strip().split("==", 1) for line in lines if "==" in line and not line.startswith("#"))
    return {normalized(name): version for name, version in pairs}


def freeze(python: Path) -> dict[str, str]:
    out = subprocess.run([python, *PIP, "freeze", "--all"], capture_output=True, text=True, check=True).stdout
    return {**versions(out.splitlines()),
            **{normalized(line.split(" @ ")[0]): line for line in out.splitlines() if " @ " in line}}


def changed_packages(before: dict[str, str], after: dict[str, str], published: dict[str, str]) -> list[str]:
    """Lines naming every preinstalled package the course install changed or removed, and every package it added
    that Colab's published list has (so the replica lacks it). New packages Colab does not ship are fine."""
    names = (set(before) | set(after)) - {normalized(COURSE_PACKAGE)}
    return [f"{name}: {before.get(name, 'absent')} -> {after.get(name, 'absent')}"
            + (f" (Colab ships {published[name]}: pin it in {PINS.name})" if name not in before else "")
            for name in sorted(names)
            if before.get(name) != after.get(name) and (name in before or name in published)]


def unpinned_packages(installed: dict[str, str]) -> list[str]:
    """Packages in the replica that colab.txt does not pin (pip pulled them in at versions Colab may not have)."""
    pinned_names = set(versions(PINS.read_text().splitlines())) | {"pip"}
    return sorted(f"{name}=={version}" for name, version in installed.items() if name not in pinned_names)


def build_environment(python: str) -> Path:
    venv_python = VENV / "bin" / "python"
    stamp = VENV / ".pins"
    if not (stamp.exists() and stamp.read_text() == PINS.read_text()):
        shutil.rmtree(VENV, ignore_errors=True)
        run(python, "-m", "venv", VENV)
        run(venv_python, *PIP, "install", f"pip=={pinned('pip')}")
        run(venv_python, *PIP, "install", "-r", PINS)
        extra = unpinned_packages(freeze(venv_python))
        if extra:
            raise SystemExit(f"make colab: {PINS} misses what these packages' dependencies pulled in: "
                             f"{', '.join(extra)}; pin each at the version in {PUBLISHED.name}.")
        stamp.write_text(PINS.read_text())
    return venv_python


def install_course(venv_python: Path) -> list[str]:
    """Uninstall earlier installs, then install the course as the setup cell does and its `profile` extra as
    chapter 8 does; return what changed."""
    subprocess.run([venv_python, *PIP, "uninstall", "-y", COURSE_PACKAGE, *profile_packages()], capture_output=True)
    before = freeze(venv_python)
    run(venv_python, *PIP, "install", ROOT)
    run(venv_python, *PIP, "install", f"{ROOT}[profile]")
    return changed_packages(before, freeze(venv_python), versions(PUBLISHED.read_text().splitlines()))


def profile_packages() -> list[str]:
    """The packages pyproject's `profile` extra names that Colab does not ship (so the replica lacks them too)."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        requirements = tomllib.load(f)["project"]["optional-dependencies"]["profile"]
    names = [normalized(re.split(r"[<>=!~ ;\[]", requirement)[0]) for requirement in requirements]
    return [name for name in names if name not in versions(PUBLISHED.read_text().splitlines())]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", help="Python 3.13 to build the venv with (default: found on PATH or pyenv)")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks executed at once")
    parser.add_argument("--environment-only", action="store_true",
                        help="only build .venv-colab (mostly downloading: CI does it while other tests run)")
    parser.add_argument("notebooks", nargs="*", help="only these notebooks (default: all)")
    args = parser.parse_args(argv)
    venv_python = build_environment(args.python or find_python313())
    if args.environment_only:
        return 0
    changed = install_course(venv_python)
    if changed:
        print("Installing the course changed packages the platform installed:\n  " + "\n  ".join(changed))
        return 1
    print("Installing the course changed no preinstalled package.", flush=True)
    env = dict(os.environ, COURSE_FAST="1", COURSE_DEVICES="2", COURSE_WIDGETS="1")
    failed = subprocess.run([venv_python, ROOT / "tools" / "run_notebooks.py", "--build", BUILD,
                             "--jobs", str(args.jobs), *args.notebooks], env=env).returncode
    names = [Path(n).name for n in args.notebooks] or [p.name for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    wrong = not_run_on_the_replica([BUILD / name for name in names])
    if wrong:
        print("These notebooks' kernels did not run the replica's TensorFlow:", ", ".join(wrong))
    profile_tab = "08_profiling.ipynb" not in names or tensorboard_shows_the_profile(venv_python)
    return 1 if failed or wrong or not profile_tab else 0


def tensorboard_shows_the_profile(venv_python: Path) -> bool:
    """Serve chapter 8's naive-pipeline profile with the replica's TensorBoard, as the chapter tells Colab learners
    to, and ask the Profile tab for its overview page."""
    sys.path.insert(0, str(ROOT))
    from tools import servers

    folder = BUILD / "protobuf6"
    run(venv_python, *PIP, "install", "--no-deps", "--upgrade", "--target", folder, TENSORBOARD_PROTOBUF)
    try:
        with servers.tensorboard(ROOT / "notebooks" / "ch8_logs", python=str(venv_python),
                                 env={**os.environ, "PYTHONPATH": str(folder)}) as url:
            runs = json.loads(servers.get(f"{url}/data/plugin/profile/runs"))
            naive = next(run_name for run_name in runs if run_name.startswith("naive"))
            [host] = json.loads(servers.get(f"{url}/data/plugin/profile/hosts?run={naive}&tag=overview_page"))
            overview = json.loads(servers.get(f"{url}/data/plugin/profile/data?run={naive}&tag=overview_page"
                                              f"&host={host['hostname']}"))
    except (SystemExit, StopIteration, OSError, ValueError) as err:
        print(f"TensorBoard's Profile tab did not show chapter 8's profile on the replica: {err!r}")
        return False
    print(f"TensorBoard's Profile tab on the replica shows {naive}'s overview page.")
    return isinstance(overview, list) and bool(overview)


def not_run_on_the_replica(executed) -> list[str]:
    """Names of executed notebooks whose setup cell did not report the replica's TensorFlow, or for a chapter on the
    JAX backend the replica's Keras and JAX (a kernelspec elsewhere on the machine could have sent them to another
    Python)."""
    expected = (f"Versions: TensorFlow {pinned('tensorflow-cpu')} ",
                f"Versions: Keras {pinned('keras')} on JAX {pinned('jax')} ")
    return [path.name for path in executed
            if not path.exists() or not any(text in path.read_text(encoding="utf-8") for text in expected)]


if __name__ == "__main__":
    sys.exit(main())
