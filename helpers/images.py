"""A deterministic image dataset on disk, one folder of JPEG files per class, for the input-pipeline chapter.

    python -m helpers.images [--root data/shapes] [--per-class 500] [--corrupt 0]

Every image is drawn from its own seed, so the same command gives the same files on any machine, in seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from helpers.errors import CourseError, whole_number

CLASSES = ("circle", "square", "triangle", "cross", "ring", "bar")
IMAGE_SIZE = 64
SUFFIXES = (".jpg", ".jpeg", ".png")


PACKAGE_PARENT = Path(__file__).resolve().parents[1]


def default_root() -> Path:
    """data/shapes in a clone of the course; elsewhere (Colab, Kaggle, a pip install) a cache folder, so the
    files never land in the working folder (Kaggle saves /kaggle/working as the notebook's output)."""
    if (PACKAGE_PARENT / "pyproject.toml").exists():
        return PACKAGE_PARENT / "data" / "shapes"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "tf-fast-course" / "shapes"


def draw(label: int, seed: int, size: int = IMAGE_SIZE):
    """One RGB image (a PIL Image) of shape CLASSES[label] at a random place, size and colour, on noise."""
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(seed)
    background = rng.integers(0, 90, size=(size, size, 3), dtype=np.uint8)
    image = Image.fromarray(background)
    pen = ImageDraw.Draw(image)
    colour = tuple(int(c) for c in rng.integers(120, 256, size=3))
    r = int(rng.integers(size // 6, size // 3))
    cx, cy = (int(v) for v in rng.integers(r + 2, size - r - 2, size=2))
    box = (cx - r, cy - r, cx + r, cy + r)
    shape = CLASSES[label]
    if shape == "circle":
        pen.ellipse(box, fill=colour)
    elif shape == "square":
        pen.rectangle(box, fill=colour)
    elif shape == "triangle":
        pen.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=colour)
    elif shape == "cross":
        pen.rectangle((cx - r, cy - r // 4, cx + r, cy + r // 4), fill=colour)
        pen.rectangle((cx - r // 4, cy - r, cx + r // 4, cy + r), fill=colour)
    elif shape == "ring":
        pen.ellipse(box, outline=colour, width=max(2, r // 3))
    else:  # bar: a long thin rectangle
        pen.rectangle((cx - r, cy - r // 5, cx + r, cy + r // 5), fill=colour)
    return image


def make_image_folder(root=None, per_class: int = 500, seed: int = 0, corrupt: int = 0) -> Path:
    """Write `per_class` JPEGs into root/<class>/ for each class (replacing what is there), plus `corrupt`
    broken .jpg files spread over the classes (for the error-handling lesson). Returns the root."""
    for name, value, minimum in (("per_class", per_class, 1), ("corrupt", corrupt, 0), ("seed", seed, 0)):
        whole_number(f"make_image_folder({name}=", value, minimum)
    root = Path(root) if root is not None else default_root()
    for label, name in enumerate(CLASSES):
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():  # a smaller or corrupt-free request must not keep stale files
            if old.suffix.lower() in SUFFIXES:
                old.unlink()
        for i in range(per_class):
            draw(label, seed * 1_000_003 + label * 100_000 + i).save(folder / f"{name}_{i:04d}.jpg", quality=90)
    for k in range(corrupt):
        broken = root / CLASSES[k % len(CLASSES)] / f"broken_{k:02d}.jpg"
        good = (root / CLASSES[k % len(CLASSES)] / f"{CLASSES[k % len(CLASSES)]}_0000.jpg").read_bytes()
        # Alternate two realistic failures: a download cut short, and a file that is not an image at all.
        broken.write_bytes(good[: len(good) // 3] if k % 2 == 0 else b"<html>404 Not Found</html>")
    return root


def list_image_folder(root):
    """(paths, labels, class names) of the images under root/<class>/, sorted; the label of a file is the
    index of its folder's name. Raises CourseError for a missing root or an empty dataset."""
    root = Path(root)
    fix = f"Create it with `python -m helpers.images --root {root}` (or helpers.images.make_image_folder())."
    if not root.is_dir():
        raise CourseError(f"list_image_folder({str(root)!r}): no such folder. {fix}")
    class_names = sorted(p.name for p in root.iterdir() if p.is_dir())
    if not class_names:
        raise CourseError(f"list_image_folder({str(root)!r}): no class folders inside (expected root/<class>/*.jpg). "
                          f"{fix}")
    paths, labels = [], []
    for label, name in enumerate(class_names):
        files = sorted(str(p) for p in (root / name).iterdir() if p.suffix.lower() in SUFFIXES)
        if not files:
            raise CourseError(f"list_image_folder({str(root)!r}): class folder {name!r} has no .jpg/.png files. "
                              "Remove the folder or add its images.")
        paths += files
        labels += [label] * len(files)
    return paths, np.asarray(labels, dtype=np.int64), class_names


FLOWERS_URL = "https://storage.googleapis.com/download.tensorflow.org/example_images/flower_photos.tgz"


def _download_flowers() -> Path:
    """TensorFlow's flower photos (3,670 JPEGs in 5 class folders, 220 MB), cached in ~/.keras/datasets."""
    import keras

    from helpers.data import _download

    archive = Path(_download(lambda: keras.utils.get_file(origin=FLOWERS_URL, extract=True)))
    # Where Keras puts the extracted files has changed between versions: find the folder holding "daisy".
    for folder in [archive, *archive.parent.rglob("*")]:
        if (folder / "daisy").is_dir():
            return folder
    raise FileNotFoundError(f"no flower class folders under {archive.parent}")


def image_folder(real: bool = False) -> tuple[Path, str]:
    """(root, source) of an image folder: TensorFlow's flower photos when `real` and they can be downloaded,
    else the generated shapes (made on first use). `source` says plainly which one it is."""
    if real:
        from helpers.data import _failure_reason

        try:
            return _download_flowers(), "real: TensorFlow's flower photos (5 classes, photographs of varied sizes)"
        except Exception as err:  # offline or blocked: the generated folder keeps the lesson going
            reason = _failure_reason(err)
    else:
        reason = "fast mode"
    root = default_root()
    if not root.is_dir():
        make_image_folder(root)
    return root, f"GENERATED shapes, 64x64 JPEGs ({reason}); made by `python -m helpers.images`"


def unreadable_files(paths) -> list[str]:
    """The files PIL cannot decode completely (truncated, or not images at all)."""
    from PIL import Image

    bad = []
    for path in paths:
        try:
            with Image.open(path) as image:
                image.load()
        except Exception:  # PIL raises several types for broken files; any of them means unreadable
            bad.append(str(path))
    return bad


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.images", description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=None, help=f"where to write (default {default_root()})")
    parser.add_argument("--per-class", type=int, default=500, help="images per class (default %(default)s)")
    parser.add_argument("--corrupt", type=int, default=0, help="broken .jpg files to add (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        root = make_image_folder(args.root, per_class=args.per_class, seed=args.seed, corrupt=args.corrupt)
    except CourseError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    paths, _, names = list_image_folder(root)
    print(f"{len(paths)} files in {len(names)} classes under {root} ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
