"""Every notebook follows the template (tools/template.py) and stores clean, in-order outputs."""

import re

import nbformat
import pytest

import helpers
from tools import prose, template

NOTEBOOKS = sorted(template.NOTEBOOKS.glob("*.ipynb"))


def test_there_are_notebooks_named_by_chapter():
    assert NOTEBOOKS, "no notebooks found"
    for path in NOTEBOOKS:
        assert path.stem[:2].isdigit() and path.stem[2] == "_", f"{path.name}: name it NN_short_name.ipynb"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_follows_template(path):
    assert template.problems(path) == []


def test_setup_cell_is_identical_everywhere_but_for_the_jax_chapters_backend():
    notebooks = [nbformat.read(p, as_version=4) for p in NOTEBOOKS]
    backends = {path.name: template.backend_of(nb) for path, nb in zip(NOTEBOOKS, notebooks)}
    jax_chapters = {name for name, backend in backends.items() if backend == "jax"}
    assert jax_chapters == {"05_tpu.ipynb", "09_bigger_than_one_device.ipynb"}
    for nb, path in zip(notebooks, NOTEBOOKS):
        assert nb.cells[2].source == template.setup_source(helpers.__version__, backends[path.name]), path.name
    assert template.setup_source("1.2.3", "jax").endswith(
        'helpers.setup(  # AttributeError: rename your helpers.py\n'
        '    fast=FAST, devices=DEVICES, version=VERSION, backend="jax")')


def test_setup_cell_installs_this_version_in_short_lines_and_names_no_commit():
    source = template.setup_source(helpers.__version__, "jax")
    assert max(len(line) for line in source.splitlines()) <= 100  # Colab wraps longer lines
    code = [line for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert len(code) <= 18, "\n".join(code)
    assert f'VERSION, SOURCE = "{helpers.__version__}", os.environ.get("COURSE_SOURCE", "")' in source
    assert '["tf-fast-course==" + VERSION, *index]' in source
    for path in NOTEBOOKS:  # a change to helpers/ alone changes no notebook: none holds a commit
        assert not re.search(r"\b[0-9a-f]{40}\b", path.read_text()), path.name


def test_no_notebook_offers_a_backend_parameter():
    # every chapter runs on one backend only: a BACKEND choice would offer one that fails
    for path in NOTEBOOKS:
        assert "BACKEND" not in nbformat.read(path, as_version=4).cells[1].source, path.name


def test_setup_cell_is_folded_as_plumbing():
    for path in NOTEBOOKS:
        metadata = nbformat.read(path, as_version=4).cells[2].metadata
        assert metadata.get("cellView") == "form" and metadata.get("jupyter", {}).get("source_hidden"), path.name


def test_badges_point_at_each_notebooks_own_path():
    for path in NOTEBOOKS:
        header = nbformat.read(path, as_version=4).cells[0].source
        own = f"/blob/v{helpers.__version__}/notebooks/{path.name}"  # the release tag's copy, which installs it
        assert header.count(own) == 2, f"{path.name}: both badges must link to {own}"


def test_the_readme_starts_learners_at_chapter_0_of_the_release():
    assert template.readme_badges() in (template.ROOT / "README.md").read_text().splitlines()
    assert f"/blob/v{helpers.__version__}/notebooks/00_runtime_and_accelerators.ipynb" in template.readme_badges()


def test_check_catches_a_broken_notebook(tmp_path):
    nb = nbformat.read(NOTEBOOKS[0], as_version=4)
    nb.cells[2].source += "\nprint('edited')"
    timing = nbformat.v4.new_code_cell("measure(lambda: 1)", execution_count=99)
    timing.outputs = [nbformat.v4.new_output("error", ename="E", evalue="x", traceback=[])]
    nb.cells.append(timing)
    broken = tmp_path / f"99_{NOTEBOOKS[0].name}"  # another name: its badges now point elsewhere
    nbformat.write(nb, broken)
    found = "\n".join(template.problems(broken))
    assert "setup cell" in found
    assert "badges" in found
    assert "error output" in found
    assert "not executed in order" in found
    assert "nbval-ignore-output" in found


@pytest.mark.parametrize("parameters, expected", [({"FAST": "fast", "DEVICES": 2}, ("fast", 2)),
                                                  ({"FAST": False}, (False, None))])
def test_papermill_parameters_override_the_form_defaults(parameters, expected):
    # `papermill -p FAST fast ...` injects a cell right after the tagged parameters cell, before the setup cell.
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    nb = parameterize_notebook(load_notebook_node(str(NOTEBOOKS[0])), parameters)
    assert "injected-parameters" in nb.cells[2].metadata.tags and nb.cells[3].source.startswith("# @title Setup")
    namespace = {}
    for cell in nb.cells[1:3]:
        exec(cell.source, namespace)
    assert (namespace["FAST"], namespace["DEVICES"]) == expected


@pytest.mark.parametrize("text, flagged", [
    ("tf.data was about 3-4x faster here.", "'3-4x'"),
    ("The first epoch took 34.2 s on this machine.", "'34.2 s'"),
    ("It reached 1,473 samples/s.", "'1,473 samples/s'"),
    ("Decoding cost 26% more.", "'26%'"),
    ("The guide reports about 50% more throughput.", None),  # a published figure with its source
    ("Goyal et al. saw it break down at 8k.", None),
    ("Suppose a step spends 0.8 s on input.", None),  # a hypothetical
    ("Make it at least 2x as fast.", None),  # a goal
    ("A (10000 x 100) matrix, TensorFlow 2.x, and `time.sleep(0.002)` in code.", None),  # no measured unit
])
def test_markdown_figure_check(text, flagged):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_markdown_cell(text)])
    found = prose.figure_problems(nb)
    if flagged is None:
        assert found == []
    else:
        [problem] = found
        assert problem.startswith(f"cell 1: markdown states {flagged} without a source")


