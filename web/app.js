// app.js - the heapscope viewer's page: reads the view state from the URL, asks /api/ for aggregates and draws them on canvases
const $ = (id) => document.getElementById(id);
const FILTERS = ['live-between', 'allocated-between', 'freed-between', 'live-at', 'leaked-or-freed-after', 'lifetime-min', 'lifetime-max',
  'size-min', 'size-max', 'through', 'not-through', 'alloc-site', 'thread', 'hide', 'leaked', 'temporary'];
const PAIRS = new Set(['live-between', 'allocated-between', 'freed-between']);
const FLAGS = new Set(['leaked', 'temporary']);
const state = { tab: 'flame', leaks: null, lifetimes: null, info: null, flame: null, zoom: null, zoomStack: [], layout: [], top: null, sel: -1, search: null,
  compare: false, diff: null, timelineBase: null, gen: 0, progress: [] };
window.heapscope = state;   // read by tests/web/e2e.mjs

function fmtBytes(b) {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return (i ? b.toFixed(b < 10 ? 2 : b < 100 ? 1 : 0) : Math.round(b)) + ' ' + u[i];
}
const fmtCount = (n) => Math.round(n).toLocaleString('en-US');
function fmtTime(ns) {
  if (ns >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
  if (ns >= 1e6) return (ns / 1e6).toFixed(1) + ' ms';
  return (ns / 1e3).toFixed(0) + ' us';
}

// The URL's query string is the view state: filters, flame and table options.
const params = () => new URLSearchParams(location.search);
function filterQuery(p) {
  const q = new URLSearchParams();
  for (const [k, v] of p) if (FILTERS.includes(k)) q.append(k, v);
  return q;
}

// warns: a Set that gets the server's warnings (what the command line says on stderr: the filter's, unnamed frames)
async function api(path, q, warns) {
  const res = await fetch('/api/' + path + (q && q.toString() ? '?' + q : ''));
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || res.statusText);
  const w = res.headers.get('X-Heapscope-Warning');
  if (w && warns) for (const line of decodeURIComponent(w).split('\n')) warns.add(line);
  return body;
}

function formToUrl() {
  const f = $('filters'), p = params(), q = new URLSearchParams();
  for (const name of FILTERS) {
    if (FLAGS.has(name)) { if (f.elements[name].checked) q.set(name, '1'); continue; }
    if (PAIRS.has(name)) {
      const a = f.elements[name + '-1'].value.trim(), b = f.elements[name + '-2'].value.trim();
      if (a || b) q.set(name, (a || 'start') + ',' + (b || 'end'));
      continue;
    }
    const v = f.elements[name].value.trim();
    if (v) q.set(name, v);
  }
  for (const k of ['weight', 'at', 'direction', 'by', 'sort', 'tab', 'trace']) if (p.has(k)) q.set(k, p.get(k));
  return q;
}

function urlToForm() {
  const f = $('filters'), p = params();
  for (const name of FILTERS) {
    const v = p.get(name);
    if (FLAGS.has(name)) { f.elements[name].checked = v !== null && v !== '0' && v !== 'false'; continue; }
    if (PAIRS.has(name)) {
      const [a, b] = (v || ',').split(',');
      f.elements[name + '-1'].value = a || '';
      f.elements[name + '-2'].value = b || '';
      continue;
    }
    f.elements[name].value = v || '';
  }
  $('weight').value = p.get('weight') || 'bytes';
  $('at').value = p.get('at') || '';
  $('by').value = p.get('by') || 'backtrace';
  $('direction').textContent = p.get('direction') === 'up' ? 'main at the bottom' : 'callers below';
}

function navigate(q) {
  history.pushState(null, '', '?' + q.toString());
  refresh();
}

function setOption(k, v, dflt) {
  const p = params();
  if (v === dflt || v === '') p.delete(k); else p.set(k, v);
  navigate(p);
}

function showError(e) { $('error').textContent = e ? String(e.message || e) : ''; }
function showWarnings(warns) { $('warning').textContent = warns ? [...warns].map((w) => 'warning: ' + w).join('\n') : ''; }

// ---- info ----
function drawInfo(info) {
  const el = $('info');
  el.textContent = '';
  if (!info.compare) { infoLine(el, info); return; }
  for (const [label, i] of [['base', info], ['new', info.compare]]) {
    const line = document.createElement('div');
    line.className = 'trace-' + label;
    const b = document.createElement('b');
    b.textContent = label + ' ' + i.file + ': ';
    line.append(b);
    infoLine(line, i);
    el.append(line);
  }
}

const SIGNALS = { 1: 'SIGHUP', 2: 'SIGINT', 3: 'SIGQUIT', 4: 'SIGILL', 6: 'SIGABRT', 7: 'SIGBUS', 8: 'SIGFPE',
  10: 'SIGUSR1', 11: 'SIGSEGV', 12: 'SIGUSR2', 13: 'SIGPIPE', 14: 'SIGALRM', 15: 'SIGTERM', 24: 'SIGXCPU',
  25: 'SIGXFSZ', 26: 'SIGVTALRM', 27: 'SIGPROF', 31: 'SIGSYS' };

// How the process ended, in the words of heapscope report.
function endText(i) {
  if (i.end === 'signal') return `killed by ${SIGNALS[i.signal] || 'signal ' + i.signal}`;
  if (i.end === 'unknown') return 'no clean end (killed or crashed)';
  if (i.end === 'running') return 'no end yet: still running (restart the viewer to read more)';
  return { exit: 'exited', _exit: '_exit', exec: 'exec', stop: 'hs_stop()' }[i.end] || i.end || '?';
}

function infoLine(el, i) {
  const rss = i.peak_rss ? `${fmtBytes(i.peak_rss.bytes)} at ${fmtTime(i.peak_rss.time_ns)}` : 'not sampled';
  const cells = [
    ['command', i.cmdline.join(' ')], ['pid', i.pid], ['duration', fmtTime(i.duration_ns)], ['end', endText(i)],
    ['mode', i.mode === 'sampled' ? `sampled every ${fmtBytes(i.sample_bytes)}` : 'every call'],
    ['allocations', fmtCount(i.allocations)], ['bytes', fmtBytes(i.bytes_allocated)],
    ['peak heap', `${fmtBytes(i.peak_heap.bytes)} at ${fmtTime(i.peak_heap.time_ns)}`], ['peak RSS', rss],
    ['leaked', `${fmtBytes(i.leaked.bytes)} in ${fmtCount(i.leaked.count)} blocks`],
  ];
  cells.forEach(([k, v], n) => {
    if (n) el.append(' · ');
    el.append(k + ' ');
    const b = document.createElement('b');
    b.textContent = v;
    el.append(b);
  });
}

