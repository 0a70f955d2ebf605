"""`make replica P=colab|kaggle|colab-tpu`: the course on a replica of a platform's runtime, installed as a setup cell
does.

1. A venv (.venv-colab, .venv-kaggle, .venv-colab-tpu) on the platform's Python with exactly the versions in
   tools/platforms/PLATFORM.txt (a subset of the platform's published lists; anything else pip pulled in is a failure),
   installed by pip, or by uv where the UV environment variable names its binary (.ci/run sets it).
2. The course's wheel built from this tree, served from a package index on 127.0.0.1 (tools.servers.package_index,
   which every kernel gets as COURSE_SOURCE); `pip freeze`, then the first notebook's parameters and setup cells
   alone, run from a folder outside the clone: the setup cell installs the course as it does from PyPI,
   `pip install tf-fast-course==VERSION` (VERSION: the release the notebooks name), then `pip freeze` again. A
   preinstalled package that changed or went is a failure (learners must not get a different TensorFlow, widgets or
   NumPy than their platform gave them), and so is an added package that the platform ships (the replica would be
   missing it).
3. Every notebook executed top to bottom (fast mode, 2 logical devices) by tools.run_notebooks with that
   environment's own nbclient, in a folder outside the clone (so the setup cell uses the installed course, as on the
   platform); results in build/PLATFORM/report.md. Chapter 8 installs XProf itself there; `pip freeze` is compared
   again afterwards.
4. On Colab, TensorBoard's Profile tab on chapter 8's profile, started as that chapter tells Colab learners to (a
   newer protobuf in a folder of its own, on PYTHONPATH for TensorBoard's process only). Chapter 8 tells Kaggle
   learners to download the logs instead, so the Kaggle replica has no such step.

Colab's TPU runtime has no TensorFlow (and libtpu needs a TPU: the replica runs JAX on the host CPU). There, step 3 runs
only the chapters whose setup cell puts Keras on JAX (with 8 host devices standing in for a v5e-8's chips, and from the
first of them step 2's install); every other chapter's parameters and setup cells run alone, from a runtime without
the course, and must install the course and nothing else, then stop with a CourseError of one line that names the
runtime to switch to.

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
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from tools import servers  # the parts the replica uses need only the standard library

ROOT = Path(__file__).resolve().parents[1]

PLATFORMS_DIR = ROOT / "tools" / "platforms"
COURSE_PACKAGE = "tf-fast-course"
PIP = ("-m", "pip", "--disable-pip-version-check", "-q")
SETUP_VERSION = re.compile(r'^VERSION, SOURCE = "([^"]+)"', re.MULTILINE)
# What the wheel is built from: the package and the files pyproject.toml names.
WHEEL_SOURCES = ("helpers", "pyproject.toml", "README.md", "LICENSE", "LICENSES")
# What chapter 8 tells Colab learners to install for TensorBoard's process: XProf's generated protobuf code needs
# protobuf >= 6.31.1, Colab's TensorFlow 2.20 comes with 5.29.6 (tests check the notebook says the same).
TENSORBOARD_PROTOBUF = "protobuf==6.31.1"
# A setup cell that puts Keras on the JAX backend: that chapter needs no TensorFlow.
JAX_SETUP = re.compile(r'helpers\.setup\([^)]*backend="jax"')
# What a chapter that needs TensorFlow must name where there is none: the runtime to switch to on each platform (the
# menus helpers/versions.py's TENSORFLOW_RUNTIMES names).
SWITCH_RUNTIME = ("Runtime > Change runtime type", "Settings > Accelerator")


@dataclass(frozen=True)
class Platform:
    key: str  # colab, kaggle, colab-tpu: names the pins file, the venv and the build folder
    name: str
    python: str
    published_lists: tuple[str, ...]  # in tools/platforms; a later list's pins override an earlier one's
    profile_tab: bool  # chapter 8 tells this platform's learners to open TensorBoard in the notebook
    tensorflow: bool = True  # without, only the chapters on Keras's JAX backend run; the others must stop
    devices: int = 2  # COURSE_DEVICES: the logical (TensorFlow) or host (JAX) devices standing in for accelerators

    @property
    def pins(self) -> Path:
        return PLATFORMS_DIR / f"{self.key}.txt"

    @property
    def venv(self) -> Path:
        return ROOT / f".venv-{self.key}"

    @property
    def build(self) -> Path:
        return ROOT / "build" / self.key

    def published(self) -> dict[str, str]:
        """{normalized name: version} of every package the platform's lists name at one version."""
        found = {}
        for name in self.published_lists:
            found.update(versions((PLATFORMS_DIR / name).read_text().splitlines()))
        return found

    def pinned(self, name: str) -> str:
        """The version the pins file pins for `name`."""
        return versions(self.pins.read_text().splitlines())[normalized(name)]


