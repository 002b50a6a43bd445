"""The docs site as a reader meets it: every preview page opened in headless Chromium at 1280 px.

`tools/preview_site.py` renders the notebooks the way the Quarto site does; this test serves those pages
from a local `http.server`, opens each in Debian's `chromium` (driven over the Chrome DevTools protocol
with `websocket-client`), saves a full-page screenshot (into `$SSM_MECH_SCREENSHOTS`, default
`tests/screenshots/`) and checks what a reader would see:

* `broken-image`: an image of the page that did not load (`naturalWidth` 0); images on other hosts
  (badges) are not checked, the test runs offline;
* `widget-repr`: an ipywidget's text repr (`VBox(children=…`) where the widget would be;
* `truncated-table`: a table cell reading "…" / "..." (rows or columns dropped by pandas) or ending in
  one (a value cut at pandas' column width);
* `large-stderr`: a stderr block over 4 KB (progress-bar residue, warnings);
* `no-prose-first-screen`: no paragraph of prose (a `<p>` of ≥ 60 characters, outside the title block
  and cell outputs) in the top 800 px of the page.
* `uncaptioned-figure`: a figure a cell draws (an image output) that is not numbered and captioned
  ("Figure N: …", from `#| label: fig-…` and `#| fig-cap`); images inside an HTML output (a report
  embedded as it is) are not checked;
* `long-number`: a number printed with 6 or more decimals in a cell output (`0.9998316168785095`):
  round it, or print it in scientific notation with a few significant digits.
* `wide-figure`: a figure saved wider than 1,400 px (its natural width), or drawn past the content
  column's right edge;
* `wide-table`: a table wider than the content column that does not scroll inside it (no ancestor
  within the column that scrolls horizontally and fits);
* `no-where-we-differ` (chapters 10–18): no "Where we differ" section (an `<h2>`);
* `stale-status` (chapters 10–18): a phrase that states a sweep's status by hand ("still running",
  "not run yet", "so far", …) on a page whose sweeps have all settled, as `tests/test_chapters.py`
  computes it from the stored files;
* `no-reproduced-count` (the index): its first screen (the top 800 px) does not say how many of the
  paper's cells were run on its data and how many agree.

Today's failures of the real pages are listed in `tests/browser_known_issues.txt` (`page: check`, the
page named by its notebook); a failure not listed fails the test, and so does a listed one that no
longer occurs, so the list only shrinks. Without Chromium the test skips and says so.
"""
from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import preview_site  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from test_chapters import FIGURE_MAX_PX, nb, stale_phrases, sweep_settled, sweeps_read  # noqa: E402

KNOWN = Path(__file__).with_name("browser_known_issues.txt")
SHOTS = Path(os.environ.get("SSM_MECH_SCREENSHOTS", ROOT / "tests" / "screenshots"))
WIDTH, FIRST_SCREEN, STDERR_MAX, PROSE_MIN = 1280, 800, 4096, 60
SHOT_MAX_H = 16384  # Chromium's largest capture; a taller page is shot down to this height
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--mute-audio", f"--window-size={WIDTH},{FIRST_SCREEN}",
                  # offline and fast: nothing but the local server resolves
                  "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"]


def find_chromium() -> str | None:
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if name and shutil.which(name): return shutil.which(name)
    return None


CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium installed: `apt-get install -y chromium` (Debian) to check the "
                             "preview pages in a real browser; .ci/run installs it")