// ---- timeline ----
function fitCanvas(c) {
  const r = window.devicePixelRatio || 1, w = c.clientWidth, h = c.getAttribute('height') | 0;
  c.width = w * r; c.height = h * r; c.style.height = h + 'px';
  const g = c.getContext('2d');
  g.setTransform(r, 0, 0, r, 0, 0);
  return [g, w, h];
}

function drawTimeline() {
  const tl = state.timeline, c = $('timeline');
  if (!tl) return;
  const [g, w, h] = fitCanvas(c), pad = 4, n = tl.time_ns.length;
  const end = Math.max(tl.duration_ns, state.compare && state.timelineBase ? state.timelineBase.duration_ns : 0) || 1;
  const maxHeap = Math.max(1, ...tl.heap, ...(state.compare && state.timelineBase ? state.timelineBase.heap : [])), maxRss = Math.max(1, ...tl.rss.filter((v) => v !== null));
  const X = (t) => pad + (w - 2 * pad) * t / end;
  state.timelineX = X;
  g.clearRect(0, 0, w, h);
  const line = (vals, max, colour, fill) => {
    g.beginPath();
    let started = false;
    for (let k = 0; k < n; k++) {
      if (vals[k] === null) continue;
      const x = X(tl.time_ns[k]), y = h - pad - (h - 2 * pad - 14) * vals[k] / max;
      if (!started) { g.moveTo(x, y); started = true; } else g.lineTo(x, y);
    }
    if (fill) { g.lineTo(X(tl.time_ns[n - 1]), h - pad); g.lineTo(X(0), h - pad); g.closePath(); g.fillStyle = fill; g.fill(); }
    else { g.strokeStyle = colour; g.lineWidth = 1.5; g.stroke(); }
  };
  const css = getComputedStyle(document.documentElement);
  line(tl.rss, maxRss, css.getPropertyValue('--rss'));
  line(tl.heap, maxHeap, null, 'rgba(42, 111, 219, 0.25)');
  line(tl.heap, maxHeap, css.getPropertyValue('--heap'));
  line(tl.filtered, maxHeap, css.getPropertyValue('--filt'));
  const tb = state.compare && state.timelineBase;
  if (tb) {   // the base trace's heap on the same scales, dashed: both runs from their own start
    g.setLineDash([4, 3]);
    const bt = tb.time_ns, bh = tb.heap;
    g.beginPath();
    bt.forEach((t, k) => { const x = X(t), y = h - pad - (h - 2 * pad - 14) * bh[k] / maxHeap; if (k) g.lineTo(x, y); else g.moveTo(x, y); });
    g.strokeStyle = '#555'; g.lineWidth = 1.2; g.stroke();
    g.setLineDash([]);
  }
  const at = params().get('weight') === 'live' && state.flame ? state.flame.at_ns : null;
  if (at !== null) {   // the moment of the flame graph's live weight
    g.strokeStyle = '#a0208a'; g.lineWidth = 1.5; g.beginPath(); g.moveTo(X(at), 0); g.lineTo(X(at), h); g.stroke();
  }
  if (state.info) {   // the peak (of the new trace, the one drawn, when comparing)
    const peak = state.compare ? state.info.compare.peak_heap : state.info.peak_heap;
    const x = X(peak.time_ns);
    g.strokeStyle = '#c00'; g.setLineDash([3, 3]); g.beginPath(); g.moveTo(x, 12); g.lineTo(x, h); g.stroke(); g.setLineDash([]);
    g.fillStyle = '#c00'; g.font = '11px system-ui'; g.fillText('peak ' + fmtBytes(peak.bytes), Math.min(x + 3, w - 90), 11);
  }
  // the time ranges of the current filter that are plain times (1.5s, 250ms, 40us, 98%)
  const p = params();
  for (const [k, fill, top] of [['allocated-between', 'rgba(42, 111, 219, 0.12)', 0], ['live-between', 'rgba(224, 112, 26, 0.14)', 1]]) {
    const [a, b] = (p.get(k) || '').split(',').map((v) => parseTime(v, end));
    if (a === undefined || b === undefined || Number.isNaN(a) || Number.isNaN(b)) continue;
    g.fillStyle = fill;
    g.fillRect(X(a), 0, Math.max(1, X(b) - X(a)), h);
    g.fillStyle = fill.replace(/[\d.]+\)$/, '0.8)');
    g.fillRect(X(a), top ? h - 3 : 0, Math.max(1, X(b) - X(a)), 3);
  }
  if (state.brush) {
    const [a, b] = [Math.min(state.brush.x0, state.brush.x1), Math.max(state.brush.x0, state.brush.x1)];
    g.fillStyle = state.brush.live ? 'rgba(224, 112, 26, 0.2)' : 'rgba(42, 111, 219, 0.2)';
    g.fillRect(a, 0, b - a, h);
  }
}

// A time of the filter language in ns when it is a plain one (start, end, 1.5s, 250ms, 40us, 100ns, 2min, 98%); else NaN.
function parseTime(v, end) {
  v = (v || '').trim();
  if (v === 'start') return 0;
  if (v === 'end') return end;
  const m = /^(\d+(?:\.\d+)?)(ns|us|ms|s|min|%)$/.exec(v);
  if (!m) return NaN;
  const scale = { ns: 1, us: 1e3, ms: 1e6, s: 1e9, min: 60e9, '%': end / 100 }[m[2]];
  return Math.min(end, +m[1] * scale);
}