PLATFORMS = {
    "colab": Platform("colab", "Colab", "3.13", ("colab-pip-freeze.txt",), profile_tab=True),
    # Kaggle's GPU image: a Colab image of 2026-05-14 with Kaggle's requirements installed on top.
    "kaggle": Platform("kaggle", "Kaggle", "3.12", ("kaggle-colab-base-pip-freeze.txt", "kaggle-requirements.txt"),
                       profile_tab=False),
    # Colab's TPU runtime (v5e-1): JAX, no TensorFlow. 8 host devices stand in for Kaggle's v5e-8's chips.
    "colab-tpu": Platform("colab-tpu", "Colab TPU", "3.13", ("colab-tpu-pip-freeze.txt",), profile_tab=False,
                          tensorflow=False, devices=8),
}


def find_python(platform: Platform) -> str:
    """The platform's Python, as tools/find-python finds one (PATH, then pyenv); its message says how to get one."""
    found = subprocess.run([ROOT / "tools" / "find-python", platform.python], capture_output=True, text=True)
    if found.returncode:
        raise SystemExit(f"make replica P={platform.key}: {platform.name}'s Python is needed. {found.stderr.strip()}")
    return found.stdout.strip()


def run(*args, **kwargs) -> subprocess.CompletedProcess:
    print("+", " ".join(str(a) for a in args), flush=True)
    return subprocess.run([str(a) for a in args], **{"check": True, **kwargs})


def run_notebooks(venv_python: Path, *args, **kwargs) -> subprocess.CompletedProcess:
    """tools.run_notebooks on the replica's Python (its nbclient), run from the clone; each kernel starts in its
    notebook's folder, outside the clone, so the setup cell uses the installed course as on the platform."""
    return run(venv_python, "-m", "tools.run_notebooks", *args, cwd=ROOT, **kwargs)


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


def changed_packages(before: dict[str, str], after: dict[str, str], platform: Platform) -> list[str]:
    """Lines naming every preinstalled package the course install changed or removed, and every package it added
    that the platform's published lists have (so the replica lacks it). New packages it does not ship are fine."""
    published = platform.published()
    names = (set(before) | set(after)) - {normalized(COURSE_PACKAGE)}
    return [f"{name}: {before.get(name, 'absent')} -> {after.get(name, 'absent')}"
            + (f" ({platform.name} ships {published[name]}: pin it in {platform.pins.name})"
               if name not in before else "")
            for name in sorted(names)
            if before.get(name) != after.get(name) and (name in before or name in published)]


def unpinned_packages(installed: dict[str, str], platform: Platform) -> list[str]:
    """Packages in the replica that the pins file does not pin (pip pulled them in at versions the platform may
    not have)."""
    pinned_names = set(versions(platform.pins.read_text().splitlines())) | {"pip"}
    return sorted(f"{name}=={version}" for name, version in installed.items() if name not in pinned_names)


