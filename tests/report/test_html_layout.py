"""The HTML report in a real browser (issue 33): headless Chromium lays it out at 1280 and 400 px and
nothing is wider than the screen (a wide table or chart scrolls inside its own box), no text is smaller
than 9 px (the charts are not shrunk to fit), the first column of every table stays in view, and the
browser logs no console message. Opt-in (``-m clients``): it needs the ``chromium`` binary
(``apt-get install -y chromium``) and skips with the reason without it.

The report holds no script; the check runs in a wrapper page that shows it in an ``<iframe srcdoc>`` of
the given width (headless Chromium will not make its own window narrower than about 500 px) and writes
what it measured into the wrapper's DOM, which ``--dump-dom`` prints.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.report import render_html
from pytest_homefield.report.model import Report

pytestmark = pytest.mark.clients

_PROBE = """<script>
function probe() {
  const f = document.getElementById('f'); const doc = f.contentDocument; const vw = doc.documentElement.clientWidth;
  const wide = [], small = [], hidden = [];
  for (const el of doc.body.querySelectorAll('*')) {
    if (el.closest('.scroll, .plot')) continue;  // boxes that scroll their content
    const r = el.getBoundingClientRect();
    if (r.width && (r.right > vw + 0.5 || r.left < -0.5))
      wide.push(el.tagName + ' ' + Math.round(r.left) + '..' + Math.round(r.right));
  }
  for (const box of doc.querySelectorAll('.scroll, .plot')) {
    const r = box.getBoundingClientRect();
    if (r.right > vw + 0.5) wide.push('box ' + Math.round(r.right));
    const first = box.querySelector('tbody tr td:first-child');
    if (first) { box.scrollLeft = box.scrollWidth;  // scrolled to the far right, the first column stays
      const c = first.getBoundingClientRect();
      if (c.left < r.left - 0.5 || c.right > r.right + 0.5) hidden.push(first.textContent);
      box.scrollLeft = 0; }
  }
  for (const el of doc.body.querySelectorAll('th, td, p, li, h1, h2, code, text')) {
    if (!el.textContent.trim()) continue;
    let size = parseFloat(f.contentWindow.getComputedStyle(el).fontSize);
    const svg = el.closest('svg');
    if (svg) size *= svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    if (size < 9) small.push(el.tagName + ' ' + size.toFixed(1) + ' ' + el.textContent.slice(0, 20));
  }
  const out = document.createElement('pre'); out.id = 'result';
  out.textContent = JSON.stringify({vw, page: doc.documentElement.scrollWidth, wide, small, hidden});
  document.body.appendChild(out);
}
</script>"""


def layout(report_html: str, width: int, tmp_path: Path) -> dict[str, Any]:
    """What the probe measured for ``report_html`` shown ``width`` px wide, plus ``console``: the
    browser's console lines (``CONSOLE`` in its log)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    page = tmp_path / f"probe-{width}.html"
    page.write_text(f'<!DOCTYPE html><html><body style="margin:0">{_PROBE}<iframe id="f" onload="probe()" '
                    f'style="width:{width}px;height:900px;border:0" srcdoc="{html.escape(report_html, quote=True)}">'
                    "</iframe></body></html>", encoding="utf-8")
    proc = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000",
                           "--virtual-time-budget=5000", "--enable-logging=stderr", "--v=0", "--dump-dom",
                           page.as_uri()], capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="result">(.*?)</pre>', proc.stdout, re.S)
    assert m, proc.stderr[-3000:]
    out: dict[str, Any] = json.loads(html.unescape(m.group(1)))
    out["console"] = [line for line in proc.stderr.splitlines() if "CONSOLE" in line]
    return out


@pytest.mark.parametrize("width", [1280, 400])
def test_the_report_fits_the_screen_and_stays_readable(run_a_b: Report, width: int, tmp_path: Path) -> None:
    got = layout(render_html(run_a_b), width, tmp_path)
    assert got["vw"] <= width
    assert got["page"] <= got["vw"], got  # the page itself never scrolls sideways
    assert got["wide"] == [], got["wide"]
    assert got["small"] == [], got["small"]
    assert got["hidden"] == [], got["hidden"]
    assert got["console"] == []


@pytest.fixture
def run_a_b(data: Path, tasks: list[Any]) -> Report:
    from pytest_homefield.report import compute_report

    return compute_report([data / "run-a", data / "run-b"], tasks)