function timelineBrush() {
  const c = $('timeline');
  const span = () => state.timeline ? Math.max(state.timeline.duration_ns, state.compare && state.timelineBase ? state.timelineBase.duration_ns : 0) : 0;
  const toNs = (x) => Math.max(0, Math.round((x - 4) / (c.clientWidth - 8) * span()));
  c.addEventListener('mousedown', (e) => { state.brush = { x0: e.offsetX, x1: e.offsetX, live: e.shiftKey }; });
  c.addEventListener('mousemove', (e) => { if (state.brush) { state.brush.x1 = e.offsetX; drawTimeline(); } });
  window.addEventListener('mouseup', () => {
    const b = state.brush;
    state.brush = null;
    if (b && Math.abs(b.x1 - b.x0) < 3 && !b.live) {   // a click: the flame graph weighs what is live at that moment
      const p = params();
      p.set('weight', 'live');
      p.set('at', `${Math.round(toNs(b.x0) / 1000)}us`);
      p.delete('zoom');
      navigate(p);
      return;
    }
    if (!b || Math.abs(b.x1 - b.x0) < 3) { drawTimeline(); return; }
    const t0 = toNs(Math.min(b.x0, b.x1)), t1 = toNs(Math.max(b.x0, b.x1));
    const p = params();
    p.set(b.live ? 'live-between' : 'allocated-between', `${Math.round(t0 / 1000)}us,${Math.round(t1 / 1000)}us`);
    navigate(p);
  });
}

// ---- flame graph ----
const ROW = 18;
function colour(name) {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return `hsl(${150 + h % 70}, ${45 + h % 25}%, ${58 + (h >> 8) % 18}%)`;
}

// Compare mode: red for a frame that grew from the base trace to the new one, blue for one that shrank, paler for less.
function largestDelta(root) {
  let m = 0;
  const walk = (n) => { m = Math.max(m, Math.abs(n.value - n.base)); n.children.forEach(walk); };
  root.children.forEach(walk);
  return m;
}
function deltaColour(n, max) {
  const d = n.value - n.base, k = max ? Math.min(1, Math.abs(d) / max) : 0;
  if (!d) return 'hsl(220, 8%, 86%)';
  return d > 0 ? `hsl(356, ${45 + 30 * k}%, ${88 - 40 * k}%)` : `hsl(220, ${45 + 30 * k}%, ${88 - 40 * k}%)`;
}
const signed = (v, f) => (v > 0 ? '+' : v < 0 ? '-' : '') + f(Math.abs(v));

function findPath(node, target, path = []) {
  if (node === target) return [...path, node];
  for (const ch of node.children) { const r = findPath(ch, target, [...path, node]); if (r) return r; }
  return null;
}

function drawFlame() {
  const fl = state.flame, c = $('flame');
  if (!fl) return;
  const up = fl.direction === 'up', root = fl.root, zoom = state.zoom || root, maxDelta = fl.compare ? largestDelta(zoom) : 0;
  const ancestors = (findPath(root, zoom) || [root]).slice(0, -1);
  let depth = 0;
  const measure = (n, d) => { depth = Math.max(depth, d); n.children.forEach((ch) => measure(ch, d + 1)); };
  measure(zoom, ancestors.length);
  c.setAttribute('height', Math.max(120, (depth + 1) * ROW + 4));
  const [g, w, h] = fitCanvas(c);
  const Y = (d) => up ? h - (d + 1) * ROW : d * ROW;
  state.layout = [];
  g.clearRect(0, 0, w, h);
  g.font = '12px system-ui';
  g.textBaseline = 'middle';
  const re = state.search;
  const box = (n, x, width, d, dim) => {
    const y = Y(d);
    g.fillStyle = re && !n.other && re.test(n.name) ? '#e040c0' : fl.compare ? deltaColour(n, maxDelta) : n.other ? '#d8d8d8' : colour(n.name);
    const fill = g.fillStyle;
    g.globalAlpha = dim ? 0.45 : 1;
    g.fillRect(x, y, Math.max(width - 1, 0.5), ROW - 1);
    g.globalAlpha = 1;
    if (width > 30) {
      g.fillStyle = '#111';
      g.save(); g.beginPath(); g.rect(x, y, width - 2, ROW); g.clip();
      g.fillText(n.name, x + 3, y + ROW / 2);
      g.restore();
    }
    state.layout.push({ n, x, y, w: width, fill, dim });
  };
  ancestors.forEach((a, d) => box(a, 0, w, d, true));
  const place = (n, x, width, d) => {
    box(n, x, width, d, false);
    let cx = x;
    for (const ch of n.children) {
      const cw = n.value ? width * ch.value / n.value : 0;
      if (cw >= 0.3) place(ch, cx, cw, d + 1);
      cx += cw;
    }
  };
  place(zoom, 0, w, ancestors.length);
  $('flame-zoom').textContent = state.zoom ? 'zoomed: ' + state.zoom.name : '';
  drawSearch();
  const fmt = fl.weight === 'count' ? fmtCount : fmtBytes;
  $('flame-total').textContent = `${fl.weight}: ${fmt(fl.total)}` +
    (fl.weight === 'live' ? ` at ${fmtTime(fl.at_ns)}` : '') + ` in ${fmtCount(fl.count)} allocations` +
    (fl.compare ? ` (base ${fmt(fl.base_total)}, ${signed(fl.total - fl.base_total, fmt)})` : '');
  $('compare-legend').hidden = !fl.compare;
}

function flameHit(e) {
  const x = e.offsetX, y = e.offsetY;
  return state.layout.find((b) => x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + ROW);
}

function zoomTo(n) {
  if (!n || n.other || n === state.zoom) return;
  state.zoomStack.push(state.zoom);
  state.zoom = n;
  zoomToUrl();
  drawFlame();
}
function zoomOut() { state.zoom = state.zoomStack.pop() || null; zoomToUrl(); drawFlame(); }
function zoomReset() { state.zoom = null; state.zoomStack = []; zoomToUrl(); drawFlame(); }

// The zoomed frame is part of the URL: zoom=NAME;NAME;... from the root's child down (replaces the current entry,
// so a link, a reload or Back to this view restores it).
function zoomToUrl() {
  const p = params(), path = state.zoom && state.flame ? findPath(state.flame.root, state.zoom) : null;
  if (path && path.length > 1) p.set('zoom', path.slice(1).map((n) => n.name).join(';')); else p.delete('zoom');
  const q = p.toString();
  if (q !== location.search.replace(/^\?/, '')) history.replaceState(null, '', q ? '?' + q : location.pathname);
}

// The flame node of the URL's zoom path, and the stack of its ancestors for Zoom out; a missing frame stops the walk.
function zoomFromUrl() {
  state.zoom = null; state.zoomStack = [];
  const z = params().get('zoom');
  if (!z || !state.flame) return;
  let n = state.flame.root;
  for (const name of z.split(';')) {
    const ch = n.children.find((c) => c.name === name && !c.other);
    if (!ch) break;
    state.zoomStack.push(n === state.flame.root ? null : n);
    n = ch;
  }
  if (n !== state.flame.root) state.zoom = n; else state.zoomStack = [];
}