def build_environment(platform: Platform, python: str) -> Path:
    venv_python = platform.venv / "bin" / "python"
    stamp = platform.venv / ".pins"
    if not (stamp.exists() and stamp.read_text() == platform.pins.read_text()):
        shutil.rmtree(platform.venv, ignore_errors=True)
        run(python, "-m", "venv", platform.venv)
        # Compiling every .py file at install costs about 70 s of CPU; where imports may write .pyc (.ci/run lets
        # them), each module is compiled at its first import instead, about a quarter of the files.
        compile_now = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
        if os.environ.get("UV"):  # uv's binary (.ci/run): the same pins, installed about 4x as fast as pip
            run(os.environ["UV"], "pip", "install", "-q", "--python", venv_python,
                *(("--compile-bytecode",) if compile_now else ()), "-r", platform.pins)
        else:
            run(venv_python, *PIP, "install", f"pip=={platform.pinned('pip')}")
            run(venv_python, *PIP, "install", *(() if compile_now else ("--no-compile",)), "-r", platform.pins)
        extra = unpinned_packages(freeze(venv_python), platform)
        if extra:
            raise SystemExit(f"make replica P={platform.key}: {platform.pins} misses what these packages' "
                             f"dependencies pulled in: {', '.join(extra)}; pin each at the version in "
                             f"{' or '.join(platform.published_lists)} (a later list's pin wins).")
        stamp.write_text(platform.pins.read_text())
    return venv_python


def release(notebooks) -> str:
    """The course release the notebooks' setup cells install (one for all, as `make template` writes them)."""
    found = {}
    for path in notebooks:
        setup = json.loads(Path(path).read_text(encoding="utf-8"))["cells"][2]["source"]
        match = SETUP_VERSION.search("".join(setup))
        found.setdefault(match.group(1) if match else None, []).append(Path(path).name)
    if len(found) != 1 or None in found:
        raise SystemExit("The notebooks' setup cells name no single VERSION ("
                         + "; ".join(f"{version}: {', '.join(names)}" for version, names in found.items())
                         + "): run `make template`.")
    return next(iter(found))


def jax_chapter(path) -> bool:
    """Whether the notebook's setup cell puts Keras on the JAX backend (then it needs no TensorFlow)."""
    setup = json.loads(Path(path).read_text(encoding="utf-8"))["cells"][2]["source"]
    return bool(JAX_SETUP.search("".join(setup)))


def copy_wheel_sources(destination: Path, source: Path = ROOT) -> Path:
    """What the wheel is built from (WHEEL_SOURCES), copied from `source` to `destination` without bytecode."""
    for name in WHEEL_SOURCES:
        if (source / name).is_dir():
            shutil.copytree(source / name, destination / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source / name, destination)
    return destination


def build_wheel(python: Path, out: Path, source: Path = ROOT, isolation: bool = True) -> Path:
    """The course's wheel, built by `python`'s pip from a copy of `source` (setuptools' build/ and egg-info stay out
    of the tree, and two replicas can build at once). With build isolation pip fetches setuptools itself (the
    platforms' is older than pyproject's build requirement); without, `python`'s own setuptools builds it offline."""
    with tempfile.TemporaryDirectory(prefix="course-wheel-") as copy:
        run(python, *PIP, "wheel", "--no-deps", *(() if isolation else ("--no-build-isolation",)), "--wheel-dir",
            out, copy_wheel_sources(Path(copy), source))
    [wheel] = out.glob("tf_fast_course-*.whl")
    return wheel


def install_course(platform: Platform, venv_python: Path, notebook: Path, version: str,
                   env: dict) -> tuple[dict[str, str], list[str]]:
    """Uninstall earlier installs (the course, and what chapter 8 installs), then run `notebook`'s parameters and setup
    cells alone, in its folder: the learner's first cell installs the course; return `pip freeze` before and what
    changed. SystemExit when the cell did not install `version`."""
    subprocess.run([venv_python, *PIP, "uninstall", "-y", COURSE_PACKAGE, *profile_packages(platform)],
                   capture_output=True)
    before = freeze(venv_python)
    first = setup_cells(notebook, "setup_cell.ipynb")
    out = platform.build / "setup-cell"
    run_notebooks(venv_python, "--build", out, first, env=env)
    after = freeze(venv_python)
    if after.get(normalized(COURSE_PACKAGE)) != version:
        raise SystemExit(f"make replica P={platform.key}: the setup cell did not install {COURSE_PACKAGE} {version} "
                         f"(see {out / first.name}).")
    first.unlink()
    return before, changed_packages(before, after, platform)


