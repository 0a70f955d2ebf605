import pytest

from helpers.errors import CourseError
from helpers.storage import checkpoint_root


def roots(tmp_path, **present):
    """Fake Colab/Kaggle folders under tmp_path; only those named in `present` exist."""
    drive, working = tmp_path / "content" / "drive" / "MyDrive", tmp_path / "kaggle" / "working"
    for name, path in (("drive", drive), ("kaggle", working), ("content", tmp_path / "content")):
        if present.get(name):
            path.mkdir(parents=True, exist_ok=True)
    return dict(colab_drive=drive, kaggle_working=working, local=tmp_path / "here" / "checkpoints")


def test_colab_with_drive_mounted_goes_to_drive(tmp_path, capsys):
    root = checkpoint_root("auto", **roots(tmp_path, drive=True))
    assert root == tmp_path / "content/drive/MyDrive/tf-fast-course" and root.is_dir()
    assert "survives a disconnect" in capsys.readouterr().out


def test_colab_without_drive_says_the_folder_is_lost_and_how_to_mount(tmp_path, capsys):
    root = checkpoint_root("auto", **roots(tmp_path, content=True))
    assert root == tmp_path / "here" / "checkpoints"
    out = capsys.readouterr().out
    assert "LOST" in out and "drive.mount('/content/drive')" in out


def test_kaggle_goes_to_its_output_folder_and_names_the_persistence_setting(tmp_path, capsys):
    root = checkpoint_root("auto", **roots(tmp_path, kaggle=True))
    assert root == tmp_path / "kaggle/working/tf-fast-course"
    assert "Persistence" in capsys.readouterr().out


def test_elsewhere_a_local_folder(tmp_path, capsys):
    assert checkpoint_root("auto", **roots(tmp_path)) == tmp_path / "here" / "checkpoints"


def test_a_chosen_folder_wins_and_is_created(tmp_path, capsys):
    chosen = tmp_path / "mine" / "ckpt"
    assert checkpoint_root(str(chosen), **roots(tmp_path, drive=True)) == chosen and chosen.is_dir()
    assert "the folder you chose" in capsys.readouterr().out


@pytest.mark.parametrize("bad", ["", "  ", None, 3])
def test_bad_choice_is_a_clear_error(tmp_path, bad):
    with pytest.raises(CourseError, match=r"checkpoint_root\(.*give \"auto\" or a folder path"):
        checkpoint_root(bad, **roots(tmp_path))


def test_an_unwritable_folder_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(CourseError, match="cannot create .* choose a writable folder"):
        checkpoint_root(str(blocker / "sub"), **roots(tmp_path))
