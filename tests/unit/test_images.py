from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from helpers import CourseError, images


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return images.make_image_folder(tmp_path_factory.mktemp("img") / "shapes", per_class=5, corrupt=3)


def test_make_image_folder_writes_jpegs_per_class_plus_broken_files(folder):
    assert sorted(p.name for p in folder.iterdir()) == sorted(images.CLASSES)
    good = sorted(folder.glob("*/[!b]*.jpg")) + sorted(folder.glob("bar/bar_*.jpg"))
    assert len(set(good)) == 5 * len(images.CLASSES)
    with Image.open(folder / "circle" / "circle_0003.jpg") as image:
        assert image.size == (64, 64) and image.mode == "RGB"
    broken = sorted(p.name for p in folder.glob("*/broken_*.jpg"))
    assert broken == ["broken_00.jpg", "broken_01.jpg", "broken_02.jpg"]


def test_the_folder_is_deterministic(tmp_path):
    a = images.make_image_folder(tmp_path / "a", per_class=2)
    b = images.make_image_folder(tmp_path / "b", per_class=2)
    for path in a.glob("*/*.jpg"):
        assert path.read_bytes() == (b / path.parent.name / path.name).read_bytes()


def test_classes_look_different():
    # The mean image of each class differs from the others: a model has something to learn.
    means = [np.mean([np.asarray(images.draw(label, seed), float) for seed in range(30)], axis=0)
             for label in range(len(images.CLASSES))]
    for i in range(len(means)):
        for j in range(i + 1, len(means)):
            assert np.abs(means[i] - means[j]).mean() > 1.0


def test_regenerating_replaces_stale_files(tmp_path):
    root = images.make_image_folder(tmp_path / "s", per_class=3, corrupt=2)
    images.make_image_folder(root, per_class=1)
    assert len(list(root.glob("*/*.jpg"))) == len(images.CLASSES)


def test_list_image_folder_labels_come_from_sorted_folder_names(folder):
    paths, labels, names = images.list_image_folder(folder)
    assert names == sorted(images.CLASSES)
    assert len(paths) == 5 * 6 + 3 and labels.dtype == np.int64
    for path, label in zip(paths, labels):
        assert f"/{names[label]}/" in path


def test_list_image_folder_errors_are_clear(tmp_path):
    with pytest.raises(CourseError, match=r"no such folder\. Create it with `python -m helpers.images --root"):
        images.list_image_folder(tmp_path / "missing")
    (tmp_path / "flat").mkdir()
    with pytest.raises(CourseError, match=r"no class folders inside"):
        images.list_image_folder(tmp_path / "flat")
    (tmp_path / "flat" / "cats").mkdir()
    with pytest.raises(CourseError, match=r"class folder 'cats' has no .jpg/.png files"):
        images.list_image_folder(tmp_path / "flat")


@pytest.mark.parametrize("kwargs", [{"per_class": 0}, {"corrupt": -1}, {"seed": True}, {"per_class": 2.0}])
def test_make_image_folder_rejects_bad_counts(tmp_path, kwargs):
    with pytest.raises(CourseError, match=r"make_image_folder\(\w+=.*\): use a whole number"):
        images.make_image_folder(tmp_path, **kwargs)


def test_unreadable_files_names_exactly_the_broken_ones(folder):
    paths, _, _ = images.list_image_folder(folder)
    assert sorted(p.rsplit("/", 1)[1] for p in images.unreadable_files(paths)) == [
        "broken_00.jpg", "broken_01.jpg", "broken_02.jpg"]


def test_image_folder_falls_back_to_generated_shapes(monkeypatch, tmp_path):
    monkeypatch.setattr(images, "default_root", lambda: tmp_path / "shapes")

    def offline():
        raise OSError("URL fetch failure on https://x: None -- Name or service not known")

    monkeypatch.setattr(images, "_download_flowers", offline)
    root, source = images.image_folder(real=True)
    assert root == tmp_path / "shapes" and len(list(root.glob("*/*.jpg"))) == 500 * 6
    assert source.startswith("GENERATED shapes") and "download failed: Name or service not known" in source
    assert images.image_folder(real=False)[1].startswith("GENERATED shapes, 64x64 JPEGs (fast mode)")


def test_image_folder_uses_the_flowers_when_they_download(monkeypatch, tmp_path):
    monkeypatch.setattr(images, "_download_flowers", lambda: tmp_path)
    root, source = images.image_folder(real=True)
    assert root == tmp_path and source.startswith("real: TensorFlow's flower photos")


def test_download_flowers_finds_the_class_folders(monkeypatch, tmp_path):
    (tmp_path / "flower_photos_extracted" / "flower_photos" / "daisy").mkdir(parents=True)
    monkeypatch.setattr(images.keras.utils if hasattr(images, "keras") else __import__("keras").utils, "get_file",
                        lambda **kwargs: str(tmp_path / "flower_photos.tgz"))
    assert images._download_flowers() == tmp_path / "flower_photos_extracted" / "flower_photos"


def test_main_writes_and_reports(tmp_path, capsys):
    assert images.main(["--root", str(tmp_path / "cli"), "--per-class", "2", "--corrupt", "1"]) == 0
    assert capsys.readouterr().out.startswith(f"13 files in 6 classes under {tmp_path / 'cli'} (")
    assert images.main(["--root", str(tmp_path / "cli"), "--per-class", "0"]) == 2
    assert "use a whole number >= 1" in capsys.readouterr().err


def test_default_root_is_the_repository_data_folder():
    assert images.default_root() == images.PACKAGE_PARENT / "data" / "shapes"


def test_default_root_outside_a_clone_is_a_cache_folder_not_the_working_folder(monkeypatch, tmp_path):
    # Installed from git (Colab, Kaggle): /kaggle/working would keep 3,000 JPEGs as the notebook's output.
    monkeypatch.setattr(images, "PACKAGE_PARENT", tmp_path / "site-packages")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert images.default_root() == tmp_path / "cache" / "tf-fast-course" / "shapes"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert images.default_root() == Path.home() / ".cache" / "tf-fast-course" / "shapes"
