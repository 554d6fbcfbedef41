"""The site's one stylesheet and one script, written beside the pages (``view/site.css``,
``view/site.js``): nothing is fetched, no font is loaded (the report's CSS, :mod:`pytest_homefield.report.html`,
plus the viewer's classes).

The script does three things and fails quietly without the elements it needs:

* **filters** on the run page: agent, outcome, task (id or subject words), well-specified, flagged.
  Rows of the per-task grid carry ``data-task``, ``data-subject``, ``data-ws`` (``1``/``0``/empty) and
  ``data-flagged``; cells ``data-agent``; attempt links ``data-outcome`` and ``data-flag``. The
  filter is kept in the address (``?agent=…&outcome=…``) and carried by the page links;
* **keys**: ``j``/``k`` select the next/previous visible row (the run page) or go to the next/previous
  attempt or task (pages with ``a[rel=next]``/``a[rel=prev]``); ``o`` or Enter opens the selected
  row's task; ``u`` goes up to the run; ``/`` focuses the task filter; ``?`` shows the keys;
* the **side-by-side** toggle of the task page (``#wrap`` wraps long diff lines).
"""

from __future__ import annotations

from pytest_homefield.report.html import _CSS as REPORT_CSS

__all__ = ["SITE_CSS", "SITE_JS"]

SITE_CSS = REPORT_CSS + """
body { max-width: none; margin: 1rem 1.5rem; }
nav.top { display: flex; gap: 1rem; align-items: baseline; flex-wrap: wrap; margin-bottom: .5rem; }
nav.top a { color: var(--accent); }
a { color: var(--accent); text-decoration: none; } a:hover { text-decoration: underline; }
.kv { border-collapse: collapse; } .kv th { width: 11rem; }
pre { background: var(--head); border: 1px solid var(--line); padding: .5rem; overflow-x: auto; margin: .25rem 0 .75rem;
  font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; white-space: pre; }
pre.wrap, body.wrap pre { white-space: pre-wrap; word-break: break-word; }
.df { color: var(--muted); font-weight: 600; } .dh { color: var(--accent); } .dn { color: var(--muted); }
.da, .dd { display: inline-block; min-width: 100%; }
.da { color: var(--ok); background: color-mix(in srgb, var(--ok) 10%, transparent); }
.dd { color: var(--bad); background: color-mix(in srgb, var(--bad) 10%, transparent); }
.dm { color: var(--muted); font-style: italic; }
.entry { border-left: 3px solid var(--line); margin: .4rem 0; padding: .1rem .6rem; }
.entry > .who { font-size: .8rem; color: var(--muted); font-weight: 600; }
.entry pre { margin: .2rem 0; white-space: pre-wrap; word-break: break-word; }
.e-assistant { border-color: var(--accent); } .e-user { border-color: var(--sim); }
.e-tool_call { border-color: var(--warn); } .e-tool_result { border-color: var(--ok); }
.e-error, .entry.bad { border-color: var(--bad); } .e-thinking { opacity: .75; }
.e-result, .e-usage { border-color: var(--unscored); }
.bad, .t-failed, .t-error { color: var(--bad); } .t-passed { color: var(--ok); }
.t-skipped, .t-xfailed, .t-notrun { color: var(--warn); }
.filters { display: flex; gap: .75rem; flex-wrap: wrap; align-items: center; padding: .5rem; background: var(--head);
  border: 1px solid var(--line); position: sticky; top: 0; z-index: 2; }
.filters label { font-size: .85rem; color: var(--muted); }
.grid a.att { display: inline-block; min-width: 1.2em; text-align: center; }
.grid a.att.flag { outline: 1px dashed var(--bad); }
.grid tr.sel td { background: color-mix(in srgb, var(--accent) 12%, transparent); }
.grid td.hide, .grid th.hide { display: none; } .grid a.dim { opacity: .2; }
tr.hidden { display: none; }
.pager { margin: .5rem 0; } .pager a, .pager span { margin-right: .5rem; }
.side { display: grid; grid-auto-flow: column; grid-auto-columns: minmax(26rem, 1fr); gap: .75rem; overflow-x: auto;
  align-items: start; }
.side > section { border: 1px solid var(--line); padding: .5rem; min-width: 0; }
.side h3 { margin: .1rem 0 .4rem; font-size: 1rem; }
.side pre { max-height: 28rem; overflow: auto; }
.att-card { border-top: 1px solid var(--line); padding-top: .4rem; margin-top: .4rem; }
details > summary { cursor: pointer; color: var(--accent); }
.keys { position: fixed; right: 1rem; bottom: 1rem; background: var(--bg); border: 1px solid var(--line);
  padding: .5rem 1rem; display: none; } .keys.on { display: block; }
.cap { color: var(--warn); font-style: italic; }
"""