# --------------------------------------------------------------------------------------------- checks
# Runs in the page; returns [[check, detail], ...].
CHECKS_JS = r"""
(() => {
  const out = [], W = %(stderr_max)d, P = %(prose_min)d, H = %(first_screen)d, FMAX = %(fmax)d;
  const cut = (s, n=70) => { s = s.replace(/\s+/g, ' ').trim(); return s.length > n ? s.slice(0, n) + '…' : s; };
  document.querySelectorAll('img').forEach((img, i) => {
    const src = img.getAttribute('src') || '';
    const local = src.startsWith('data:') || new URL(img.src, location.href).host === location.host;
    if (local && img.complete && img.naturalWidth === 0)
      out.push(['broken-image', `image ${i + 1} (${cut(src.startsWith('data:') ? src.slice(0, 30) : src, 60)}) did not load`]);
  });
  const widget = /\b(VBox|HBox|Box|GridBox|Tab|Accordion|Stack|interactive|Output|IntSlider|FloatSlider|IntRangeSlider|FloatRangeSlider|SelectionSlider|Dropdown|Select|RadioButtons|ToggleButtons|Button|Checkbox|ToggleButton|Text|Textarea|Label|HTML|HTMLMath|Image|Play|IntText|FloatText|BoundedIntText|BoundedFloatText)\((children|value|description|options|layout|outputs|index|min|max)=/;
  const shown = document.body.cloneNode(true);  // what the page shows, less the source code it quotes
  shown.querySelectorAll('.sourceCode, script, style').forEach(e => e.remove());
  const t = shown.textContent || '', wm = t.match(widget);
  if (wm) {
    const k = t.indexOf(wm[0]);
    out.push(['widget-repr', `an ipywidget's text repr is shown: "${cut(t.slice(k, k + 80), 60)}"`]);
  }
  document.querySelectorAll('table').forEach((tb, ti) => {
    const bad = [];
    tb.querySelectorAll('td, th').forEach(c => {
      const s = c.textContent.trim();
      if (s === '…' || s === '...') bad.push(`"${s}"`);
      else if (s.length > 3 && (s.endsWith('...') || s.endsWith('…'))) bad.push(`"${cut(s, 40)}"`);
    });
    if (bad.length) {
      const near = cut((tb.closest('.cell, .cell-markdown') || tb).previousElementSibling?.textContent || '', 40);
      out.push(['truncated-table', `table ${ti + 1}${near ? ' (after "' + near + '")' : ''}: ${bad.length} truncated cell(s), e.g. ${bad.slice(0, 2).join(', ')}`]);
    }
  });
  document.querySelectorAll('.cell-output-stderr').forEach((e, i) => {
    const n = e.textContent.length;
    if (n > W) out.push(['large-stderr', `stderr block ${i + 1}: ${(n / 1024).toFixed(1)} KB (max ${W / 1024} KB), ${Math.round(e.getBoundingClientRect().height)} px tall`]);
  });
  // an image output: a display output holding images only (not an HTML output that embeds some)
  [...document.querySelectorAll('.cell-output-display')].filter(o => o.children.length &&
      [...o.children].every(e => e.tagName === 'IMG')).map(o => o.children[0]).forEach((img, i) => {
    const cap = img.closest('figure')?.querySelector('figcaption');
    if (!cap || !/^Figure\s\d+:/.test(cap.textContent.trim()))
      out.push(['uncaptioned-figure', `figure ${i + 1} has ${cap ? 'a caption but no number: "' + cut(cap.textContent, 40) + '"' : 'no caption'}`]);
  });
  document.querySelectorAll('.cell-output').forEach((o, i) => {
    const c = o.cloneNode(true);
    c.querySelectorAll('script, style').forEach(e => e.remove());
    const m = (c.textContent || '').match(/(?<![\w.])-?\d+\.\d{6,}(?![\d.])/);
    if (m) out.push(['long-number', `output ${i + 1}: ${m[0]}`]);
  });
  const col = document.querySelector('main > article') || document.body, colBox = col.getBoundingClientRect();
  document.querySelectorAll('.cell-output img, .cell-markdown img, figure img').forEach((img, i) => {
    const src = img.getAttribute('src') || '', b = img.getBoundingClientRect();
    const local = src.startsWith('data:') || new URL(img.src, location.href).host === location.host;
    if (!local || !img.naturalWidth) return;
    if (img.naturalWidth > FMAX) out.push(['wide-figure', `figure ${i + 1} saved ${img.naturalWidth} px wide (max ${FMAX})`]);
    else if (b.right > colBox.right + 1) out.push(['wide-figure', `figure ${i + 1} drawn ${Math.round(b.right - colBox.right)} px past the column`]);
  });
  document.querySelectorAll('table').forEach((tb, ti) => {
    const w = tb.getBoundingClientRect().width;
    if (w <= colBox.width + 1) return;
    for (let e = tb.parentElement; e && e !== col.parentElement; e = e.parentElement) {
      const ox = getComputedStyle(e).overflowX;
      if ((ox === 'auto' || ox === 'scroll') && e.getBoundingClientRect().width <= colBox.width + 1) return;   // it scrolls within the column
    }
    const near = cut((tb.closest('.cell, .cell-markdown') || tb).previousElementSibling?.textContent || '', 40);
    out.push(['wide-table', `table ${ti + 1}${near ? ' (after "' + near + '")' : ''}: ${Math.round(w)} px, the column ${Math.round(colBox.width)} px, and it does not scroll`]);
  });
  const differ = [...document.querySelectorAll('h2')].some(h => /^\s*where we differ\s*$/i.test(h.textContent));
  window.scrollTo(0, 0);
  const firstScreen = [...document.querySelectorAll('article p, article li, article td, article h1, article h2')]
    .filter(e => { const r = e.getBoundingClientRect(); return r.top < H && r.height > 0; }).map(e => e.innerText).join(' ');
  const prose = [...document.querySelectorAll('article p, main p')].filter(p =>
    !p.closest('#title-block-header, .cell-output, .doc-entry, table, nav') &&
    p.innerText.trim().length >= P && p.getBoundingClientRect().top < H && p.getBoundingClientRect().height > 0);
  if (!prose.length) {
    const first = [...document.querySelectorAll('article p')].find(p => !p.closest('#title-block-header, .cell-output, .doc-entry, table') && p.innerText.trim().length >= P);
    out.push(['no-prose-first-screen', `no paragraph of ≥ ${P} characters in the top ${H} px` +
              (first ? `; the first starts at ${Math.round(first.getBoundingClientRect().top)} px` : '; none on the page')]);
  }
  return {issues: out, height: document.documentElement.scrollHeight, differ, firstScreen, text: shown.textContent || ''};
})()
""" % dict(stderr_max=STDERR_MAX, prose_min=PROSE_MIN, first_screen=FIRST_SCREEN, fmax=FIGURE_MAX_PX)