// Search: a case-insensitive regex (or the literal text when it is not one) on frame names.
function setSearch(text) {
  text = text.trim();
  if (!text) state.search = null;
  else {
    try { state.search = new RegExp(text, 'i'); } catch { state.search = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i'); }
  }
  drawFlame();
}

// The summed share of the matching nodes: a match under a match is counted once.
function drawSearch() {
  const fl = state.flame, re = state.search, out = $('search-result');
  if (!fl || !re) { out.textContent = ''; return; }
  let sum = 0, nodes = 0;
  const walk = (n) => {
    if (!n.other && re.test(n.name)) { sum += n.value; nodes++; return; }
    n.children.forEach(walk);
  };
  fl.root.children.forEach(walk);
  const pct = fl.total ? (100 * sum / fl.total).toFixed(2) : '0.00';
  out.textContent = nodes ? `matched: ${fl.weight === 'count' ? fmtCount(sum) : fmtBytes(sum)} (${pct}%)` : 'no match';
}

function compareTip(fl, n) {
  const f = fl.weight === 'count' ? fmtCount : fmtBytes;
  return `base ${f(n.base)} · new ${f(n.value)} · delta ${signed(n.value - n.base, f)}` +
    ` · allocations ${fmtCount(n.base_count)} → ${fmtCount(n.count)}`;
}

function flameEvents() {
  const c = $('flame'), tip = $('tip');
  c.addEventListener('mousemove', (e) => {
    const b = flameHit(e), fl = state.flame;
    if (!b || !fl) { tip.hidden = true; return; }
    const n = b.n, pct = fl.total ? (100 * n.value / fl.total).toFixed(2) : '0';
    const val = fl.weight === 'count' ? fmtCount(n.value) + ' allocations' : `${fmtBytes(n.value)} (${fmtCount(n.value)} B)`;
    tip.textContent = `${n.name}\n${n.file ? n.file + ':' + n.line : n.other ? 'frames too small to draw, summed' : 'several lines or unknown file'}\n` +
      (fl.compare ? compareTip(fl, n) : `${val} (${pct}%) · ${fmtCount(n.count)} allocations`);
    tip.style.whiteSpace = 'pre';
    tip.hidden = false;
    const box = c.parentElement.getBoundingClientRect(), cr = c.getBoundingClientRect();
    tip.style.left = Math.min(cr.left - box.left + e.offsetX + 12, box.width - 300) + 'px';
    tip.style.top = (cr.top - box.top + e.offsetY + 14) + 'px';
  });
  c.addEventListener('mouseleave', () => { tip.hidden = true; });
  c.addEventListener('click', (e) => {
    const b = flameHit(e);
    if (b) zoomTo(b.n);
  });
  $('zoomout').addEventListener('click', zoomOut);
  $('search').addEventListener('input', (e) => setSearch(e.target.value));
  $('reset').addEventListener('click', zoomReset);
  $('direction').addEventListener('click', () => setOption('direction', params().get('direction') === 'up' ? 'down' : 'up', 'down'));
  $('weight').addEventListener('change', (e) => setOption('weight', e.target.value, 'bytes'));
  $('at').addEventListener('change', (e) => setOption('at', e.target.value.trim(), ''));
}

// ---- table ----
function topRow(r, cls) {
  const tr = document.createElement('tr');
  const cells = [r.rank, fmtCount(r.calls), fmtBytes(r.bytes), fmtBytes(r.peak_bytes), fmtBytes(r.leaked_bytes),
    fmtCount(r.temporary_count), r.name];
  for (const v of cells) { const td = document.createElement('td'); td.textContent = v; tr.append(td); }
  if (r.frames) tr.title = r.frames.map((f) => `${frameLabel(f)}  ${f.file ? f.file + ':' + f.line : ''}`).join('\n');
  if (cls) tr.className = cls;
  return tr;
}

function drawTop(top) {
  const body = document.querySelector('#top tbody');
  body.textContent = '';
  state.top = top;
  state.sel = -1;
  const sort = params().get('sort') || 'bytes';
  document.querySelectorAll('#top th[data-sort]').forEach((th) => th.classList.toggle('sorted', th.dataset.sort === sort));
  const rows = [...top.rows, { rank: 'all', name: `${fmtCount(top.rows_total)} rows`, ...top.total }];
  rows.forEach((r, k) => {
    const tr = topRow(r, k < top.rows.length ? 'site' : 'all');
    body.append(k < top.rows.length ? node(tr, [r.rank], [r.name], r) : tr);
  });
}

// A selectable row of the table: path is its rank then the rank of each caller chosen below it (callers=ROW&path=...),
// names the rows' names along it; a click selects it.
function node(tr, path, names, r) {
  tr.classList.add('node');
  tr.dataset.rank = path[0];
  tr.dataset.path = path.join(',');
  tr.path = path;
  tr.names = names;
  tr.site = r;
  tr.addEventListener('click', () => select(siteRows().indexOf(tr)));
  return tr;
}

// Compare mode: the per-site changes of /api/diff, largest change first.
function drawDiff(d) {
  const body = $('diff').tBodies[0];
  body.textContent = '';
  state.diff = d;
  const sort = params().get('sort') || 'change';
  document.querySelectorAll('#diff th[data-dsort]').forEach((th) => th.classList.toggle('sorted', th.dataset.dsort === sort));
  state.sel = -1;
  d.rows.forEach((r) => body.append(node(diffRow(r, 'site'), [r.rank], [r.name], r)));
  const t = d.total, delta = (k) => t.new[k] - t.base[k];
  body.append(diffRow({ rank: 'all', status: `${d.rows_changed} of ${d.rows_total} changed`, base: t.base, new: t.new,
    delta: { bytes: delta('bytes'), calls: delta('calls'), peak_bytes: d.peak_heap.new - d.peak_heap.base, leaked_bytes: delta('leaked_bytes') },
    name: 'all sites (Δ peak: the whole heap at each trace\'s peak)' }, 'all'));
}

// One row of /api/diff (a site, or a caller of one): base and new bytes, the deltas, the name.
function diffRow(r, cls) {
  const tr = document.createElement('tr');
  const cell = (text, delta) => {
    const td = document.createElement('td');
    td.textContent = text;
    if (delta) td.className = delta > 0 ? 'up' : 'down';
    tr.append(td);
  };
  tr.className = cls;
  cell(r.rank); cell(r.status);
  cell(fmtBytes(r.base.bytes)); cell(fmtBytes(r.new.bytes));
  cell(signed(r.delta.bytes, fmtBytes), r.delta.bytes); cell(signed(r.delta.calls, fmtCount), r.delta.calls);
  cell(signed(r.delta.peak_bytes, fmtBytes), r.delta.peak_bytes); cell(signed(r.delta.leaked_bytes, fmtBytes), r.delta.leaked_bytes);
  cell(r.name);
  if (r.frames) tr.title = r.frames.map((f) => `${frameLabel(f)}  ${f.file ? f.file + ':' + f.line : ''}`).join('\n');
  return tr;
}

// ---- table keyboard: selection, callers (a tree walked up level by level), zoom ----
const siteRows = () => [...document.querySelectorAll(state.compare ? '#diff tbody tr.node' : '#top tbody tr.node')];
const depthOf = (tr) => tr.path ? tr.path.length - 1 : tr.depth;

function select(k) {
  const rows = siteRows();
  if (!rows.length) return;
  state.sel = Math.max(0, Math.min(rows.length - 1, k));
  rows.forEach((tr, i) => tr.classList.toggle('selected', i === state.sel));
  rows[state.sel].scrollIntoView({ block: 'nearest' });
  state.selPath = rows[state.sel].path;   // read by tests
}

// The rows under tr: every following row deeper than it.
function descendants(tr) {
  const out = [], d = depthOf(tr);
  for (let n = tr.nextElementSibling; n && n.classList.contains('callers') && depthOf(n) > d; n = n.nextElementSibling) out.push(n);
  return out;
}

// The selected row divided by the callers one level further up its call chains: /api/top (or /api/diff when comparing)
// with callers=ROW&path=R1,... (the ranks chosen on the way there), under the same filters.
async function expandCallers() {
  const tr = siteRows()[state.sel];
  if (!tr || tr.classList.contains('expanded')) return;
  const p = params(), q = filterQuery(p);
  for (const k of ['by', 'sort']) if (p.has(k)) q.set(k, p.get(k));
  q.set('callers', String(tr.path[0]));
  if (tr.path.length > 1) q.set('path', tr.path.slice(1).join(','));
  q.set('n', '20');
  q.set('frames', '1');
  const gen = state.gen;
  try {
    const res = await api(state.compare ? 'diff' : 'top', q);
    if (tr.classList.contains('expanded') || !tr.isConnected || gen !== state.gen) return;
    tr.classList.add('expanded');
    const depth = tr.path.length, indent = (sub) => { sub.firstElementChild.style.paddingLeft = (14 * depth) + 'px'; };
    let after = tr;
    for (const r of res.rows) {
      const shown = { ...r, rank: '↳ ' + r.rank, frames: null };
      const sub = node(state.compare ? diffRow(shown, 'callers') : topRow(shown, 'callers'), [...tr.path, r.rank], [...tr.names, r.name], r);
      indent(sub);
      after.after(sub);
      after = sub;
    }
    if (!res.rows.length) {
      const none = state.compare ? diffRow({ rank: '↳', status: '', base: res.total.base, new: res.total.new,
        delta: { bytes: 0, calls: 0, peak_bytes: 0, leaked_bytes: 0 }, name: res.rows_total ? 'no changed callers' : 'no callers' }, 'callers')
        : topRow({ ...res.total, rank: '↳', name: 'no callers' }, 'callers');
      none.depth = depth;
      indent(none);
      after.after(none);
    }
  } catch (e) {
    showError(e);
  }
}

// Left: folds an expanded row; on a row already folded, selects the row it divides.
function collapseCallers() {
  const rows = siteRows(), tr = rows[state.sel];
  if (!tr) return;
  if (tr.classList.contains('expanded')) {
    tr.classList.remove('expanded');
    descendants(tr).forEach((n) => n.remove());
    return;
  }
  const d = depthOf(tr);
  for (let k = state.sel - 1; d > 0 && k >= 0; k--) if (depthOf(rows[k]) === d - 1) { select(k); return; }
}

// A frame's function, or as hs_frame_name() names one without a symbol: its module and the address there.
function frameLabel(f) {
  if (f.function) return f.function;
  return f.module ? `${f.module.split('/').pop()}+${f.module_address}` : f.address;
}

// A row's frame as the flame graph names it: by function, without the " file:line" of by-line names.
function frameName(name, r) {
  if (r && r.frames && r.frames.length) return frameLabel(r.frames[0]);
  const m = /^(.*?)  \S+:\d+$/.exec(name);
  return m ? m[1] : name;
}

// Enter: the flame graph zoomed to the selected row's path, from its allocation site down through the callers chosen
// (the deepest frame of the path drawn); with main at the bottom, to the shallowest frame of the row's function.
function zoomToSelected() {
  const tr = siteRows()[state.sel], fl = state.flame;
  if (!tr || !fl) return;
  const names = tr.names.map((n, k) => frameName(n, k ? null : tr.site)).filter((n) => !n.startsWith('(no caller'));
  if (fl.direction === 'up') {
    const name = names[names.length - 1];
    let level = [fl.root];
    while (level.length) {
      const hit = level.find((n) => n.name === name);
      if (hit) { state.zoom = null; state.zoomStack = []; zoomTo(hit); $('flame').scrollIntoView({ block: 'nearest' }); return; }
      level = level.flatMap((n) => n.children);
    }
    showError(`${name} is not in the flame graph (too small, or hidden)`);
    return;
  }
  let n = fl.root;
  const stack = [];
  for (const name of names) {
    const ch = n.children.find((c) => c.name === name && !c.other);
    if (!ch) break;
    stack.push(n === fl.root ? null : n);
    n = ch;
  }
  if (n === fl.root) { showError(`${names[0]} is not in the flame graph (too small, or hidden)`); return; }
  state.zoomStack = stack.slice(0, -1);
  state.zoom = stack[stack.length - 1];
  zoomTo(n);
  if (stack.length < names.length) showError(`${names[stack.length]} is not in the flame graph under ${n.name} (too small, or hidden)`);
  $('flame').scrollIntoView({ block: 'nearest' });
}

function toggleHelp(show) {
  const h = $('help');
  h.hidden = show === undefined ? !h.hidden : !show;
}

function keys() {
  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target, typing = t instanceof HTMLInputElement || t instanceof HTMLSelectElement || t instanceof HTMLTextAreaElement;
    if (e.key === 'Escape') { toggleHelp(false); if (t === $('search')) t.blur(); return; }
    if (typing) return;
    const k = e.key, rows = siteRows().length;
    if (k === '/') { e.preventDefault(); $('search').focus(); $('search').select(); }
    else if (k === '?') toggleHelp();
    else if ((k === 'ArrowDown' || k === 'j') && rows) { e.preventDefault(); select(state.sel + 1); }
    else if ((k === 'ArrowUp' || k === 'k') && rows) { e.preventDefault(); select(state.sel < 0 ? 0 : state.sel - 1); }
    else if ((k === 'ArrowRight' || k === 'l') && state.sel >= 0) { e.preventDefault(); expandCallers(); }
    else if ((k === 'ArrowLeft' || k === 'h') && state.sel >= 0) { e.preventDefault(); collapseCallers(); }
    else if (k === 'Enter' && state.sel >= 0) { e.preventDefault(); zoomToSelected(); }
    else if (k === 'Backspace') { e.preventDefault(); zoomOut(); }
  });
  $('help-close').addEventListener('click', () => toggleHelp(false));
}