def test_the_header_may_state_the_run_time():
    header = nbformat.v4.new_markdown_cell("# T\n## Time and hardware\n- Fast mode: 65 s.")
    nb = nbformat.v4.new_notebook(cells=[header])
    assert prose.figure_problems(nb) == []


def test_a_figure_needs_a_caption_right_after_it():
    plot = nbformat.v4.new_code_cell("fig = bars(...)", execution_count=1)
    plot.outputs = [nbformat.v4.new_output("display_data", data={"image/png": "iVBOR", "text/plain": "<Figure>"})]
    nb = nbformat.v4.new_notebook(cells=[plot, nbformat.v4.new_markdown_cell("More text.")])
    assert template.output_problems(nb) == [
        "cell 0 draws a figure without a caption (a markdown cell '*Figure: ... Look at ...*' right after it)"]
    nb.cells[1].source = "*Figure: the bars. Look at the first one.*"
    assert template.output_problems(nb) == []


@pytest.mark.parametrize("text, flagged", [
    ("The cached pipeline was faster here.", "'faster'"),
    ("Scaling the rate recovers most of that gap.", "'recovers most of'"),
    ("Input dominates the step on this runtime.", "'dominates'"),
    ("The two policies are within noise.", "'within noise'"),
    ("Two replicas ran twice as fast as one.", "'twice as fast'"),
    ("If the cached pipeline is not faster, look at the decode step.", None),  # a condition
    ("Look at which bar is taller: that is the faster pipeline.", None),  # what to look for
    ("The formula predicts a 2x speed-up.", None),  # a prediction
    ("Goyal et al. report near-linear speed-ups up to 8k.", None),  # a published figure with its source
    ("## Make a slow pipeline faster", None),  # a heading
    ("The printed verdict says which pipeline is faster.", None),
])
def test_markdown_comparative_reading_check(text, flagged):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_markdown_cell(text)])
    found = prose.comparative_problems(nb)
    if flagged is None:
        assert found == []
    else:
        [problem] = found
        assert problem.startswith(f"cell 1: markdown reads a measurement ({flagged})")


def test_the_header_may_promise_a_faster_pipeline():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T\n- A pipeline 10 times faster.")])
    assert prose.comparative_problems(nb) == []


def test_a_markdown_cell_over_250_words_is_flagged():
    short, long = "word " * 250, "word " * 251
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(short), nbformat.v4.new_markdown_cell(long)])
    assert prose.long_markdown_problems(nb) == ["cell 1: markdown of 251 words (at most 250: split it, fold "
                                                   "version notes into <details>)"]


def test_glossary_links_must_name_a_term_it_has():
    cell = nbformat.v4.new_markdown_cell("[XLA](https://x/GLOSSARY.md#xla) and [it](https://x/GLOSSARY.md#no-such-term)")
    assert prose.glossary_problems(nbformat.v4.new_notebook(cells=[cell])) == [
        "cell 0: links GLOSSARY.md#no-such-term, which has no such heading (add the term to GLOSSARY.md)"]
    assert {"the-original-tutorials", "self-time", "tf_config", "avx-512-bf16"} <= prose.glossary_anchors()