# --------------------------------------------------------------------------------------------- page-level checks

CHAPTER = re.compile(r"^1[0-8]_")
REPRODUCED = re.compile(r"We have run (\d+) of the paper's (\d+) reported cells on its own data.*?(\d+) agree with its accuracy and (\d+) differ", re.S)


def page_checks(stem: str | None, res: dict, settled=None) -> list[tuple[str, str]]:
    """Checks of what a page says, from what the browser shows (`res`: `differ`, `firstScreen`, `text`): every chapter has
    a "Where we differ" section and, when its sweeps have all settled (`settled(stem)`, default from the stored files), no
    stale-status phrase; the index's first screen gives the reproduced count."""
    out = []
    if stem and CHAPTER.match(stem):
        if not res.get("differ"): out.append(("no-where-we-differ", "no <h2> 'Where we differ'"))
        settled = settled or (lambda s: all(sweep_settled(n) for n in sweeps_read(nb(ROOT / "nbs" / f"{s}.ipynb"))))
        found = stale_phrases(res.get("text", ""))
        if found and settled(stem): out.append(("stale-status", f"its sweeps have settled, yet it says {found}"))
    if stem == "index":
        m = REPRODUCED.search(" ".join(res.get("firstScreen", "").split()))
        if not m: out.append(("no-reproduced-count", f"not in the top {FIRST_SCREEN} px: 'We have run N of the paper's M reported cells … agree … differ'"))
    return out


def test_page_checks_on_made_up_pages():
    ok = {"differ": True, "firstScreen": "We have run 29 of the paper's 295 reported cells on its own data: 23 agree with its accuracy and 6 differ.",
          "text": "Every run has finished."}
    assert page_checks("14_depth", ok, settled=lambda s: True) == [] and page_checks("index", ok) == []
    assert page_checks("07b_viz", {}) == []                                       # neither a chapter nor the index
    stale = {**ok, "text": "Dashed: still running."}
    assert [c for c, _ in page_checks("14_depth", stale, settled=lambda s: True)] == ["stale-status"]
    assert page_checks("14_depth", stale, settled=lambda s: False) == []         # a sweep still running may say so
    assert [c for c, _ in page_checks("10_ar_main", {**ok, "differ": False}, settled=lambda s: True)] == ["no-where-we-differ"]
    assert [c for c, _ in page_checks("index", {**ok, "firstScreen": "A library for mechanistic evaluation."})] == ["no-reproduced-count"]


