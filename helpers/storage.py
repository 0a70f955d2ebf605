"""Where checkpoints and backups go so that a disconnect does not take them: chapters 0 and 7 call
`checkpoint_root` with their CHECKPOINT_ROOT parameter.

Colab's disk (/content) is wiped when the runtime is recycled; Google Drive, once mounted, is not. Kaggle keeps
/kaggle/working between interactive sessions only with the notebook's Persistence setting on Files (Kaggle's
"Session Persistence for Variables and Files" announcement: best effort, up to the 20 GB output limit) and saves it
as the output of a saved version. Elsewhere a folder beside the notebooks is as durable as the machine.
"""

from __future__ import annotations

from pathlib import Path

from helpers.errors import CourseError

COLAB_DRIVE = Path("/content/drive/MyDrive")
KAGGLE_WORKING = Path("/kaggle/working")
FOLDER = "tf-fast-course"


def checkpoint_root(choice: str | Path = "auto", *, colab_drive: Path = COLAB_DRIVE,
                    kaggle_working: Path = KAGGLE_WORKING, local: Path = Path("checkpoints")) -> Path:
    """The folder for checkpoints, created, with one printed line saying where it is and whether it survives the
    runtime. `choice`: "auto" (Drive when mounted on Colab, /kaggle/working on Kaggle, else ./checkpoints) or a
    folder of yours."""
    if not isinstance(choice, (str, Path)) or not str(choice).strip():
        raise CourseError(f"checkpoint_root({choice!r}): give \"auto\" or a folder path, e.g. "
                          "CHECKPOINT_ROOT = \"/content/drive/MyDrive/checkpoints\".")
    if str(choice) != "auto":
        root, why = Path(choice).expanduser(), "the folder you chose"
    elif colab_drive.is_dir():
        root, why = colab_drive / FOLDER, "Google Drive: survives a disconnect and a new runtime"
    elif kaggle_working.is_dir():
        root, why = kaggle_working / FOLDER, ("Kaggle's output folder: kept between sessions with Settings > "
                                              "Persistence > Files, and saved with a version (Save Version)")
    elif colab_drive.parent.parent.is_dir():  # /content exists: Colab without Drive
        root, why = local.resolve(), ("the runtime's own disk: LOST when Colab recycles the runtime. Mount Drive "
                                      "first (from google.colab import drive; drive.mount('/content/drive')) and "
                                      "run this cell again")
    else:
        root, why = local, "a folder beside this notebook, on this machine's disk"
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CourseError(f"checkpoint_root: cannot create {root} ({err.strerror}); choose a writable folder for "
                          "CHECKPOINT_ROOT.") from None
    print(f"Checkpoints go to {root} ({why}).")
    return root
