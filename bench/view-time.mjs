// view-time.mjs - times `heapscope view` in headless chromium: from starting the server to the first rendered page, then one Apply of a filter
//
// Run by bench/run.sh with HS (the heapscope binary), TRACE, PORT, CHROMIUM and PW (tests/web, where npm ci put
// playwright-core). Prints one line: `first-page SECONDS apply SECONDS`, or `error WHY`.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { HS, TRACE, PORT, CHROMIUM, PW } = process.env;
const { chromium } = createRequire(join(PW, 'package.json'))('playwright-core');
const url = `http://127.0.0.1:${PORT}/`;
const profile = mkdtempSync(join(tmpdir(), 'hs-view-time-'));
let server, ctx;

try {
  ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    viewport: { width: 1400, height: 1000 },
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  page.setDefaultTimeout(120000);
  // the browser is up before the clock starts: a user's browser is already open
  const t0 = performance.now();
  server = spawn(HS, ['view', '--port', PORT, TRACE], { stdio: 'ignore' });
  for (;;) {
    try {
      await page.goto(url);
      break;
    } catch {
      if (performance.now() - t0 > 120000) throw new Error('the server never answered');
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  // loads counts the page's completed refreshes: the first one is the first rendered page with data
  await page.waitForFunction(() => window.heapscope && (window.heapscope.loads || 0) > 0);
  const t1 = performance.now();
  await page.fill('input[name="live-between-1"]', '25%');
  await page.fill('input[name="live-between-2"]', '75%');
  const n = await page.evaluate(() => window.heapscope.loads);
  const t2 = performance.now();
  await page.click('#filters button[type="submit"]');
  await page.waitForFunction((k) => window.heapscope.loads > k, n);
  const t3 = performance.now();
  console.log(`first-page ${((t1 - t0) / 1000).toFixed(2)} apply ${((t3 - t2) / 1000).toFixed(2)}`);
} catch (e) {
  console.log(`error ${String(e && e.message || e).split('\n')[0]}`);
} finally {
  if (ctx) await ctx.close();
  if (server) server.kill();
  rmSync(profile, { recursive: true, force: true });
}