# --------------------------------------------------------------------------------------------- browser

class Chromium:
    "One headless Chromium, a fresh profile, one tab driven over the DevTools protocol."

    def __init__(self, exe: str):
        import websocket  # websocket-client, in the dev extra
        self.profile = tempfile.mkdtemp(prefix="ssm_mech_chromium_")
        self.proc = subprocess.Popen(
            [exe, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        port_file, t0 = Path(self.profile) / "DevToolsActivePort", time.time()
        while not (port_file.exists() and len(port_file.read_text().split()) >= 2):
            if self.proc.poll() is not None or time.time() - t0 > 60:
                self.close(); raise RuntimeError(f"Chromium did not start ({exe})")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        req = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
        target = json.loads(urllib.request.urlopen(req, timeout=30).read())
        self.ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=60, suppress_origin=True,
                                              enable_multithread=False)
        self._id = 0
        self.send("Page.enable")
        self.send("Emulation.setDeviceMetricsOverride", width=WIDTH, height=FIRST_SCREEN, deviceScaleFactor=1, mobile=False)

    def send(self, method: str, **params):
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self._id:
                if "error" in msg: raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def eval(self, expr: str):
        r = self.send("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r: raise RuntimeError(f"page script failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def open(self, url: str, timeout: float = 60):
        self.send("Page.navigate", url=url)
        t0 = time.time()
        while self.eval("document.readyState + '|' + location.href") != f"complete|{url}":
            if time.time() - t0 > timeout: raise TimeoutError(f"{url} did not load in {timeout} s")
            time.sleep(0.05)
        # every <img> settled (data URIs decode asynchronously)
        self.eval("Promise.all([...document.images].map(i => i.complete ? 0 : new Promise(r => {i.onload = i.onerror = r})))")

    def check(self, url: str, shot: Path | None = None, stem: str | None = None) -> list[tuple[str, str]]:
        "The issues of the page at `url` (`stem`: the notebook it renders, for the checks of chapters and the index)."
        self.open(url)
        res = self.eval(CHECKS_JS)
        if shot is not None:
            h = min(int(res["height"]), SHOT_MAX_H)
            png = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                            clip=dict(x=0, y=0, width=WIDTH, height=h, scale=1))["data"]
            shot.parent.mkdir(parents=True, exist_ok=True)
            shot.write_bytes(base64.b64decode(png))
        return [tuple(x) for x in res["issues"]] + page_checks(stem, res)

    def close(self):
        try: self.ws.close()
        except Exception: pass
        if self.proc.poll() is None:
            try: os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError: pass
            try: self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL); self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


class Server:
    "A quiet `http.server` on localhost serving one folder."

    def __init__(self, folder: Path):
        handler = functools.partial(type("Quiet", (http.server.SimpleHTTPRequestHandler,),
                                         {"log_message": lambda *a: None}), directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self): self.httpd.shutdown(); self.httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    b = Chromium(CHROMIUM)
    yield b
    b.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    "The preview of every notebook, served locally: (server, {notebook stem: page file name})."
    out = tmp_path_factory.mktemp("preview")
    nbs = preview_site.notebooks()
    preview_site.build(out, nbs)
    srv = Server(out)
    yield srv, {p.stem: preview_site.page_name(p) for p in nbs}
    srv.close()


# --------------------------------------------------------------------------------------------- allow-list

def read_known(path: Path = KNOWN) -> set[tuple[str, str]]:
    "`page: check` lines of the allow-list; `#` comments and blank lines ignored."
    known = set()
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            page, _, check = line.partition(":")
            known.add((page.strip(), check.strip()))
    return known


def compare(found: dict[tuple[str, str], list[str]], known: set[tuple[str, str]]) -> list[str]:
    "Problems with `found` (page, check) → details against the allow-list: new failures and fixed ones."
    msgs = [f"{p}: {c} — {d}" for (p, c), ds in sorted(found.items()) if (p, c) not in known for d in ds]
    msgs += [f"{p}: {c} — listed in {KNOWN.name} but no longer occurs: delete the line" for p, c in sorted(known - found.keys())]
    return msgs


