"""`make test-site`: the self-study site (build/site/, `make site`) in headless Chromium.

Every page a reader opens renders with its title, every link within the site answers (and its #anchor exists),
every picture of the site shows, and nothing but the Colab/Kaggle badges asks the network for anything.
Full-page screenshots in build/site-screenshots/.
"""

from __future__ import annotations

import pytest

from tools import browser, site_check

PAGES = site_check.pages() if (site_check.SITE / "index.html").is_file() else []


@pytest.fixture(scope="module")
def site():
    with site_check.serve(site_check.SITE) as base, browser.chromium() as context:
        yield context, base


def test_the_site_has_the_index_every_chapter_the_glossary_and_the_instructors_page():
    chapters = sorted(p.stem for p in (site_check.ROOT / "notebooks").glob("*.ipynb"))
    assert PAGES, "no site in build/site: build it with `make site`"
    assert sorted(PAGES) == sorted(["GLOSSARY.html", "docs/index.html", "docs/instructors.html",
                                    *(f"notebooks/{name}.html" for name in chapters)])


def test_the_front_door_opens_the_index(site):
    context, base = site
    page = context.new_page()
    try:
        page.goto(base)
        page.wait_for_url(f"{base}docs/index.html")
        assert page.locator("h1").first.inner_text().startswith(site_check.title("docs/index.html"))
    finally:
        page.close()


@pytest.mark.parametrize("path", PAGES)
def test_the_page_renders_its_links_answer_its_pictures_show(site, path):
    problems = site_check.check_page(*site, path, site_check.title(path))
    assert not problems, "\n".join(problems)
    assert (site_check.SCREENSHOTS / site_check.shot_name(path)).is_file()


def test_a_broken_link_a_missing_anchor_and_a_missing_picture_are_found(site, tmp_path):
    (tmp_path / "index.html").write_text('<h1>Start</h1><a href="gone.html">x</a><a href="other.html#nowhere">y</a>'
                                         '<a href="other.html#here">z</a><img src="missing.png">'
                                         '<img src="https://example.org/logo.png">')
    (tmp_path / "other.html").write_text('<h1 id="here">Other</h1>')
    with site_check.serve(tmp_path) as base:
        assert site_check.check_page(site[0], base, "index.html", "Start", tmp_path / "shots") == [
            "index.html: link 'gone.html' answers 404",
            "index.html: link 'other.html#nowhere': no #nowhere on that page",
            f"index.html: picture {base}missing.png not displayed".replace(base, ""),
            "index.html: asked the network for a image: https://example.org/logo.png",
        ]
    assert (tmp_path / "shots" / "index.jpg").is_file()