// ---- export: the table as JSON, the flame graph and timeline as standalone SVG, folded stacks ----
function download(name, text, type) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type }));
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

async function exportTop() {
  const p = params(), q = filterQuery(p);
  for (const k of ['by', 'sort']) if (p.has(k)) q.set(k, p.get(k));
  q.set('n', '0');
  try {
    const body = await api(state.compare ? 'diff' : 'top', q);
    download(state.compare ? 'heapscope-diff.json' : 'heapscope-top.json', JSON.stringify(body, null, 1), 'application/json');
  } catch (e) {
    showError(e);
  }
}

// The folded stacks of `heapscope flame --folded` for the current filter and weight (the new trace when comparing).
async function exportFolded() {
  const p = params(), q = filterQuery(p);
  for (const k of ['weight', 'at']) if (p.has(k)) q.set(k, p.get(k));
  if (state.compare) q.set('trace', 'new');
  try {
    const res = await fetch('/api/folded?' + q);
    if (!res.ok) throw new Error((await res.json()).error || res.statusText);
    download('heapscope.folded', await res.text(), 'text/plain');
  } catch (e) {
    showError(e);
  }
}

const xml = (s) => String(s).replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]);
const svgDoc = (w, h, title, body) => `<?xml version="1.0" encoding="UTF-8"?>\n` +
  `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="sans-serif" font-size="12">\n` +
  `<title>${xml(title)}</title>\n<rect width="100%" height="100%" fill="#ffffff"/>\n${body}</svg>\n`;