def test_compare_reports_new_and_fixed():
    found = {("10_ar_main", "truncated-table"): ["table 2: …"], ("07b_viz", "widget-repr"): ["VBox(children="]}
    known = {("07b_viz", "widget-repr"), ("06d_interventions", "large-stderr")}
    msgs = compare(found, known)
    assert msgs == ["10_ar_main: truncated-table — table 2: …",
                    f"06d_interventions: large-stderr — listed in {KNOWN.name} but no longer occurs: delete the line"]
    assert compare({("a", "b"): ["x"]}, {("a", "b")}) == []


def test_known_issues_name_real_pages_and_checks():
    pages = {p.stem for p in preview_site.notebooks()}
    checks = {"broken-image", "widget-repr", "truncated-table", "large-stderr", "no-prose-first-screen",
              "uncaptioned-figure", "long-number", "wide-figure", "wide-table", "no-where-we-differ", "stale-status",
              "no-reproduced-count"}
    for page, check in read_known():
        assert page in pages, f"{KNOWN.name}: no notebook {page}"
        assert check in checks, f"{KNOWN.name}: no check {check!r} (one of {sorted(checks)})"


# --------------------------------------------------------------------------------------------- checks on synthetic pages

PROSE = "<p>" + "This paragraph is the reader's first sentence of prose, long enough to count. " * 2 + "</p>"
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def _png_b64(width: int, height: int) -> str:
    "A white PNG of `width` x `height` px, base64: a saved figure of that size."
    import struct, zlib
    chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + b"\xff" * width for _ in range(height))   # greyscale rows, filter 0
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