def setup_cells(notebook: Path, name: str) -> Path:
    """A copy of `notebook` with only its parameters and setup cells, named `name`, beside it (so it runs in the
    notebook's folder, as the notebook would)."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    nb["cells"] = nb["cells"][1:3]
    first = notebook.parent / name
    first.write_text(json.dumps(nb), encoding="utf-8")
    return first


def stop_without_tensorflow(platform: Platform, venv_python: Path, notebook: Path, version: str,
                            env: dict) -> list[str]:
    """On a runtime without TensorFlow, a chapter that needs it opened first: uninstall the course, run the
    notebook's parameters and setup cells alone, in its folder, and say what went wrong (nothing: []). The setup
    cell must install the course and nothing else, then stop as stop_problems() checks."""
    subprocess.run([venv_python, *PIP, "uninstall", "-y", COURSE_PACKAGE], capture_output=True)
    before = freeze(venv_python)
    first = setup_cells(notebook, f"{notebook.stem}_setup_cells.ipynb")
    out = platform.build / "setup-cells"
    # The run fails (the cell raises): its own report is printed only where the stop is not the expected one.
    ran = run_notebooks(venv_python, "--build", out, first, env=env, check=False, capture_output=True, text=True)
    first.unlink()
    after = freeze(venv_python)
    problems = changed_packages(before, after, platform)
    if after.get(normalized(COURSE_PACKAGE)) != version:
        problems.append(f"the setup cell did not install {COURSE_PACKAGE} {version}")
    executed = out / first.name
    problems += stop_problems(json.loads(executed.read_text(encoding="utf-8")) if executed.exists() else {"cells": []})
    if problems:
        print(ran.stdout + ran.stderr, end="")
    return problems


def stop_problems(executed: dict) -> list[str]:
    """What is wrong with how an executed notebook of a chapter's parameters and setup cells stopped on a runtime
    without TensorFlow: it must stop with a CourseError whose message is one line naming the runtime to switch to
    (SWITCH_RUNTIME), and show nothing on stderr (red in Colab)."""
    outputs = [output for cell in executed["cells"] for output in cell.get("outputs", [])]
    raised = [output for output in outputs if output["output_type"] == "error"]
    problems = [f"shows lines on stderr: {output['text'].strip()[:200]}" for output in outputs
                if output.get("name") == "stderr"]
    if not raised:
        return [*problems, "the setup cell did not stop: without TensorFlow it must say which runtime to switch to"]
    error = raised[0]  # a cell's run stops at its first error
    message = error["evalue"].strip()
    if error["ename"] != "CourseError":
        problems.append(f"the setup cell stopped with {error['ename']}: {message[:200]}, not a CourseError")
    elif "\n" in message:
        problems.append(f"its CourseError takes {len(message.splitlines())} lines, not one: {message[:200]}")
    elif not all(menu in message for menu in SWITCH_RUNTIME):
        problems.append(f"its CourseError names no runtime to switch to ({' and '.join(SWITCH_RUNTIME)}): "
                        f"{message[:200]}")
    return problems


def profile_packages(platform: Platform) -> list[str]:
    """The packages pyproject's `profile` extra names that the platform does not ship (so the replica lacks them)."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        requirements = tomllib.load(f)["project"]["optional-dependencies"]["profile"]
    names = [normalized(re.split(r"[<>=!~ ;\[]", requirement)[0]) for requirement in requirements]
    return [name for name in names if name not in platform.published()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--platform", choices=sorted(PLATFORMS), required=True, help="the runtime to replicate")
    parser.add_argument("--python", help="the Python to build the venv with (default: the platform's version, "
                                         "found on PATH or pyenv)")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks executed at once")
    parser.add_argument("--environment-only", action="store_true",
                        help="only build the venv (mostly downloading: CI does it while other tests run)")
    parser.add_argument("notebooks", nargs="*", help="only these notebooks (default: all)")
    args = parser.parse_args(argv)
    platform = PLATFORMS[args.platform]
    venv_python = build_environment(platform, args.python or find_python(platform))
    if args.environment_only:
        return 0
    notebooks = [Path(n).resolve() for n in args.notebooks] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    version = release(notebooks)  # one for all, or a clear error
    whole = [path for path in notebooks if platform.tensorflow or jax_chapter(path)]  # run top to bottom
    with tempfile.TemporaryDirectory(prefix="course-") as folder, \
            servers.package_index([build_wheel(venv_python, Path(folder) / "wheels")]) as index:
        # Outside the clone, as on the platform.
        copies = {path: Path(shutil.copy(path, folder)) for path in notebooks}
        # A cache folder of its own (the generated images, Matplotlib's): empty as on a new runtime, and never
        # shared with another replica running beside this one. pip keeps its usual cache, which is safe to share.
        env = dict(os.environ, COURSE_FAST="1", COURSE_DEVICES=str(platform.devices), COURSE_WIDGETS="1",
                   COURSE_SOURCE=index, XDG_CACHE_HOME=str(Path(folder) / "cache"),
                   PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR")
                   or str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pip"))
        stopped_wrong = []
        for path in (path for path in notebooks if path not in whole):
            problems = stop_without_tensorflow(platform, venv_python, copies[path], version, env)
            print(f"{path.name}: " + ("; ".join(problems) if problems else "its setup cell installed the course alone "
                                      "and stopped with one line naming the runtime to switch to"), flush=True)
            stopped_wrong += [path.name] if problems else []
        if stopped_wrong:
            print("Without TensorFlow, these chapters did not stop as they should:", ", ".join(stopped_wrong))
        if not whole:
            return 1 if stopped_wrong else 0
        before, changed = install_course(platform, venv_python, copies[whole[0]], version, env)
        if changed:
            print("Installing the course changed packages the platform installed:\n  " + "\n  ".join(changed))
            return 1
        print("The setup cell installed the course and changed no preinstalled package.", flush=True)
        failed = run_notebooks(venv_python, "--build", platform.build, "--jobs", str(args.jobs),
                               *(copies[path] for path in whole), env=env, check=False).returncode
        changed = changed_packages(before, freeze(venv_python), platform)
        if changed:
            print("The notebooks' own installs changed packages the platform installed:\n  " + "\n  ".join(changed))
        wrong = not_run_on_the_replica([platform.build / path.name for path in whole], platform)
        if wrong:
            print("These notebooks' kernels did not run the replica's versions:", ", ".join(wrong))
        profile_tab = (not platform.profile_tab or "08_profiling.ipynb" not in [path.name for path in whole]
                       or tensorboard_shows_the_profile(platform, venv_python, Path(folder) / "ch8_logs"))
    return 1 if failed or changed or wrong or stopped_wrong or not profile_tab else 0


def tensorboard_shows_the_profile(platform: Platform, venv_python: Path, logs: Path) -> bool:
    """Serve chapter 8's naive-pipeline profile (in `logs`) with the replica's TensorBoard, as the chapter tells Colab
    learners to, and ask the Profile tab for its overview page."""
    folder = platform.build / "protobuf6"
    run(venv_python, *PIP, "install", "--no-deps", "--upgrade", "--target", folder, TENSORBOARD_PROTOBUF)
    try:
        with servers.tensorboard(logs, python=str(venv_python),
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


def not_run_on_the_replica(executed, platform: Platform) -> list[str]:
    """Names of executed notebooks whose setup cell did not report the replica's TensorFlow, Keras and Python, or for
    a chapter on the JAX backend the replica's Keras, JAX and Python (a kernelspec elsewhere on the machine could have
    sent them to another Python). A replica without TensorFlow accepts only the latter."""
    keras, python = platform.pinned("keras"), platform.python
    expected = [f"Versions: Keras {keras} on JAX {platform.pinned('jax')} (backend jax), Python {python}."]
    if platform.tensorflow:
        expected.append(f"Versions: TensorFlow {platform.pinned('tensorflow-cpu')} + Keras {keras} + Python {python}.")
    return [path.name for path in executed
            if not path.exists() or not any(text in path.read_text(encoding="utf-8") for text in expected)]


if __name__ == "__main__":
    sys.exit(main())
