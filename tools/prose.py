"""The prose rules every notebook's markdown follows: no figure typed by hand without a source, no reading of a
measurement (the code that measured it prints the reading), links into the glossary that land, cells a learner reads
on one screen. `tools/template.py` reports what they find; `tests/tools/test_template.py` tests each rule."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# A figure with a unit of time, rate or speed-up ("about 3-4x", "took 10 s", "1,200 images/s") in markdown is a
# measurement typed by hand unless its sentence names a published source; measured figures are printed by the code.
FIGURE = re.compile(r"(?<![\w.$-])\d(?:[\d,]*\d)?(?:\.\d+)?(?:\s*[-\u2013]\s*\d(?:[\d,]*\d)?(?:\.\d+)?)?\s*"
                    r"(?:x(?![\w\s]*\d)\b|\u00d7(?!\s*\d)|%|ms\b|s\b|seconds?\b|minutes?\b|hours?\b|"
                    r"(?:images|samples|steps|examples)/s\b|[GT]FLOP/s)", re.IGNORECASE)
# A sentence that names its source, or states a hypothetical, a rule of thumb or a goal, may quote a figure.
CITATION = re.compile(r"https?://|\bet al\.|\b30-days tutorial\b|\bColab article\b|\bChollet\b|\bTAIWANIA\b|"
                      r"\bbook\b|\bguide\b|\bblog\b|\bpaper\b|\bpublished\b|"
                      r"\bdatasheet\b|\bdocs\b|\bFAQ\b|\bwould\b|\bsuppose\b|\bsay\b|\be\.g\.|\bif\b|"
                      r"\bat least\b|\bgoal\b", re.IGNORECASE)


def figure_problems(nb) -> list[str]:
    """Markdown sentences (outside the header's Time and hardware) that state a figure no code printed."""
    found = []
    for i, cell in enumerate(nb.cells[1:], start=1):
        if cell.cell_type != "markdown":
            continue
        text = re.sub(r"```.*?```|`[^`]*`", "", cell.source, flags=re.DOTALL)  # code is not prose
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z*(])|\n\s*\n|\n\s*[-*>] ", text):
            figure = FIGURE.search(sentence)
            if figure and not CITATION.search(sentence):
                found.append(f"cell {i}: markdown states {figure.group(0)!r} without a source; print measured figures "
                             f"from the code that measured them: {' '.join(sentence.split())[:90]!r}")
    return found


# A comparative reading ("the cached pipeline is faster", "most of the gap", "within noise") in markdown reads a
# measurement by hand, and drifts from what the code printed. Markdown may say what to look for, state a condition,
# predict, or quote a source; the reading itself is printed by the code that measured it.
COMPARATIVE = re.compile(
    r"\b(?:faster|slower|quicker|speed-?ups?|sped up|slows? (?:it |things |training )?down|outperform\w*|beats?|"
    r"dominat\w*|bottleneck\w*|(?:most|much|half|the bulk|the majority) of the (?:time|step|gap|gain|work|cost)|"
    r"within (?:the )?noise|outside (?:the )?noise|(?:twice|half|\w+ times) as (?:fast|slow|long|much|many)|"
    r"as fast as|keeps? up|recover\w* (?:most|much|all|part|half) of|(?:more|less) time than|cheaper|costlier)\b",
    re.IGNORECASE)
# What to look for, a condition, a prediction or a question: not a reading of this run.
LOOK_FOR = re.compile(r"\b(?:if|whether|unless|look|check|compare|expect\w*|predict\w*|should|would|could|can|"
                      r"may|might|aim|goal|try|ask|question|why|how|which|what|formula|in theory|in principle|"
                      r"print\w*|verdict|tells?|reads?|says?|makes?|needs?)\b|\?|^\s*#", re.IGNORECASE)


def comparative_problems(nb) -> list[str]:
    """Markdown sentences (outside the header) that read a measurement comparatively instead of letting the code
    print the reading."""
    found = []
    for i, cell in enumerate(nb.cells[1:], start=1):
        if cell.cell_type != "markdown":
            continue
        text = re.sub(r"```.*?```|`[^`]*`", "", cell.source, flags=re.DOTALL)
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z*(])|\n\s*\n|\n\s*[-*>] ", text):
            word = COMPARATIVE.search(sentence)
            if word and not LOOK_FOR.search(sentence) and not CITATION.search(sentence):
                found.append(f"cell {i}: markdown reads a measurement ({word.group(0)!r}); say what to look for and "
                             f"let the code print the reading: {' '.join(sentence.split())[:90]!r}")
    return found


GLOSSARY_LINK = re.compile(r"GLOSSARY\.md#([\w-]+)")


def glossary_anchors() -> set[str]:
    """GitHub's anchors for GLOSSARY.md's headings: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", (ROOT / "GLOSSARY.md").read_text(), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def glossary_problems(nb) -> list[str]:
    """Links into the glossary whose term it lacks."""
    anchors = glossary_anchors()
    return [f"cell {i}: links GLOSSARY.md#{anchor}, which has no such heading (add the term to GLOSSARY.md)"
            for i, cell in enumerate(nb.cells) if cell.cell_type == "markdown"
            for anchor in GLOSSARY_LINK.findall(cell.source) if anchor not in anchors]


def long_markdown_problems(nb, limit: int = 250) -> list[str]:
    """Markdown cells a learner cannot read on one screen."""
    return [f"cell {i}: markdown of {n} words (at most {limit}: split it, fold version notes into <details>)"
            for i, cell in enumerate(nb.cells) if cell.cell_type == "markdown"
            for n in [len(cell.source.split())] if n > limit]