// The flame graph as drawn (zoom, search and colours included), each frame with its figures as a tooltip.
function flameSvg() {
  const fl = state.flame, c = $('flame'), w = c.clientWidth, h = c.getAttribute('height') | 0, top = 24;
  const fmt = fl.weight === 'count' ? fmtCount : fmtBytes;
  let body = `<text x="4" y="16" font-size="14">${xml(`heapscope flame graph (${fl.weight}) of ${fl.file}${fl.filter ? ', filter ' + fl.filter : ''}`)}</text>\n`;
  for (const b of state.layout) {
    const n = b.n, tip = `${n.name}${n.file ? ' ' + n.file + ':' + n.line : ''}: ` +
      (fl.compare ? `base ${fmt(n.base)}, new ${fmt(n.value)}, delta ${signed(n.value - n.base, fmt)}` : `${fmt(n.value)}, ${fmtCount(n.count)} allocations`);
    body += `<g><title>${xml(tip)}</title><rect x="${b.x.toFixed(2)}" y="${b.y + top}" width="${Math.max(b.w - 1, 0.5).toFixed(2)}" height="${ROW - 1}" fill="${b.fill}"${b.dim ? ' fill-opacity="0.45"' : ''}/>`;
    if (b.w > 30) body += `<text x="${(b.x + 3).toFixed(2)}" y="${b.y + top + 13}" textLength="${Math.min(b.w - 6, n.name.length * 7).toFixed(0)}" lengthAdjust="spacingAndGlyphs">${xml(n.name.length * 7 > b.w - 6 ? n.name.slice(0, Math.max(1, Math.floor((b.w - 6) / 7) - 1)) + '…' : n.name)}</text>`;
    body += '</g>\n';
  }
  return svgDoc(w, h + top, 'heapscope flame graph', body);
}

// The timeline: heap in use (and the base trace's when comparing), the filtered subset and RSS, on the page's scales.
function timelineSvg() {
  const tl = state.timeline, w = $('timeline').clientWidth, h = 200, pad = 4, top = 24, base = state.compare ? state.timelineBase : null;
  const end = Math.max(tl.duration_ns, base ? base.duration_ns : 0) || 1;
  const maxHeap = Math.max(1, ...tl.heap, ...(base ? base.heap : [])), maxRss = Math.max(1, ...tl.rss.filter((v) => v !== null));
  const pts = (times, vals, max) => times.map((t, k) => vals[k] === null ? null :
    `${(pad + (w - 2 * pad) * t / end).toFixed(1)},${(top + h - pad - (h - 2 * pad) * vals[k] / max).toFixed(1)}`).filter((v) => v).join(' ');
  let body = `<text x="4" y="16" font-size="14">${xml(`heapscope memory over ${fmtTime(tl.duration_ns)}: heap peak ${fmtBytes(Math.max(...tl.heap))}`)}</text>\n`;
  body += `<polyline fill="none" stroke="#8a94a6" stroke-width="1.5" points="${pts(tl.time_ns, tl.rss, maxRss)}"><title>RSS (own scale)</title></polyline>\n`;
  body += `<polyline fill="none" stroke="#2a6fdb" stroke-width="1.5" points="${pts(tl.time_ns, tl.heap, maxHeap)}"><title>heap in use</title></polyline>\n`;
  body += `<polyline fill="none" stroke="#e0701a" stroke-width="1.5" points="${pts(tl.time_ns, tl.filtered, maxHeap)}"><title>filtered</title></polyline>\n`;
  if (base) body += `<polyline fill="none" stroke="#555" stroke-dasharray="4 3" points="${pts(base.time_ns, base.heap, maxHeap)}"><title>base trace's heap in use</title></polyline>\n`;
  return svgDoc(w, h + top + 4, 'heapscope timeline', body);
}

