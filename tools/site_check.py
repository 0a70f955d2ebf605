"""The self-study site (build/site/, `make site`) in headless Chromium, as a reader opens it.

    python -m tools.site_check  # every page; `make test-site` runs tests/browser/test_site.py

The site is served over http on 127.0.0.1 (a thread of this process); each page must answer, carry its title and
show no error page; every relative link on it must answer 200 (and its #anchor exist on the target page); every
picture from the site itself must be displayed (naturalWidth > 0). Pages reach nothing but 127.0.0.1: the only
outside requests allowed are the Colab and Kaggle badges, which stay blank offline. A full-page screenshot of every
page lands in build/site-screenshots/.
"""

from __future__ import annotations

import contextlib
import functools
import html
import json
import re
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tools import browser

ROOT = browser.ROOT
SITE, SCREENSHOTS = ROOT / "build" / "site", ROOT / "build" / "site-screenshots"
BADGES = ("https://colab.research.google.com/assets/colab-badge.svg", "https://kaggle.com/static/images/")
# Every <a href> and every <img> on the page, as written and as resolved by the browser.
READ_PAGE = """async () => {
  const imgs = [...document.images];
  imgs.forEach((img) => { img.loading = 'eager'; });
  await Promise.all(imgs.map((img) => img.complete ? null : new Promise((done) => {
    img.addEventListener('load', done); img.addEventListener('error', done); setTimeout(done, 5000); })));
  return {h1: (document.querySelector('main h1, article h1, h1') || {}).textContent || '',
          links: [...document.querySelectorAll('a[href]')].map((a) => [a.getAttribute('href'), a.href]),
          images: imgs.map((img) => [img.src, img.naturalWidth])};
}"""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no line per request
        pass


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):  # a page closed before its last picture arrived: not news
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextlib.contextmanager
def serve(folder: Path):
    """`folder` over http on 127.0.0.1 (a free port), from a thread; yields the base URL."""
    if not (folder / "index.html").is_file():
        raise SystemExit(f"No site in {folder}: build it first with `make site`.")
    httpd = _Server(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def pages(folder: Path = SITE) -> list[str]:
    """The pages a reader opens: the index, every chapter, the glossary, the instructor's page (not the front door,
    index.html, which only sends the reader to docs/index.html)."""
    return [p.relative_to(folder).as_posix() for p in sorted(folder.rglob("*.html"))
            if not p.relative_to(folder).parts[0].startswith("_") and p.parent != folder or p.name == "GLOSSARY.html"]


def title(path: str, root: Path = ROOT) -> str:
    """The first heading of the source of the page at `path` (notebooks/X.html: notebooks/X.ipynb; else X.md)."""
    source = root / path.removesuffix(".html")
    if source.parent.name == "notebooks":
        text = json.loads(source.with_suffix(".ipynb").read_text())["cells"][0]["source"]
        text = "".join(text) if isinstance(text, list) else text
    else:
        text = source.with_suffix(".md").read_text()
    heading = next(line for line in text.splitlines() if line.startswith("# "))
    return re.sub(r"[`*_]", "", heading[2:]).strip()


@functools.cache
def _body(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as err:
        return err.code, ""


def shot_name(path: str) -> str:
    """The screenshot's file name for the page at `path` (JPEG: a chapter is some 24,000 pixels tall, and a PNG of
    it takes twice as long to encode)."""
    return path.replace("/", "_").removesuffix(".html") + ".jpg"


def check_page(context, base: str, path: str, title: str, out: Path = SCREENSHOTS) -> list[str]:
    """What a reader would find wrong on the page at base+path, whose heading should start with `title`."""
    page, outside = context.new_page(), []
    page.on("request", lambda r: None if r.url.startswith(base) else outside.append((r.resource_type, r.url)))
    try:
        answer = page.goto(base + path, wait_until="load")
        if answer is None or answer.status != 200:
            return [f"{path}: answered {answer.status if answer else 'nothing'}"]
        seen = page.evaluate(READ_PAGE)
        problems = []
        heading = re.sub(r"\s+", " ", seen["h1"]).replace("#", "").replace("\u00b6", "").replace("\u2019", "'").strip()
        if not heading.startswith(title):
            problems.append(f"{path}: heading {heading!r}, expected one starting {title!r}")
        for written, url in seen["links"]:
            if re.match(r"^[a-z]+:", written) or not url.startswith(base):
                continue  # an outside address (GitHub, papers), mailto:
            target, _, anchor = url.partition("#")
            status, text = _body(target)
            if status != 200:
                problems.append(f"{path}: link {written!r} answers {status}")
            elif anchor and f'id="{html.escape(urllib.parse.unquote(anchor))}"' not in text:
                problems.append(f"{path}: link {written!r}: no #{anchor} on that page")
        for src, width in seen["images"]:
            if src.startswith(base) and not width:
                problems.append(f"{path}: picture {src.removeprefix(base)} not displayed")
        problems += [f"{path}: asked the network for a {kind}: {url}" for kind, url in outside
                     if not (kind == "image" and url.startswith(BADGES))]
        out.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out / shot_name(path)), full_page=True, type="jpeg", quality=75)
        return problems
    finally:
        page.close()


def main() -> int:
    with serve(SITE) as base, browser.chromium() as context:
        problems = [p for path in pages() for p in check_page(context, base, path, title(path))]
    print("\n".join(problems) or f"{len(pages())} pages: OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
