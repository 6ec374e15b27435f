//! The page's stylesheet and its one script, inlined into every report (no fetches).
//! The script is allowed to run by its sha256 in the page's Content-Security-Policy,
//! so it must be inserted byte for byte as written here.

/// Font stacks name only fonts a machine may already have; nothing is downloaded.
pub const STYLE: &str = r#"
:root{--fg:#1f2933;--muted:#616e7c;--faint:#9aa5b1;--line:#e4e7eb;--panel:#f5f7fa;--accent:#1e66d0;
--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono","Liberation Mono",monospace}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue","DejaVu Sans","Liberation Sans",Arial,sans-serif;color:var(--fg);background:#fff}
code,pre,.t,.num,.rval,.checker,.kind,#tip{font-family:var(--mono)}
code,pre{font-size:12.5px}
header.top{padding:20px 32px 16px;background:linear-gradient(#f3f6fa,#fff);border-bottom:1px solid var(--line)}
.kicker{color:var(--muted);font-size:12px;letter-spacing:.05em;text-transform:uppercase}
.kicker b{color:var(--fg)}
h1{margin:4px 0 10px;font-size:24px;font-weight:650;display:flex;flex-wrap:wrap;gap:10px;align-items:center;word-break:break-all}
.chip{font-size:13px;font-weight:400;background:#eef1f5;border:1px solid #dde2e8;border-radius:12px;padding:2px 10px;color:var(--muted)}
.chip b{color:var(--fg)}
.outcome-line{display:flex;gap:14px;align-items:center;flex-wrap:wrap}
.big{font-size:18px;font-weight:750;text-transform:uppercase;letter-spacing:.05em;padding:3px 14px;border-radius:6px;color:#fff}
.o-converged{background:#2e7d32}.o-diverged{background:#c62828}.o-violated{background:#ad1457}
.o-stuck{background:#795548}.o-crashed{background:#37474f}.o-unknown{background:#757575}.o-fail{background:#ef6c00}
.expect{color:var(--muted);font-size:15px}
.verdict{font-weight:750;padding:1px 10px;border-radius:6px;border:2px solid;font-size:15px}
.verdict.pass{color:#2e7d32;border-color:#2e7d32}.verdict.fail{color:#c62828;border-color:#c62828}
.explain{color:#3e4c59;max-width:1000px;margin:10px 0}
.replay{display:flex;align-items:center;gap:12px;flex-wrap:wrap;background:#111a24;color:#e6edf3;border-radius:8px;padding:8px 12px;max-width:1000px}
.replay .label{color:#9fb3c8;font-size:11.5px;text-transform:uppercase;letter-spacing:.05em}
.replay code{color:#e6edf3;font-size:13px;flex:1;word-break:break-all}
button{font:inherit;font-size:12px;border:1px solid #cbd2d9;background:#fff;border-radius:6px;padding:2px 9px;cursor:pointer;color:var(--fg)}
button:hover{background:#f0f4f8}
.replay button{background:#1f2a36;color:#e6edf3;border-color:#3b4a5a}
dl.meta{display:grid;grid-template-columns:repeat(4,minmax(0,1fr));gap:8px 24px;margin:14px 0 0;max-width:1000px}
dl.meta .wide{grid-column:span 2}
dl.meta .file{grid-column:span 2}
dt{color:var(--muted);font-size:11px;text-transform:uppercase;letter-spacing:.05em}
dd{margin:0;overflow-wrap:anywhere}
dd code{font-size:11.5px}
nav.toc{position:sticky;top:0;z-index:5;background:rgba(255,255,255,.96);border-bottom:1px solid var(--line);padding:7px 32px;display:flex;gap:20px;font-size:13px}
nav.toc a{color:var(--accent);text-decoration:none}
main{padding:0 32px 40px}
section{margin-top:26px}
h2{font-size:18px;margin:0 0 8px;font-weight:650}
h3{font-size:14px;margin:18px 0 6px}
h4{font-size:11.5px;margin:10px 0 3px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted)}
.faint{color:var(--faint)}
.badge{display:inline-block;min-width:74px;text-align:center;color:#fff;font-size:11px;font-weight:700;text-transform:uppercase;border-radius:4px;padding:1px 6px;margin-right:10px}
ul.findings{list-style:none;padding:0;margin:0;max-width:1200px}
ul.findings li{padding:7px 0;border-bottom:1px solid var(--line)}
.checker{color:var(--muted);margin-right:10px;font-size:12.5px}
details{margin:4px 0 0 84px}
summary{cursor:pointer;color:var(--muted);font-size:12px}
pre{background:var(--panel);padding:8px 10px;border-radius:6px;overflow:auto;max-height:320px;margin:4px 0}
.divergence{border:1px solid #f1c4c4;background:#fffbfb;border-radius:10px;padding:14px 20px 16px;max-width:1200px}
.lead{font-size:15px;margin:4px 0 8px}
code.key{font-size:15px;background:#fde4e4;padding:1px 7px;border-radius:4px}
.replicas{display:flex;gap:12px;flex-wrap:wrap;margin:8px 0 4px}
.replica{border:1px solid #d5dbe1;background:#fff;border-radius:8px;padding:8px 14px;min-width:150px;max-width:380px}
.replica.odd{border-color:#c62828;background:#fdecea;box-shadow:inset 0 0 0 1px #c62828}
.replica.skipped{opacity:.6}
.cause{margin:10px 0 4px}
.cause table.cause tr.odd td{background:#fdecea}
.fcause{font-size:12.5px;color:#7a2e2e;margin-top:3px}
.rname{font-weight:650;font-size:12px;color:var(--muted)}
.rval{font-size:16px;word-break:break-all;margin-top:2px}
.rnote{font-size:11.5px;color:#c62828;margin-top:2px}
.absent{color:var(--faint)}
table{border-collapse:collapse}
table.events{width:100%;font-size:13px}
table.events th{text-align:left;font-weight:600;color:var(--muted);font-size:11px;text-transform:uppercase;letter-spacing:.04em;border-bottom:2px solid var(--line);padding:5px 8px;background:#fff}
#trail-table th{position:sticky;top:34px;z-index:2}
table.events td{border-bottom:1px solid #f0f2f4;padding:3px 8px;vertical-align:top}
table.touched{max-width:1200px}
table.touched tr{cursor:pointer}
td.d{word-break:break-word;width:100%}
td.num,td.t{white-space:nowrap;color:var(--muted);text-align:right;font-size:12px}
td.num a{color:var(--accent);text-decoration:none}
tr.fault td{background:#fff6f6}
tr.touch td{background:#eef5ff}
tr.hl td{background:#fff1a8 !important}
tr.gsum td{background:#f3f6fa;color:var(--muted);border-top:1px solid var(--line);border-bottom:1px solid var(--line)}
tr.gsum label{cursor:pointer;display:block}
table:not(.narrowed) tbody.grp:not(:has(.gopen:checked))>tr:not(.gsum){display:none}
table.narrowed tbody.grp>tr.gsum{display:none}
.keys{color:var(--muted);font-size:12px;margin-left:6px}
.kind{font-size:11.5px;padding:1px 6px;border-radius:4px;background:#eef1f5;color:#3e4c59;white-space:nowrap}
.k-network,.k-crash,.k-fail_point_hit,.k-limit,.k-exit{background:#fde8e8;color:#a61b1b}
.k-restart,.k-start,.k-stop{background:#e3efff;color:#0d47a1}
.k-transfer,.k-leader{background:#fff3cc;color:#6f5200}
.k-fail_point_arm,.k-fail_point_release,.k-fail_point_clear{background:#ffefdc;color:#973f00}
.k-op_ok,.k-check,.k-heal{background:#e5f3e8;color:#1b5e20}
.k-op_error,.k-op_timeout{background:#fdecea;color:#8e1b1b}
.k-apply,.k-storage,.k-service,.k-submit{background:#dff1ef;color:#00514a}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12px;color:#3e4c59;margin:8px 0 10px;align-items:center;max-width:1200px}
.lg{display:inline-flex;align-items:center;gap:5px}
.lg svg{overflow:visible}
.sw{display:inline-block;width:20px;height:12px;border-radius:2px}
.sw-partition{background:rgba(229,57,53,.2)}.sw-hold{background:rgba(142,36,170,.2)}
.sw-latency{background:rgba(251,192,45,.35)}.sw-stall{background:rgba(251,140,0,.3)}
.sw-heal{background:rgba(67,160,71,.16)}
.sw-down{background:repeating-linear-gradient(45deg,#f1f3f5 0 3px,#cfd5db 3px 5px)}
.sw-leading{height:6px;background:#f9a825;border-radius:3px}
.sw-op{width:4px;height:14px;background:#66bb6a;border-radius:2px}
.lg-msg{stroke:#78909c;stroke-width:1.5}.lg-cut{stroke:#e53935;stroke-width:1.5;stroke-dasharray:3 2}.lg-held{stroke:#8e24aa;stroke-width:1.5;stroke-dasharray:5 2}
.svgwrap{overflow:auto;border:1px solid var(--line);border-radius:8px;background:#fff}
svg.diagram{display:block;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans","Liberation Sans",Arial,sans-serif}
svg .grid{stroke:#f2f4f6}
svg .tick{font-size:10.5px;fill:#7b8794;text-anchor:end;font-family:var(--mono)}
svg .endline{stroke:#9aa5b1;stroke-dasharray:3 3}
svg .colhead{font-size:13px;font-weight:700;fill:#1f2933;text-anchor:middle}
svg .colhead.harness{font-style:italic;font-weight:600;fill:#616e7c}
svg .colsub{font-size:10.5px;fill:#7b8794;text-anchor:middle}
svg .up{stroke:#9aa5b1;stroke-width:1.6}
svg .harness-line{stroke:#cbd2d9;stroke-width:1;stroke-dasharray:2 3}
svg .leading{stroke:#f9a825;stroke-width:6;stroke-opacity:.7;stroke-linecap:round}
svg .term{font-size:10px;font-weight:700;fill:#8a6800}
svg .band-partition rect{fill:#e53935;fill-opacity:.12}
svg .band-hold rect{fill:#8e24aa;fill-opacity:.13}
svg .band-latency rect{fill:#fbc02d;fill-opacity:.22}
svg .band-stall rect{fill:#fb8c00;fill-opacity:.22}
svg .band-heal rect{fill:#43a047;fill-opacity:.07}
svg rect.band-down{fill:url(#hatch)}
svg .bandlabel,svg .term{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
svg .bandlabel{font-size:10.5px;font-weight:700}
svg .bl-partition{fill:#b71c1c}svg .bl-hold{fill:#6a1b9a}
svg .bl-latency{fill:#8a6800}svg .bl-stall{fill:#b35300}
svg .bl-heal{fill:#2e7d32}
svg .msg{stroke:#78909c}svg .msg.cut{stroke:#e53935;stroke-dasharray:3 3}svg .msg.held{stroke:#8e24aa;stroke-dasharray:5 2}
svg .transfer{fill:none;stroke:#b28704;stroke-width:1.6;stroke-dasharray:4 3}
svg.clients .lane{font-size:11px;fill:#3e4c59;text-anchor:end}
svg.clients .lane-line{stroke:#eef1f4}
svg.clients .tick.mid{text-anchor:middle}
svg.clients .bar{fill-opacity:.8}svg.clients .bar.ok{fill:#66bb6a}svg.clients .bar.fail{fill:#b0bec5}svg.clients .bar.info{fill:#ffb74d}
svg.clients .bar.witness{stroke:#c62828;stroke-width:2.5;fill-opacity:1}svg.clients .bar.witness.context{stroke-dasharray:4 2;stroke-width:1.5}
.k-ok{color:#2e7d32}.k-fail{color:#78909c}.k-info{color:#ef6c00}
.consistency{font-size:15px}.consistency.pass b{color:#2e7d32}.consistency.fail b{color:#c62828}.consistency.unknown b{color:#757575}
table.witness tr.context td{color:#7b8794;font-style:italic}
tr.witness-row td{background:#fdecea}
svg .op{fill-opacity:.75}svg .op.ok{fill:#66bb6a}svg .op.err{fill:#e57373}svg .op.timeout{fill:#bcaaa4}
.ring,svg .ring{fill:none;stroke:#1e88e5;stroke-width:2}
svg .agg{cursor:pointer}svg .agg rect{fill:#eceff1;stroke:#90a4ae}
svg .agg text{font-size:9px;text-anchor:middle;fill:#37474f;font-weight:700}
svg .agg.fault rect{fill:#fdecea;stroke:#e57373}
svg .ann{font-size:11.5px;fill:#3e4c59}
svg .a-fault{fill:#c62828;font-weight:600}svg .a-harness{fill:#52606d}svg .a-op{fill:#1f2933}
svg .a-err{fill:#c62828}svg .a-leader{fill:#8a6800;font-weight:600}svg .a-node{fill:#00695c}
svg .faint{fill:#9aa5b1;font-style:italic}
svg .break .cut{fill:none;stroke:#fff;stroke-width:7}
svg .break .zig{fill:none;stroke:#9aa5b1;stroke-width:1.2}
svg .mk{cursor:pointer}
svg .mk.hl{filter:drop-shadow(0 0 2px #1e88e5) drop-shadow(0 0 3px #1e88e5)}
svg tspan[data-ev]{cursor:pointer}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(280px,1fr));gap:12px}
.card{border:1px solid var(--line);border-radius:8px;padding:10px 12px;background:#fff;min-width:0}
.cardhead{display:flex;gap:8px;align-items:baseline;flex-wrap:wrap;margin-bottom:6px;font-size:15px}
.cardhead .faint{font-size:12px}
.status{font-size:11px;font-weight:700;border-radius:4px;padding:0 6px;color:#fff}
.status.up{background:#2e7d32}.status.down{background:#c62828}
table.kv{font-size:12.5px;width:100%}
table.kv th{text-align:left;font-weight:500;color:var(--muted);padding:1px 10px 1px 0;vertical-align:top;white-space:nowrap;width:1%}
table.kv td{padding:1px 0;word-break:break-all}
table.kv tr.hot td,table.kv tr.hot th{background:#fdecea}
table.kv.diff{width:auto}
table.kv.diff th,table.kv.diff td{border-bottom:1px solid #f0f2f4;padding:3px 12px 3px 0}
.filters{display:flex;flex-direction:column;gap:6px;margin:6px 0 10px}
.fgroup{display:flex;flex-wrap:wrap;gap:6px;align-items:center}
.flabel{font-size:11px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);width:44px}
label.chip{cursor:pointer;display:inline-flex;align-items:center;gap:4px;padding:1px 8px;color:var(--fg)}
.cnt{color:var(--faint);font-size:11px}
input[type=search]{font:inherit;padding:4px 8px;border:1px solid #cbd2d9;border-radius:6px;width:300px}
.scroll{overflow:auto}
.warn{background:#fff8e1;border:1px solid #ffe08a;padding:6px 10px;border-radius:6px}
.caption{color:var(--muted);font-size:12px;margin:6px 0 0}
.ok-note{color:#2e7d32}
tr.never td{background:#fff8e1}
footer{color:var(--faint);font-size:12px;padding:16px 32px;border-top:1px solid var(--line)}
#tip{position:fixed;z-index:20;max-width:560px;background:#111827;color:#f3f4f6;font-size:12px;line-height:1.4;padding:7px 10px;border-radius:6px;white-space:pre-wrap;pointer-events:none;box-shadow:0 4px 14px rgba(0,0,0,.25)}
[hidden]{display:none !important}
"#;

/// Tooltips, click-to-find, trail filters (also from the URL: `#node=n1,n3&kind=network&q=text`),
/// copy buttons. Plain ES5-style DOM code; no inline handlers (the CSP forbids them).
/// At the end it marks the document `data-ready="1"`, which the browser test checks.
pub const SCRIPT: &str = r#"
(function () {
  'use strict';
  var doc = document;
  var tip = doc.getElementById('tip');
  var diagram = doc.querySelector('svg.diagram');
  var table = doc.getElementById('trail-table');
  var rows = Array.prototype.slice.call(doc.querySelectorAll('#trail-table tbody tr[id^="ev-"]'));
  var count = doc.getElementById('trail-count');
  var search = doc.getElementById('trail-q');

  // SVG <title>s become one styled tooltip (without the script they still work natively).
  Array.prototype.forEach.call(doc.querySelectorAll('svg.diagram title'), function (t) {
    t.parentNode.setAttribute('data-tip', t.textContent);
    t.parentNode.removeChild(t);
  });

  // Trail index -> diagram marks, for row -> mark jumps.
  var marks = Object.create(null);
  Array.prototype.forEach.call(doc.querySelectorAll('svg.diagram .mk[data-ev]'), function (m) {
    m.getAttribute('data-ev').split(',').forEach(function (i) {
      (marks[i] = marks[i] || []).push(m);
    });
  });

  function place(ev) {
    var pad = 14, w = tip.offsetWidth, h = tip.offsetHeight;
    var x = ev.clientX + pad, y = ev.clientY + pad;
    if (x + w > window.innerWidth - 4) { x = ev.clientX - w - pad; }
    if (y + h > window.innerHeight - 4) { y = ev.clientY - h - pad; }
    tip.style.left = Math.max(4, x) + 'px';
    tip.style.top = Math.max(4, y) + 'px';
  }

  function clearClass(name) {
    Array.prototype.forEach.call(doc.querySelectorAll('.' + name), function (e) {
      e.classList.remove(name);
    });
  }

  function checked(group) {
    var set = Object.create(null);
    Array.prototype.forEach.call(
      doc.querySelectorAll('[data-group="' + group + '"] input[type=checkbox]'),
      function (c) { if (c.checked) { set[c.value] = true; } });
    return set;
  }

  // A filter shows every matching row, folded or not (the summary rows step aside).
  function narrowed() {
    return Array.prototype.some.call(
      doc.querySelectorAll('.filters [data-group] input[type=checkbox]'),
      function (c) { return !c.checked; }) || (search && search.value.trim() !== '');
  }

  // Open the folded run of ops a row is in, so the row can be seen.
  function unfold(row) {
    var group = row.parentNode;
    if (group && group.classList && group.classList.contains('grp')) {
      var box = group.querySelector('.gopen');
      if (box) { box.checked = true; }
    }
  }

  function apply() {
    var nodes = checked('node'), kinds = checked('kind');
    var q = search ? search.value.trim().toLowerCase() : '';
    var shown = 0;
    if (table) { table.classList.toggle('narrowed', !!narrowed()); }
    rows.forEach(function (r) {
      var ok = nodes[r.getAttribute('data-node')] === true &&
        kinds[r.getAttribute('data-kind')] === true &&
        (!q || r.textContent.toLowerCase().indexOf(q) >= 0);
      r.hidden = !ok;
      if (ok) { shown++; }
    });
    if (count) { count.textContent = 'showing ' + shown + ' of ' + rows.length + ' events'; }
  }

  function setGroup(group, test) {
    Array.prototype.forEach.call(
      doc.querySelectorAll('[data-group="' + group + '"] input[type=checkbox]'),
      function (c) { c.checked = test(c); });
  }

  function showRows(ids) {
    clearClass('hl');
    var first = null;
    ids.forEach(function (i) {
      var row = doc.getElementById('ev-' + i);
      if (!row) { return; }
      if (row.hidden) {
        setGroup('node', function () { return true; });
        setGroup('kind', function () { return true; });
        if (search) { search.value = ''; }
        apply();
      }
      unfold(row);
      row.classList.add('hl');
      if (!first) { first = row; }
    });
    if (first) { first.scrollIntoView({ block: 'center' }); }
  }

  function showMark(i) {
    clearClass('hl');
    var found = marks[i];
    if (!found) { return; }
    found.forEach(function (m) { m.classList.add('hl'); });
    found[0].scrollIntoView({ block: 'center', inline: 'center' });
  }

  if (diagram) {
    diagram.addEventListener('mousemove', function (ev) {
      var el = ev.target.closest ? ev.target.closest('[data-tip]') : null;
      if (!el) { tip.hidden = true; return; }
      tip.textContent = el.getAttribute('data-tip');
      tip.hidden = false;
      place(ev);
    });
    diagram.addEventListener('mouseleave', function () { tip.hidden = true; });
    diagram.addEventListener('click', function (ev) {
      var el = ev.target.closest ? ev.target.closest('[data-ev]') : null;
      if (el) { showRows(el.getAttribute('data-ev').split(',')); }
    });
  }

  rows.forEach(function (r) {
    r.addEventListener('click', function () { showMark(r.id.slice(3)); });
  });
  Array.prototype.forEach.call(doc.querySelectorAll('tr[data-goto]'), function (r) {
    r.addEventListener('click', function (ev) {
      ev.preventDefault();
      showRows([r.getAttribute('data-goto')]);
    });
  });

  Array.prototype.forEach.call(doc.querySelectorAll('.filters input'), function (i) {
    i.addEventListener('input', apply);
    i.addEventListener('change', apply);
  });
  Array.prototype.forEach.call(doc.querySelectorAll('button[data-all]'), function (b) {
    b.addEventListener('click', function () {
      setGroup(b.getAttribute('data-all'), function () { return true; });
      apply();
    });
  });
  Array.prototype.forEach.call(doc.querySelectorAll('button[data-none]'), function (b) {
    b.addEventListener('click', function () {
      setGroup(b.getAttribute('data-none'), function () { return false; });
      apply();
    });
  });
  var faults = doc.getElementById('faults-only');
  if (faults) {
    faults.addEventListener('click', function () {
      setGroup('kind', function (c) { return c.hasAttribute('data-fault'); });
      apply();
    });
  }

  Array.prototype.forEach.call(doc.querySelectorAll('button[data-copy]'), function (b) {
    b.addEventListener('click', function () {
      var el = doc.getElementById(b.getAttribute('data-copy'));
      if (!el) { return; }
      var text = el.textContent;
      function select() {
        var range = doc.createRange();
        range.selectNodeContents(el);
        var sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
      }
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(function () {
          b.textContent = 'copied';
        }, select);
      } else {
        select();
      }
    });
  });

  // Filters from the URL: #node=n1,n3&kind=network,crash&q=text
  var hash = window.location.hash.slice(1);
  if (hash.indexOf('=') >= 0) {
    hash.split('&').forEach(function (part) {
      var kv = part.split('=');
      var key = decodeURIComponent(kv[0] || '');
      var values = (kv[1] || '').split(',').map(function (v) { return decodeURIComponent(v); });
      if (key === 'node' || key === 'kind') {
        setGroup(key, function (c) { return values.indexOf(c.value) >= 0; });
      } else if (key === 'q' && search) {
        search.value = values.join(',');
      }
    });
  }
  apply();
  // A link to a row (#ev-N) opens the folded run it is in.
  function follow() {
    var m = /^#ev-(\d+)$/.exec(window.location.hash);
    if (m) { showRows([m[1]]); }
  }
  window.addEventListener('hashchange', follow);
  follow();
  doc.documentElement.setAttribute('data-ready', '1');
})();
"#;
