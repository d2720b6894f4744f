// e2e.mjs - the viewer's page in headless chromium (playwright-core): load, timeline brushes, flame graph, table, keys, URL state
//
// Run by tests/web/e2e.sh, which starts `heapscope view` on a trace of tests/analysis/progs/phases.c and sets
// HS (the heapscope binary), TRACE, URL (the server), ART (screenshot folder), PROFILE (a user data dir), CHROMIUM.
// Expected values come from the CLI (`heapscope report/top --json`) on the same trace.
// Prints `ok NAME` or `FAIL NAME: why` per check.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { chromium } from 'playwright-core';

const { HS, TRACE, URL, ART, PROFILE, CHROMIUM } = process.env;
const cli = (...args) => JSON.parse(execFileSync(HS, [args[0], TRACE, ...args.slice(1), '--json'], { encoding: 'utf8' }));
const fmtCount = (n) => Math.round(n).toLocaleString('en-US');
const ROW = 18;   // app.js's flame row height

let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    console.log(`ok ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${String(e && e.message || e).split('\n')[0]}`);
  }
}
function assert(cond, why) { if (!cond) throw new Error(why); }

// The CLI filter options of the page's URL (the same turn of query parameters into argv as the server's).
function cliFilter(url) {
  const argv = [];
  for (const [k, v] of new globalThis.URL(url).searchParams) {
    if (k === 'allocated-between' || k === 'live-between') argv.push('--' + k, ...v.split(','));
    else if (k === 'leaked' || k === 'temporary') argv.push('--' + k);
    else if (!['weight', 'at', 'direction', 'by', 'sort', 'tab', 'zoom'].includes(k)) argv.push(`--${k}=${v}`);
  }
  return argv;
}

const profile = mkdtempSync(PROFILE + '-');
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  viewport: { width: 1400, height: 1000 },
});
const page = ctx.pages()[0] || await ctx.newPage();
page.setDefaultTimeout(8000);
const errors = [];
page.on('pageerror', (e) => errors.push(e.message));

const loads = () => page.evaluate(() => window.heapscope.loads || 0);
// Runs act() and waits until the page has finished the refresh it starts.
async function settled(act) {
  const n = await loads();
  await act();
  await page.waitForFunction((k) => (window.heapscope.loads || 0) > k, n);
}
const tableText = () => page.locator('#top tbody').innerText();
const totalCalls = () => page.locator('#top tbody tr.all td').nth(1).innerText();
const shot = (name) => page.screenshot({ path: `${ART}/${name}.png`, fullPage: true });

// A drag on the timeline canvas from time t0 to t1 (ns), with shift held for "live between".
async function brush(t0, t1, shift) {
  const c = page.locator('#timeline');
  const box = await c.boundingBox(), dur = await page.evaluate(() => window.heapscope.timeline.duration_ns);
  const X = (t) => box.x + 4 + (box.width - 8) * t / dur, y = box.y + box.height / 2;
  await page.mouse.move(X(t0), y);
  if (shift) await page.keyboard.down('Shift');
  await page.mouse.down();
  await page.mouse.move((X(t0) + X(t1)) / 2, y, { steps: 4 });
  await page.mouse.move(X(t1), y, { steps: 4 });
  await page.mouse.up();
  if (shift) await page.keyboard.up('Shift');
}

// The flame cell of a function at a depth (1: allocation sites under "all"), in page coordinates.
async function flameCell(name, depth) {
  const cell = await page.evaluate(([n, d, row]) => {
    const b = window.heapscope.layout.find((l) => l.n.name === n && Math.round(l.y / row) === d);
    return b && { x: b.x, y: b.y, w: b.w, value: b.n.value };
  }, [name, depth, ROW]);
  assert(cell, `no cell ${name} at depth ${depth} in the flame graph`);
  const box = await page.locator('#flame').boundingBox();
  return { ...cell, px: box.x + cell.x + Math.min(cell.w / 2, 40), py: box.y + cell.y + ROW / 2 };
}

