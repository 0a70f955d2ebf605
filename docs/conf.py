"""Sphinx configuration of the course's site (`make site`): the stored notebooks as they are, never executed.

    python -m sphinx -W -c docs . build/site   # what `make site` runs, from the repository root

The source folder is the repository root, so links between notebooks, GLOSSARY.md and docs/ read the same on GitHub
and on the site. myst-nb renders the notebooks with their stored outputs; sphinx-book-theme lays out the book.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPOSITORY = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
MINUTES = ROOT / "docs" / "fast_mode_minutes.json"
# In docs/instructors.md, the block the minutes table replaces (what GitHub shows instead).
MINUTES_BLOCK = re.compile(r"<!-- fast-mode minutes: .*?<!-- end of fast-mode minutes -->", re.DOTALL)

project = "Fast and scalable training with TensorFlow and Keras"
author = "the course's authors"
copyright = "the course's authors; text and figures CC BY 4.0, code MIT"
root_doc = "docs/index"
include_patterns = ["docs/*.md", "notebooks/*.ipynb", "GLOSSARY.md"]
exclude_patterns = ["docs/ci.md", "docs/verdicts.md"]  # for maintainers (CI's time, readings over runs), not pages
extensions = ["myst_nb"]
nb_execution_mode = "off"  # the stored outputs, exactly as committed
myst_heading_anchors = 3  # GitHub's anchors for headings (GLOSSARY.md#xla)
html_theme = "sphinx_book_theme"
html_title = "Fast TensorFlow/Keras training"
html_theme_options = {"repository_url": REPOSITORY, "use_repository_button": True, "show_toc_level": 2}
html_last_updated_fmt = None


def local_links(text: str) -> str:
    """The notebooks link the glossary and their pictures by their address on GitHub (so the links work on Colab and
    Kaggle); on the site the same files are the site's own pages and pictures."""
    raw = REPOSITORY.replace("https://github.com/", "https://raw.githubusercontent.com/")
    return (text.replace(f"{raw}/main/notebooks/images/", "images/")
            .replace(f"{REPOSITORY}/blob/main/GLOSSARY.md", "../GLOSSARY.md"))


def minutes_table(path: Path = MINUTES) -> str:
    """The instructor's page's table of measured fast-mode minutes, from the JSON tools/fast_mode_minutes.py writes."""
    if not path.is_file():
        return f"No measurements yet: `python -m tools.fast_mode_minutes --runs 3` writes `{path.name}`."
    data = json.loads(path.read_text())
    machine = data["machine"]
    lines = [f"Measured by `tools/fast_mode_minutes.py` on {machine['cpu']}, pinned to {machine['cores']} cores, "
             f"{machine['date']}: TensorFlow {machine['tensorflow']}, Keras {machine['keras']}, Python "
             f"{machine['python']}, `{data['env']}`, each notebook in a fresh kernel as `make run` runs it.", "",
             "| chapter | runs | median | fastest - slowest |", "| --- | --- | --- | --- |"]
    for name, row in data["notebooks"].items():
        lines.append(f"| [{name.removesuffix('.ipynb')}](../notebooks/{name}) | {row['runs']} | "
                     f"{row['median_s'] / 60:.1f} min ({row['median_s']:.0f} s) | "
                     f"{row['min_s']:.0f} - {row['max_s']:.0f} s |")
    others = data.get("other_devices", {})
    if others:  # the other device counts, one column each: median seconds (runs)
        counts = sorted(others, key=int)
        lines += ["", "The same notebooks with other numbers of logical devices (`COURSE_DEVICES`), median seconds:",
                  "", "| chapter | " + " | ".join(f"{n} devices" for n in counts) + " |",
                  "| --- |" + " --- |" * len(counts)]
        for name in sorted({name for table in others.values() for name in table}):
            cells = [f"{others[n][name]['median_s']:.0f} s ({others[n][name]['runs']} runs)" if name in others[n]
                     else "not measured" for n in counts]
            lines.append(f"| {name.removesuffix('.ipynb')} | " + " | ".join(cells) + " |")
    missing = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb") if p.name not in data["notebooks"])
    if missing:
        lines += ["", f"Not measured yet: {', '.join(n.removesuffix('.ipynb') for n in missing)}."]
    if data.get("note"):
        lines += ["", data["note"]]
    return "\n".join(lines)


def on_source_read(app, docname: str, source: list[str]) -> None:
    if docname.startswith("notebooks/"):
        notebook = json.loads(local_links(source[0]))
        # Notebook code is IPython (a `!` line or a %magic is not Python): highlight it as JupyterLab does.
        notebook["metadata"].setdefault("language_info", {})["pygments_lexer"] = "ipython3"
        source[0] = json.dumps(notebook)
    if docname == "docs/instructors":
        source[0] = MINUTES_BLOCK.sub(lambda _: minutes_table(), source[0])


def front_door(app, exception) -> None:
    """The site's address opens the course's first page (as Jupyter Book does when its first page is not index)."""
    if exception is None and app.builder.format == "html":
        (Path(app.outdir) / "index.html").write_text(
            '<!DOCTYPE html><meta charset="utf-8"><title>Redirecting</title>'
            '<meta http-equiv="refresh" content="0; url=docs/index.html"><a href="docs/index.html">The course</a>\n')


def setup(app):
    app.connect("source-read", on_source_read)
    app.connect("build-finished", front_door)
