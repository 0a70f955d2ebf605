"""The files that make the course publishable: licenses, credits, citation, changelog, one version."""

import re
import tomllib

from conftest import ROOT

import helpers


def test_the_version_is_set_once_and_citation_and_changelog_follow_it():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "helpers.__version__"}
    citation = (ROOT / "CITATION.cff").read_text()
    assert re.search(r'^version: "(.+)"$', citation, re.MULTILINE).group(1) == helpers.__version__
    released = re.findall(r"^## \[(\d[^\]]*)\] - (\d{4}-\d\d-\d\d)$", (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert released and released[0][0] == helpers.__version__, "CHANGELOG.md's latest release is not the version"
    assert re.search(r'^date-released: "(.+)"$', citation, re.MULTILINE).group(1) == released[0][1]


def test_the_licenses_and_credits_are_there_and_the_readme_names_them():
    readme = (ROOT / "README.md").read_text()
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "Attribution 4.0 International" in (ROOT / "LICENSES" / "CC-BY-4.0.txt").read_text()
    for name in ("LICENSE", "LICENSES/CC-BY-4.0.txt", "CITATION.cff", "CONTRIBUTING.md", "CHANGELOG.md"):
        assert f"]({name})" in readme, f"README does not link {name}"
    credits = readme[readme.index("## Credits"):readme.index("## License")]
    for source in ("eat_tensorflow2_in_30_days", "zhuanlan.zhihu.com/p/68509398", "Deep Learning with Python",
                   "TAIWANIA 2"):
        assert source in credits, source