// ---- tabs: flame graph and table, leaks, lifetimes ----
function showTab() {
  const t = state.tab;
  $('flame-box').hidden = $('top-box').hidden = t !== 'flame';
  $('leaks-box').hidden = t !== 'leaks';
  $('lifetimes-box').hidden = t !== 'lifetimes';
  document.querySelectorAll('#tabs button').forEach((b) => b.setAttribute('aria-selected', String(b.dataset.tab === t)));
}

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// A site's small timeline: all its live bytes (filled) and those of its kept blocks (line), one scale.
function drawSpark(c, all, kept) {
  c.setAttribute('height', 28);
  const [g, w, h] = fitCanvas(c), n = all.length, max = Math.max(1, ...all, ...kept);
  const X = (k) => 1 + (w - 2) * (k + 1) / n, Y = (v) => h - 1 - (h - 3) * v / max;
  const css = getComputedStyle(document.documentElement);
  g.clearRect(0, 0, w, h);
  g.beginPath(); g.moveTo(1, h - 1);
  all.forEach((v, k) => g.lineTo(X(k), Y(v)));
  g.lineTo(X(n - 1), h - 1); g.closePath();
  g.fillStyle = 'rgba(42, 111, 219, 0.25)'; g.fill();
  g.strokeStyle = css.getPropertyValue('--heap'); g.lineWidth = 1; g.stroke();
  g.beginPath(); g.moveTo(1, Y(0));
  kept.forEach((v, k) => g.lineTo(X(k), Y(v)));
  g.strokeStyle = css.getPropertyValue('--filt'); g.lineWidth = 1.5; g.stroke();
}

function drawLeaks() {
  const lk = state.leaks, body = $('leaks').tBodies[0];
  body.textContent = '';
  lk.sites.forEach((s, i) => {
    const tr = document.createElement('tr');
    const cells = [s.rank, s.verdict, fmtCount(s.calls), fmtBytes(s.bytes), fmtCount(s.leaked_count), fmtBytes(s.leaked_bytes),
      fmtBytes(s.kept_bytes), null, s.name];
    for (const v of cells) {
      const td = document.createElement('td');
      if (v === null) { const c = document.createElement('canvas'); td.append(c); } else td.textContent = v;
      tr.append(td);
    }
    tr.children[1].className = 'verdict';
    tr.title = 'show this site in the flame graph and table';
    tr.addEventListener('click', () => showSite(s));
    body.append(tr);
    drawSpark(tr.querySelector('canvas'), s.live, lk.kept_live ? lk.kept_live[i] : s.live.map(() => 0));
  });
  $('leaks-note').textContent = lk.sites.length ? `${lk.suspects} suspects among ${fmtCount(lk.sites_total)} sites` +
    (lk.suspects > lk.sites.length ? ` (first ${lk.sites.length} shown)` : '') : 'no leak suspects with this filter';
}

// A leak suspect in the flame graph and table: its allocation site's function as the alloc-site filter.
function showSite(s) {
  const fr = s.frames && s.frames[0], name = fr && fr.function ? fr.function : s.name.split(/\s+/)[0];
  const p = params();
  p.set('alloc-site', '^' + escapeRe(name) + '$');
  p.delete('tab'); p.delete('zoom');
  navigate(p);
}

function drawLifetimes() {
  const lt = state.lifetimes, c = $('lifetimes');
  if (!lt || c.clientWidth === 0) return;
  const [g, w, h] = fitCanvas(c), L = 58, B = 22, T = 8, R = 10, end = lt.duration_ns || 1;
  const lo = 3, hi = Math.max(lo + 1, Math.log10(Math.max(lt.max_life_ns, 1e3)));   // 1 us to the longest lifetime
  const X = (t) => L + (w - L - R) * t / end, Y = (life) => h - B - (h - B - T) * (Math.log10(Math.max(life, 1e3)) - lo) / (hi - lo);
  g.clearRect(0, 0, w, h);
  g.strokeStyle = '#d8dde6'; g.fillStyle = '#667'; g.font = '11px system-ui'; g.lineWidth = 1;
  for (let e = lo; e <= hi; e++) {
    const y = Y(10 ** e);
    g.beginPath(); g.moveTo(L, y); g.lineTo(w - R, y); g.stroke();
    g.fillText(fmtTime(10 ** e), 2, y + 4);
  }
  for (let k = 0; k <= 10; k++) {
    const x = X(end * k / 10);
    g.beginPath(); g.moveTo(x, T); g.lineTo(x, h - B); g.stroke();
    g.textAlign = k === 10 ? 'right' : k ? 'center' : 'left';
    g.fillText(fmtTime(end * k / 10), x, h - 6);
  }
  g.textAlign = 'left';
  let drawn = 0;
  for (const leaked of [0, 1]) {
    g.fillStyle = leaked ? 'rgba(198, 40, 40, 0.75)' : 'rgba(42, 111, 219, 0.45)';
    for (const [t, life, , lk] of lt.points) {
      if (lk !== leaked) continue;
      g.fillRect(X(t) - 1.5, Y(life) - 1.5, 3, 3);
      drawn++;
    }
  }
  state.lifetimesDrawn = drawn;
  $('lifetimes-note').textContent = `${fmtCount(lt.count)} points of ${fmtCount(lt.matched_records)} allocations` +
    (lt.stride > 1 ? ` (every ${lt.stride}th)` : '') + (lt.filter ? ` · filter ${lt.filter}` : '');
}

// ---- copy as command: the heapscope top (or diff, when comparing) command line of the current view ----
const shellQuote = (s) => /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
function commandLine() {
  const p = params(), i = state.info;
  const argv = state.compare ? ['heapscope', 'diff', i.file, i.compare.file] : ['heapscope', 'top', i ? i.file : 'TRACE'];
  for (const [k, v] of p) {
    if (!FILTERS.includes(k)) continue;
    if (PAIRS.has(k)) argv.push('--' + k, ...v.split(','));
    else if (FLAGS.has(k)) { if (v !== '0' && v !== 'false') argv.push('--' + k); }
    else argv.push('--' + k, v);
  }
  if (p.has('by')) argv.push('--by', p.get('by'));
  if (p.has('sort')) argv.push('--sort', p.get('sort'));
  return argv.map(shellQuote).join(' ');
}
async function copyCommand() {
  const text = commandLine(), out = $('command');
  out.textContent = text;
  out.hidden = false;
  try { await navigator.clipboard.writeText(text); out.title = 'copied to the clipboard'; } catch { out.title = 'select and copy'; }
}