def _page(body: str) -> str:
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><style>main>article{{max-width:900px}}</style></head><body><main><article>
<header id="title-block-header"><h1>Title</h1><p class="subtitle">A subtitle that is long enough to be sixty characters of text.</p></header>
{body}</article></main></body></html>"""


SYNTHETIC = {
    "clean": _page(PROSE + f'<img src="data:image/png;base64,{PNG}"><table><tr><th>model</th><th>acc</th></tr>'
                   '<tr><td>attention</td><td>1.00</td></tr></table><div class="cell-output-stderr"><pre>one warning</pre></div>'
                   '<img src="https://img.shields.io/badge/x.svg">'),
    "truncated-table": _page(PROSE + "<table><tr><td>a</td><td>…</td><td>b</td></tr></table>"),
    "truncated-table-dots": _page(PROSE + "<table><tr><td>...</td></tr><tr><td>1</td></tr></table>"),
    "truncated-table-cell": _page(PROSE + "<table><tr><td>induction via the short convolution and ...</td></tr></table>"),
    "broken-image": _page(PROSE + '<img src="missing.png"><img src="data:image/png;base64,AAAA">'),
    "widget-repr": _page(PROSE + "<pre>VBox(children=(HBox(children=(IntSlider(value=0),)),))</pre>"),
    "widget-repr-interactive": _page(PROSE + "<pre>interactive(children=(Dropdown(description='model'),))</pre>"),
    "widget-in-source-code": _page(PROSE + '<pre class="sourceCode python"><code>ui = VBox(children=[slider])</code></pre>'),
    "large-stderr": _page(PROSE + '<div class="cell-output-stderr"><pre>' + "100%|██████| 10/10 [00:01<00:00]\r" * 200 + "</pre></div>"),
    "no-prose-first-screen": _page('<pre style="height:900px">import torch</pre>' + PROSE),
    "no-prose-short-paragraphs": _page("<p>Short.</p><p>Also short.</p>"),
    "uncaptioned-figure": _page(PROSE + f'<div class="cell-output cell-output-display"><img src="data:image/png;base64,{PNG}"></div>'),
    "uncaptioned-figure-unnumbered": _page(PROSE + f'<figure class="figure"><div class="cell-output cell-output-display"><img src="data:image/png;base64,{PNG}"></div>'
                                           '<figcaption>A caption without a number.</figcaption></figure>'),
    "captioned-figure": _page(PROSE + f'<figure class="figure" id="fig-a"><div class="cell-output cell-output-display"><img src="data:image/png;base64,{PNG}"></div>'
                              '<figcaption>Figure&nbsp;1: The accuracy per mixer.</figcaption></figure>'
                              f'<div class="cell-output cell-output-display"><h1>An embedded report</h1><p>Its text.</p><img src="data:image/png;base64,{PNG}"></div>'),
    "long-number": _page(PROSE + "<div class=\"cell-output cell-output-display\"><pre>{'acc': 1.0, 'prob': 0.9998316168785095}</pre></div>"),
    "long-number-in-code": _page(PROSE + '<pre class="sourceCode python"><code>x = 0.9998316168785095</code></pre>'
                                 "<div class=\"cell-output cell-output-display\"><pre>{'acc': 1.0, 'prob': 1.0e-15, 'lr': 0.00097, 'seed': 12345678}</pre></div>"),
    "wide-figure": _page(PROSE + f'<figure><div class="cell-output cell-output-display"><img src="data:image/png;base64,{_png_b64(1500, 10)}"></div>'
                         '<figcaption>Figure&nbsp;1: Too wide.</figcaption></figure>'),
    "wide-figure-drawn": _page(PROSE + f'<div class="cell-markdown"><img style="width:1200px;max-width:none" src="data:image/png;base64,{_png_b64(1200, 10)}"></div>'),
    "fitting-figure": _page(PROSE + f'<figure><div class="cell-output cell-output-display"><img src="data:image/png;base64,{_png_b64(1300, 10)}" style="max-width:100%"></div>'
                            '<figcaption>Figure&nbsp;1: Saved 1,300 px wide, shown in the column.</figcaption></figure>'),
    "wide-table": _page(PROSE + "<table><tr>" + "<td>an_unbreakable_column_heading</td>" * 6 + "</tr></table>"),
    "scrolling-table": _page(PROSE + '<div style="overflow-x:auto"><table><tr>' + "<td>an_unbreakable_column_heading</td>" * 6 + "</tr></table></div>"),
}
EXPECTED = {"fitting-figure": set(), "scrolling-table": set(), "wide-figure-drawn": {"wide-figure"},
            "clean": set(), "widget-in-source-code": set(), "truncated-table-dots": {"truncated-table"}, "truncated-table-cell": {"truncated-table"},
            "widget-repr-interactive": {"widget-repr"}, "no-prose-short-paragraphs": {"no-prose-first-screen"},
            "uncaptioned-figure-unnumbered": {"uncaptioned-figure"}, "captioned-figure": set(), "long-number-in-code": set()}


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    d = tmp_path_factory.mktemp("synthetic")
    for name, text in SYNTHETIC.items(): (d / f"{name}.html").write_text(text, encoding="utf-8")
    srv = Server(d)
    yield srv
    srv.close()


@needs_chromium
@pytest.mark.parametrize("name", list(SYNTHETIC))
def test_check_on_synthetic_page(browser, synthetic, name):
    "Each check fires on a page built to fail it, and only that check; the clean page passes all."
    found = {c for c, _ in browser.check(synthetic.url + f"{name}.html")}
    assert found == EXPECTED.get(name, {name}), browser.check(synthetic.url + f"{name}.html")


# --------------------------------------------------------------------------------------------- the real pages

@needs_chromium
def test_site_pages_in_browser(browser, site):
    "Every preview page at 1280 px: screenshot saved, failures reported all at once against the allow-list."
    srv, pages = site
    found: dict[tuple[str, str], list[str]] = {}
    t0 = time.time()
    for stem, page in pages.items():
        for check, detail in browser.check(srv.url + page, SHOTS / page.replace(".html", ".png"), stem):
            found.setdefault((stem, check), []).append(detail)
    msgs = compare(found, read_known())
    print(f"{len(pages)} pages checked in {time.time() - t0:.1f} s; screenshots in {SHOTS}")
    assert not msgs, "browser checks of the preview pages:\n  " + "\n  ".join(msgs)


# --------------------------------------------------------------------------------------------- the embedded explorer

EXPLORER_JS = r"""
(() => {
  const root = document.querySelector('.ssm-explorer');
  if (!root) return {error: 'no embedded explorer on the page'};
  const D = JSON.parse(root.querySelector('script.ssm-explorer-data').textContent);
  const q = s => root.querySelector(s), steps = [];
  const seen = () => ({header: q('.sx-header').textContent, strip: q('.sx-strip').innerHTML, grid: q('.sx-heatmap').innerHTML,
                       answers: q('.sx-answers-view').innerHTML, spans: q('.sx-strip').querySelectorAll('span').length,
                       boxed: [...q('.sx-heatmap').querySelectorAll('td')].filter(td => td.style.border.startsWith('2px')).map(td => [td.dataset.layer, td.dataset.position]),
                       hook: q('[data-control="hook"]').value, hooks: [...q('[data-control="hook"]').options].map(o => o.value)});
  const set = (ctl, v) => { const el = q(`[data-control="${ctl}"]`); el.value = v; el.dispatchEvent(new Event(ctl === 'layer' ? 'input' : 'change', {bubbles: true})); };
  const act = (what, fn) => { const before = seen(); fn(); steps.push({what, before, after: seen()}); };
  steps.push({what: 'initial', after: seen()});
  act('corruption value', () => q('button[data-control="corruption"][data-value="value"]').click());
  act('method estimated', () => q('button[data-control="method"][data-value="estimated"]').click());
  act('layer 0', () => set('layer', 0));
  act('hook', () => set('hook', D.hooks[0][0]));
  act('position key', () => set('position', 'key'));
  act('example 2', () => set('example', '2'));
  act('heatmap cell', () => q('td[data-layer="1"][data-position="query"]').click());
  return {initial: D.initial, n_tokens: Object.fromEntries(Object.entries(D.examples).map(([e, x]) => [e, x.tokens.length])), hooks: D.hooks, steps};
})()
"""


@needs_chromium
def test_embedded_explorer_controls_change_the_views(browser, site):
    "On the static page, without a kernel, every control of the embedded explorer redraws what it should."
    srv, pages = site
    holders = [stem for stem in pages if "ssm-explorer-data" in (ROOT / "nbs" / f"{stem}.ipynb").read_text(encoding="utf-8")]
    assert holders, "no notebook stores an embedded explorer (a `.ssm-explorer` output)"
    browser.open(srv.url + pages[holders[0]])   # the page that embeds it (07b_viz before the explorer had its own page)
    r = browser.eval(EXPLORER_JS)
    assert "error" not in r, r
    steps = {s["what"]: s for s in r["steps"]}
    first = steps["initial"]["after"]
    i = r["initial"]
    assert f"example {i['example']}," in first["header"] and f"{i['corruption']} corrupted" in first["header"] and i["hook"] in first["header"]
    assert first["spans"] == r["n_tokens"][str(i["example"])] and first["boxed"] == [[str(i["layer"]), i["position"]]]
    for what, s in steps.items():
        if what == "initial": continue
        assert s["after"]["header"] != s["before"]["header"] or s["after"]["grid"] != s["before"]["grid"], f"{what}: nothing changed"
    assert "value corrupted" in steps["corruption value"]["after"]["header"]
    assert steps["corruption value"]["after"]["strip"] != steps["corruption value"]["before"]["strip"]
    assert "estimated association" in steps["method estimated"]["after"]["grid"] and "≈" in steps["method estimated"]["after"]["header"]
    l0 = steps["layer 0"]["after"]
    assert l0["hooks"] == r["hooks"][0] and l0["hook"].startswith("blocks.0.") and l0["boxed"] == [["0", i["position"]]]
    assert steps["hook"]["after"]["hook"] == r["hooks"][0][0] and r["hooks"][0][0] in steps["hook"]["after"]["header"]
    assert steps["position key"]["after"]["boxed"] == [["0", "key"]] and " at key (#" in steps["position key"]["after"]["header"]
    ex2 = steps["example 2"]["after"]
    assert "example 2," in ex2["header"] and ex2["spans"] == r["n_tokens"]["2"] and ex2["answers"] != steps["example 2"]["before"]["answers"]
    cell = steps["heatmap cell"]["after"]
    assert cell["boxed"] == [["1", "query"]] and cell["hook"].startswith("blocks.1.") and " at query (#" in cell["header"]