let prev = null;   // URL and table before the "live between" drag, for Back
try {
  await check('load', async () => {
    await page.goto(URL);
    await page.waitForFunction(() => window.heapscope && window.heapscope.loads > 0 && window.heapscope.info);
    const want = cli('report').allocations;
    const info = await page.locator('#info').innerText();
    assert(info.includes(`allocations ${fmtCount(want)}`), `info panel '${info}' lacks allocations ${fmtCount(want)}`);
    const calls = await totalCalls();
    assert(calls === fmtCount(want), `table total calls ${calls}, want ${fmtCount(want)}`);
    await shot('load');
  });

  await check('drag-allocated-between', async () => {
    const before = await totalCalls();
    await settled(() => brush(150e6, 450e6, false));
    const url = page.url(), p = new globalThis.URL(url).searchParams;
    assert(p.has('allocated-between'), `URL ${url} has no allocated-between`);
    const want = cli('top', ...cliFilter(url)).total.calls;
    const got = await totalCalls();
    assert(got !== before, `table total unchanged (${got})`);
    assert(got === fmtCount(want), `table total ${got}, heapscope top says ${fmtCount(want)}`);
    const form = await page.locator('input[name="allocated-between-1"]').inputValue();
    assert(form === p.get('allocated-between').split(',')[0], `filter form shows '${form}'`);
    await shot('allocated-between');
  });

  await check('flame-tooltip', async () => {
    const url = page.url();
    const row = cli('top', ...cliFilter(url), '--by', 'function').rows.find((r) => r.name.split(/\s+/)[0] === 'temporaries');
    assert(row, 'heapscope top --by function has no temporaries row');
    const cell = await flameCell('temporaries', 1);
    await page.mouse.move(cell.px, cell.py);
    const tip = page.locator('#tip');
    await tip.waitFor({ state: 'visible' });
    const text = await tip.innerText();
    assert(text.startsWith('temporaries'), `tooltip '${text}' does not name temporaries`);
    assert(text.includes(`(${fmtCount(row.bytes)} B)`), `tooltip '${text.replace(/\n/g, ' | ')}' lacks ${fmtCount(row.bytes)} B`);
    assert(text.includes('phases.c:'), `tooltip '${text}' lacks file:line`);
    await shot('flame-tooltip');
  });

  await check('flame-zoom', async () => {
    const cell = await flameCell('temporaries', 1);
    await page.mouse.click(cell.px, cell.py);
    let z = await page.locator('#flame-zoom').innerText();
    assert(z === 'zoomed: temporaries', `zoom label '${z}'`);
    const w = await page.evaluate(() => window.heapscope.layout.find((l) => l.n === window.heapscope.zoom).w);
    const cw = await page.evaluate(() => document.getElementById('flame').clientWidth);
    assert(Math.abs(w - cw) < 1, `zoomed cell is ${w} px wide, canvas ${cw}`);
    await shot('flame-zoomed');
    await page.click('#reset');
    z = await page.locator('#flame-zoom').innerText();
    assert(z === '' && await page.evaluate(() => window.heapscope.zoom === null), `after Reset: '${z}'`);
  });

  await check('flame-search', async () => {
    await page.mouse.move(5, 5);
    await page.keyboard.press('/');
    assert(await page.evaluate(() => document.activeElement.id === 'search'), '/ does not focus the search box');
    await page.keyboard.type('temporar');
    const fl = await page.evaluate(() => window.heapscope.flame);
    const site = fl.root.children.find((n) => n.name === 'temporaries');
    const want = `(${(100 * site.value / fl.total).toFixed(2)}%)`;
    const got = await page.locator('#search-result').innerText();
    assert(got.includes(want), `search result '${got}', want ${want}`);
    await shot('flame-search');
    await page.keyboard.press('Escape');
    await page.fill('#search', '');
    await page.dispatchEvent('#search', 'input');
  });

  await check('live-between-shift-drag', async () => {
    await settled(() => page.click('#clear'));
    assert(!page.url().includes('between'), `Clear left ${page.url()}`);
    prev = { url: page.url(), table: await tableText() };
    const before = await totalCalls();
    await settled(() => brush(620e6, 700e6, true));
    const url = page.url(), p = new globalThis.URL(url).searchParams;
    assert(p.has('live-between'), `URL ${url} has no live-between`);
    const want = cli('top', ...cliFilter(url)).total.calls;
    const got = await totalCalls();
    assert(got !== before, `table total unchanged (${got})`);
    assert(got === fmtCount(want), `table total ${got}, heapscope top says ${fmtCount(want)}`);
    await shot('live-between');
  });

  await check('table-callers', async () => {
    const url = page.url();
    const want = cli('top', ...cliFilter(url), '--callers', '2', '--frames', '1').rows;
    await page.locator('#top tbody tr.site').first().click();
    await page.keyboard.press('j');
    const sel = await page.locator('#top tbody tr.selected td').first().innerText();
    assert(sel === '2', `after click on row 1 and j, selected row is '${sel}'`);
    await page.keyboard.press('ArrowRight');
    const sub = page.locator('#top tbody tr.callers');
    await sub.first().waitFor();
    const names = await sub.evaluateAll((trs) => trs.map((tr) => tr.lastElementChild.textContent));
    assert(JSON.stringify(names) === JSON.stringify(want.map((r) => r.name)),
      `callers rows ${JSON.stringify(names)}, heapscope top --callers 2: ${JSON.stringify(want.map((r) => r.name))}`);
    await shot('table-callers');
    await page.keyboard.press('ArrowLeft');
    assert(await sub.count() === 0, 'ArrowLeft leaves the callers rows');
  });

  await check('table-enter-zoom', async () => {
    await page.keyboard.press('k');
    const fn = await page.evaluate(() => window.heapscope.top.rows[window.heapscope.sel].frames[0].function);
    await page.keyboard.press('Enter');
    const z = await page.locator('#flame-zoom').innerText();
    assert(z === 'zoomed: ' + fn, `Enter on ${fn}: zoom label '${z}'`);
    await page.keyboard.press('Backspace');
    const z2 = await page.locator('#flame-zoom').innerText();
    assert(z2 === '', `Backspace: zoom label '${z2}'`);
  });

  await check('shortcut-sheet', async () => {
    await page.keyboard.press('?');
    await page.locator('#help').waitFor({ state: 'visible' });
    await shot('shortcuts');
    await page.keyboard.press('Escape');
    await page.locator('#help').waitFor({ state: 'hidden' });
  });

  await check('url-roundtrip', async () => {
    const url = page.url(), table = await tableText();
    const form = await page.locator('input[name="live-between-1"]').inputValue();
    await page.goto(url);
    await page.waitForFunction(() => window.heapscope && window.heapscope.loads > 0);
    assert(page.url() === url, `reload went to ${page.url()}`);
    const f2 = await page.locator('input[name="live-between-1"]').inputValue();
    assert(f2 === form && form !== '', `live between form '${f2}' after reload, was '${form}'`);
    assert(await tableText() === table, 'the table differs after reload');
  });

  await check('back', async () => {
    assert(prev, 'no state before the drag to go back to');
    await page.goBack();
    await page.waitForFunction((u) => location.href === u, prev.url);
    await page.waitForFunction((t) => document.querySelector('#top tbody').innerText === t, prev.table);
    const lb = await page.locator('input[name="live-between-1"]').inputValue();
    assert(lb === '', `live between form still '${lb}' after Back`);
  });

  await check('leaks-tab', async () => {
    await page.goto(URL);
    await page.waitForFunction(() => window.heapscope && window.heapscope.loads > 0);
    await settled(() => page.click('#tabs button[data-tab="leaks"]'));
    const want = cli('leaks').sites[0];
    assert(want, 'heapscope leaks lists no suspect');
    const cells = await page.locator('#leaks tbody tr').first().locator('td').allInnerTexts();
    assert(cells[0] === '1' && cells[1] === want.verdict && cells[8] === want.name.replace(/\s+/g, ' '),
      `first suspect '${cells.join(' | ')}', heapscope leaks says ${want.verdict} ${want.name}`);
    const kept = await page.evaluate(() => window.heapscope.leaks.kept_live[0]);
    assert(kept.length === 50 && Math.max(...kept) > 0, `kept series of the first suspect: ${JSON.stringify(kept)}`);
    assert(await page.locator('#flame-box').isHidden(), 'the flame graph is still shown on the leaks tab');
    await shot('leaks');
    await settled(() => page.locator('#leaks tbody tr').first().click());
    const url = page.url(), p = new globalThis.URL(url).searchParams;
    assert(p.has('alloc-site') && !p.has('tab'), `after a click on the suspect: ${url}`);
    const calls = cli('top', ...cliFilter(url)).total.calls;
    assert(calls === want.calls && await totalCalls() === fmtCount(calls),
      `table total ${await totalCalls()} for ${p.get('alloc-site')}, want ${fmtCount(want.calls)}`);
  });

  await check('lifetimes-tab', async () => {
    await settled(() => page.click('#clear'));
    await settled(() => page.click('#tabs button[data-tab="lifetimes"]'));
    const lt = await page.evaluate(() => ({ n: window.heapscope.lifetimes.count, drawn: window.heapscope.lifetimesDrawn,
      matched: window.heapscope.lifetimes.matched_records }));
    const want = cli('top', ...cliFilter(page.url())).total.calls;
    assert(lt.n > 0 && lt.drawn === lt.n && lt.matched === want, `lifetimes: ${JSON.stringify(lt)}, want ${want} allocations`);
    const inked = await page.evaluate(() => {
      const c = document.getElementById('lifetimes'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i + 3] && Math.abs(d[i] - d[i + 2]) > 60) n++;   // blue (freed) or red (never freed) dots
      return n;
    });
    assert(inked > 20, `only ${inked} coloured pixels on the lifetimes canvas`);
    await shot('lifetimes');
  });

  await check('copy-as-command', async () => {
    await page.goto(URL + '?live-between=150ms,450ms&through=make_node');
    await page.waitForFunction(() => window.heapscope && window.heapscope.loads > 0);
    await page.click('#copy-command');
    const text = await page.locator('#command').innerText();
    const want = `heapscope top ${TRACE} --live-between 150ms 450ms --through make_node`;
    assert(text === want, `command '${text}', want '${want}'`);
    const calls = JSON.parse(execFileSync(HS, [...text.split(' ').slice(1), '--json'], { encoding: 'utf8' })).total.calls;
    assert(await totalCalls() === fmtCount(calls), `the command gives ${calls} calls, the table ${await totalCalls()}`);
    await shot('copy-as-command');
  });

  await check('zoom-in-url', async () => {
    await page.goto(URL);
    await page.waitForFunction(() => window.heapscope && window.heapscope.loads > 0);
    const cell = await flameCell('temporaries', 1);
    await page.mouse.click(cell.px, cell.py);
    const url = await page.evaluate(() => location.href);
    assert(new globalThis.URL(url).searchParams.get('zoom') === 'temporaries', `URL after zoom: ${url} (${await page.locator('#flame-zoom').innerText()})`);
    await page.reload();
    await page.waitForFunction(() => window.heapscope && window.heapscope.loads > 0);
    const z = await page.locator('#flame-zoom').innerText();
    assert(z === 'zoomed: temporaries', `after reload the zoom label is '${z}'`);
    await shot('zoom-restored');
    await page.click('#reset');
    assert(!new globalThis.URL(page.url()).searchParams.has('zoom'), `Reset left ${page.url()}`);
  });

  await check('no-page-errors', async () => { assert(errors.length === 0, errors.join('; ')); });
} finally {
  await ctx.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(0);