// ---- loading ----
// Each refresh is one generation: an answer to an older one (a slow request overtaken by a newer view) is dropped.
async function refresh() {
  const gen = ++state.gen;
  urlToForm();
  showError(null);
  showWarnings(null);
  const warns = new Set();
  const p = params(), fq = filterQuery(p), cmp = state.compare;
  const flameQ = new URLSearchParams(fq), topQ = new URLSearchParams(fq), tlQ = new URLSearchParams(fq);
  for (const k of ['weight', 'at', 'direction']) if (p.has(k)) flameQ.set(k, p.get(k));
  for (const k of ['by', 'sort']) if (p.has(k)) topQ.set(k, p.get(k));
  topQ.set('n', '50');
  tlQ.set('points', String(Math.min(2000, Math.max(100, $('timeline').clientWidth | 0))));
  state.tab = ['leaks', 'lifetimes'].includes(p.get('tab')) ? p.get('tab') : 'flame';
  showTab();
  const leaksQ = new URLSearchParams(fq), ltQ = new URLSearchParams(fq);
  for (const k of ['by']) if (p.has(k)) leaksQ.set(k, p.get(k));
  leaksQ.set('n', '20');
  ltQ.set('points', '5000');
  const tlBaseQ = new URLSearchParams(tlQ);
  const side = p.get('trace') === 'base' ? 'base' : 'new';
  if (cmp) {   // the flame graph and table compare; the timeline shows the new trace, leaks and lifetimes the one picked
    flameQ.set('compare', '1');
    tlQ.set('trace', 'new');
    for (const q of [leaksQ, ltQ]) q.set('trace', side);
  }
  document.querySelectorAll('.trace-pick').forEach((el) => { el.hidden = !cmp; el.querySelector('select').value = side; });
  $('diff').hidden = !cmp;
  $('top').hidden = cmp;
  $('legend-base').hidden = !cmp;
  try {
    const [tl, fl, top, lk, lt, tlb] = await Promise.all([api('timeline', tlQ, warns), api('flame', flameQ, warns),
      api(cmp ? 'diff' : 'top', topQ, warns), state.tab === 'leaks' ? api('leaks', leaksQ, warns) : null,
      state.tab === 'lifetimes' ? api('lifetimes', ltQ, warns) : null, cmp ? api('timeline', tlBaseQ, warns) : null]);
    if (gen !== state.gen) return;
    showWarnings(warns);
    state.timeline = tl; state.flame = fl; state.timelineBase = tlb;
    zoomFromUrl();
    drawTimeline(); drawFlame();
    if (cmp) drawDiff(top); else drawTop(top);
    state.leaks = lk; state.lifetimes = lt;
    if (lk) drawLeaks();
    if (lt) drawLifetimes();
  } catch (e) {
    if (gen !== state.gen) return;
    showError(e);
  }
  if (!$('command').hidden) $('command').textContent = commandLine();
  state.loads = (state.loads || 0) + 1;   // tests wait on it
}

// A large trace loads in the background: the server answers /api/status with the fraction read until it is ready.
async function waitLoaded() {
  const box = $('loading'), bar = $('load-progress'), text = $('load-text');
  for (;;) {
    let st;
    try {
      st = await api('status');
    } catch (e) {
      text.textContent = 'cannot reach heapscope view: ' + e.message;
      box.hidden = false;
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    if (st.state === 'ready') { box.hidden = true; return true; }
    if (st.state === 'failed') { box.hidden = false; bar.hidden = true; text.textContent = st.error; return false; }
    state.progress.push(st.fraction);   // tests read it
    box.hidden = false;
    bar.value = st.fraction;
    text.textContent = `loading ${st.traces.map((t) => t.file).join(' and ')}: ${Math.floor(100 * st.fraction)}%`;
    await new Promise((r) => setTimeout(r, 150));
  }
}

async function main() {
  if (!await waitLoaded()) { $('info').textContent = 'the trace could not be loaded'; return; }
  try {
    state.info = await api('info');
    state.compare = !!state.info.compare;
    drawInfo(state.info);
  } catch (e) {
    $('info').textContent = 'cannot load the trace summary: ' + e.message;
  }
  $('filters').addEventListener('submit', (e) => { e.preventDefault(); navigate(formToUrl()); });
  $('clear').addEventListener('click', () => {
    const p = params(), q = new URLSearchParams();
    for (const [k, v] of p) if (!FILTERS.includes(k)) q.append(k, v);
    navigate(q);
  });
  $('by').addEventListener('change', (e) => setOption('by', e.target.value, 'backtrace'));
  document.querySelectorAll('#top th[data-sort]').forEach((th) =>
    th.addEventListener('click', () => setOption('sort', th.dataset.sort, 'bytes')));
  document.querySelectorAll('#diff th[data-dsort]').forEach((th) =>
    th.addEventListener('click', () => setOption('sort', th.dataset.dsort, 'change')));
  timelineBrush();
  flameEvents();
  keys();
  $('export-top').addEventListener('click', exportTop);
  $('export-folded').addEventListener('click', exportFolded);
  $('export-flame-svg').addEventListener('click', () => { if (state.flame) download('heapscope-flame.svg', flameSvg(), 'image/svg+xml'); });
  $('export-timeline-svg').addEventListener('click', () => { if (state.timeline) download('heapscope-timeline.svg', timelineSvg(), 'image/svg+xml'); });
  document.querySelectorAll('#tabs button').forEach((b) =>
    b.addEventListener('click', () => setOption('tab', b.dataset.tab, 'flame')));
  $('copy-command').addEventListener('click', copyCommand);
  document.querySelectorAll('.trace-pick select').forEach((el) =>
    el.addEventListener('change', (e) => setOption('trace', e.target.value, 'new')));
  window.addEventListener('popstate', refresh);
  window.addEventListener('resize', () => { drawTimeline(); drawFlame(); if (state.tab === 'lifetimes') drawLifetimes(); });
  await refresh();
}

main();