SITE_JS = r"""
(function () {
  "use strict";
  var params = new URLSearchParams(location.search);
  var keys = ["agent", "outcome", "task", "ws", "flagged"];
  function q(sel, root) { return (root || document).querySelector(sel); }
  function qa(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }
  var grid = q("table.grid");
  function state() {
    var s = {};
    keys.forEach(function (k) {
      var el = q("#f-" + k);
      s[k] = el ? (el.type === "checkbox" ? (el.checked ? "1" : "") : el.value) : "";
    });
    return s;
  }
  function apply() {
    if (!grid) return;
    var s = state(), words = s.task.toLowerCase().split(/\s+/).filter(Boolean), shown = 0;
    qa("th[data-agent], td[data-agent]", grid).forEach(function (c) {
      c.classList.toggle("hide", !!s.agent && c.getAttribute("data-agent") !== s.agent);
    });
    qa("tbody tr", grid).forEach(function (tr) {
      var ok = true, hay = (tr.getAttribute("data-task") + " " + tr.getAttribute("data-subject")).toLowerCase();
      words.forEach(function (w) { if (hay.indexOf(w) < 0) ok = false; });
      if (s.ws && tr.getAttribute("data-ws") !== s.ws) ok = false;
      var links = qa("td[data-agent]" + (s.agent ? "[data-agent='" + s.agent + "']" : "") + " a.att", tr), any = false;
      links.forEach(function (a) {
        var hit = (!s.outcome || a.getAttribute("data-outcome") === s.outcome) &&
          (!s.flagged || a.classList.contains("flag"));
        a.classList.toggle("dim", !hit);
        if (hit) any = true;
      });
      if ((s.outcome || s.flagged) && !any) ok = false;
      tr.classList.toggle("hidden", !ok);
      if (ok) shown++;
    });
    var n = q("#shown"); if (n) n.textContent = shown;
    var p = new URLSearchParams();
    keys.forEach(function (k) { if (s[k]) p.set(k, s[k]); });
    var qs = p.toString();
    if (("?" + qs) !== location.search && !(qs === "" && location.search === "")) {
      try { history.replaceState(null, "", location.pathname + (qs ? "?" + qs : "")); } catch (err) { /* file: */ }
    }
    qa("a.keepq").forEach(function (a) {
      var base = a.getAttribute("href").split("?")[0];
      a.setAttribute("href", base + (qs ? "?" + qs : ""));
    });
  }
  keys.forEach(function (k) {
    var el = q("#f-" + k);
    if (!el) return;
    if (params.get(k)) { if (el.type === "checkbox") el.checked = true; else el.value = params.get(k); }
    el.addEventListener(el.tagName === "INPUT" && el.type === "text" ? "input" : "change", apply);
  });
  apply();
  var sel = -1;
  function rows() {
    return grid ? qa("tbody tr", grid).filter(function (r) { return !r.classList.contains("hidden"); }) : [];
  }
  function pick(d) {
    var rs = rows();
    if (!rs.length) return;
    qa("tr.sel").forEach(function (r) { r.classList.remove("sel"); });
    sel = Math.max(0, Math.min(rs.length - 1, sel + d));
    rs[sel].classList.add("sel");
    rs[sel].scrollIntoView({block: "nearest"});
  }
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) {
      if (e.key === "Escape") t.blur();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var rel = null;
    if (e.key === "j") { if (grid) pick(1); else rel = "next"; }
    else if (e.key === "k") { if (grid) pick(-1); else rel = "prev"; }
    else if ((e.key === "o" || e.key === "Enter") && grid) {
      var r = rows()[sel]; var a = r && q("a.task", r); if (a) location.href = a.href;
    } else if (e.key === "u") { rel = "up"; }
    else if (e.key === "/") { var f = q("#f-task"); if (f) { e.preventDefault(); f.focus(); } }
    else if (e.key === "?") { var k = q(".keys"); if (k) k.classList.toggle("on"); }
    if (rel) { var l = q("a[rel=" + rel + "]"); if (l) location.href = l.href; }
  });
  var w = q("#wrap");
  if (w) w.addEventListener("change", function () { document.body.classList.toggle("wrap", w.checked); });
})();
"""
