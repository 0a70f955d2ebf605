"""What the stored notebooks show a reader on GitHub: no wall-clock times or native log lines in their outputs, and
pictures that are files linked by an address every platform can load (not copies embedded in the notebook)."""

import base64
import re
from pathlib import Path

import nbformat
import pytest

from tools import template

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# absl's log prefix (E0000 00:00:1795610222.148845 20440 jpeg_mem.cc:331]), its warning before it is set up, and
# times of day as printbar() prints them or as dates print them; template.clean() masks printbar's.
NOISE = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d+\.\d+ +\d+ [\w.]+:\d+\]|absl::InitializeLog|"
                   r"^={80}\d\d:\d\d:\d\d|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d", re.MULTILINE)
MARKDOWN_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)|<img\s[^>]*src=[\"']([^\"']+)", re.IGNORECASE)


def raw_base() -> str:
    """Where GitHub serves this repository's files on main: what GitHub, Colab, Kaggle and JupyterLab all load."""
    return template.repository().replace("https://github.com/", "https://raw.githubusercontent.com/") + "/main/"


def noise(nb) -> list[str]:
    return [f"cell {i}: {found.group(0)!r}" for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for out in cell.outputs if out.output_type == "stream" for found in NOISE.finditer(out.text)]


def image_link_problems(nb) -> list[str]:
    """Markdown pictures of this repository that some platform cannot show: a relative path (Colab and Kaggle open
    the notebook alone), a github.com page instead of the file, or a file the repository does not have. Other sites'
    pictures (the badges) are theirs to serve."""
    found = []
    repository = template.repository().replace("https://", "").split("/", 1)[1]  # owner/name
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        for link in (a or b for a, b in MARKDOWN_IMAGE.findall(cell.source)):
            if link.startswith(raw_base()):
                if not (ROOT / link.removeprefix(raw_base())).is_file():
                    found.append(f"cell {i}: image {link} names no file of this checkout")
            elif "://" not in link or repository in link:
                found.append(f"cell {i}: image {link} is not linked as {raw_base()}PATH")
    return found


def embedded_screenshots(nb) -> list[str]:
    stored = {path.read_bytes(): path.name for path in (ROOT / "notebooks" / "images").glob("*.png")}
    return [f"cell {i} embeds {stored[data]}" for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for out in cell.outputs if "image/png" in out.get("data", {})
            if (data := base64.b64decode(out.data["image/png"])) in stored]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_outputs_hold_no_wall_clock_time_or_native_log_lines(path):
    assert noise(nbformat.read(path, as_version=4)) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_pictures_are_linked_files_every_platform_loads_and_not_embedded_copies(path):
    nb = nbformat.read(path, as_version=4)
    assert image_link_problems(nb) == []
    assert embedded_screenshots(nb) == []


def test_the_checks_catch_noise_relative_links_and_embedded_screenshots():
    screenshot = ROOT / "notebooks" / "images" / "tensorboard_profile_overview.png"
    code = nbformat.v4.new_code_cell("...")
    code.outputs = [
        nbformat.v4.new_output("stream", name="stderr", text=(
            "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
            "E0000 00:00:1795610222.148845   20440 jpeg_mem.cc:331] Premature end of JPEG data\n")),
        nbformat.v4.new_output("stream", name="stdout", text="=" * 80 + "15:41:23.315 UTC  start\n"),
        nbformat.v4.new_output("display_data", data={"image/png": base64.b64encode(screenshot.read_bytes()).decode()}),
    ]
    fine = nbformat.v4.new_code_cell("...")
    fine.outputs = [nbformat.v4.new_output("stream", name="stdout", text="=" * 80 + "HH:MM:SS.mmm TZ  start\n")]
    links = nbformat.v4.new_markdown_cell(
        "![ok](" + raw_base() + "notebooks/images/tensorboard_profile_overview.png)\n"
        "![relative](../notebooks/images/tensorboard_profile_overview.png)\n"
        "![missing](" + raw_base() + "notebooks/images/nope.png)\n"
        '<img src="' + template.repository() + '/blob/main/notebooks/images/tensorboard_profile_overview.png">\n'
        "![a badge](https://colab.research.google.com/assets/colab-badge.svg)")
    nb = nbformat.v4.new_notebook(cells=[code, fine, links])
    assert len(noise(nb)) == 3 and all(p.startswith("cell 0") for p in noise(nb))
    assert [p.split(": image ")[1].split()[0] for p in image_link_problems(nb)] == [
        "../notebooks/images/tensorboard_profile_overview.png", raw_base() + "notebooks/images/nope.png",
        template.repository() + "/blob/main/notebooks/images/tensorboard_profile_overview.png"]
    assert embedded_screenshots(nb) == ["cell 0 embeds tensorboard_profile_overview.png"]


def test_every_stored_picture_is_linked_by_a_notebook():
    linked = {link.removeprefix(raw_base()) for path in NOTEBOOKS for cell in nbformat.read(path, as_version=4).cells
              if cell.cell_type == "markdown" for a, b in MARKDOWN_IMAGE.findall(cell.source) for link in [a or b]}
    stored = {str(p.relative_to(ROOT)) for p in (ROOT / "notebooks" / "images").glob("*.png")}
    assert stored and stored <= linked, f"not shown by any notebook: {sorted(stored - linked)}"
