// What every browser test shares: Debian's Chromium driven by playwright-core, talking to
// 127.0.0.1 only (no background networking, no updates, no QUIC, no sync, a fresh profile;
// every request to another host is aborted and counted as a failure), page errors and
// console errors collected, the player's state, axe-core, overflow checks and screenshots.
//
//   import { open, fail, note, ... } from './lib.mjs';
//   const b = await open(base);          // b.page, b.context
//   ...
//   await b.close();                     // fails if the page logged errors or went abroad
//
// A test exits 1 with "FAIL: ..." on the first failure (fail() throws; run() catches).
import { mkdtempSync, mkdirSync, rmSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const TOL = 0.5;

export function fail(msg) {
  console.error(`FAIL: ${msg}`);
  process.exitCode = 1;
  throw new Error(msg);
}
export function note(msg) { console.log(`# ${msg}`); }

// Runs body(), turning any exception into "FAIL: ..." and exit status 1.
export async function run(body) {
  try {
    await body();
  } catch (e) {
    if (!process.exitCode) {
      console.error(`FAIL: ${e && e.message ? e.message : e}`);
      process.exitCode = 1;
    }
  }
}

// A browser on a fresh profile whose only reachable origin is base's (on 127.0.0.1).
// mobile: a phone's touch screen (no hover, a coarse pointer), as Chromium emulates one.
export async function open(base, { width = 1366, height = 900, mobile = false } = {}) {
  if (!existsSync(CHROMIUM)) fail(`${CHROMIUM} is missing: install Debian's chromium (scripts/install-deps.sh)`);
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch (e) {
    fail('playwright-core is not installed: run (cd tests/browser && npm ci)');
  }
  const origin = new URL(base).origin;
  if (new URL(base).hostname !== '127.0.0.1') fail(`${base} is not on 127.0.0.1`);
  const profile = mkdtempSync(join(tmpdir(), 'vt-chromium-'));
  const foreign = [];
  const errors = [];
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
             '--disable-component-update', '--no-first-run', '--disable-quic', '--disable-sync',
             '--disable-default-apps', '--disable-extensions', '--no-default-browser-check',
             '--autoplay-policy=no-user-gesture-required', '--mute-audio'],
      viewport: { width, height },
      isMobile: mobile,
      hasTouch: mobile,
      timeout: 30000,
    });
  } catch (e) {
    rmSync(profile, { recursive: true, force: true });
    throw e;
  }
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(origin + '/') || u === origin || u.startsWith('data:') || u.startsWith('blob:')) {
      return route.continue();
    }
    foreign.push(u);
    return route.abort();
  });
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(15000);
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  return {
    context, page, origin, errors, foreign,
    // Errors seen so far fail the test; allow(re) forgives the console errors matching re
    // (a 401/403/404 the test provoked on purpose).
    check(allow) {
      const bad = allow ? errors.filter((e) => !allow.test(e)) : errors;
      errors.length = 0;
      if (bad.length) fail(`errors in the page: ${bad.join(' | ')}`);
      if (foreign.length) fail(`the browser tried to reach other hosts: ${foreign.join(', ')}`);
    },
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

// GET url and fail unless the status is want.
export async function go(page, url, want = 200) {
  const r = await page.goto(url);
  if (!r || r.status() !== want) fail(`GET ${url} gave ${r && r.status()}, want ${want}`);
  return r;
}

// The player's state, read in the page.
export async function playerState(page) {
  return page.evaluate(() => {
    const p = document.getElementById('player');
    return p ? { t: p.currentTime, ready: p.readyState, seeking: p.seeking, paused: p.paused,
                 err: p.error ? p.error.code : null, dur: p.duration } : null;
  });
}

// Wait until the player has metadata and is not seeking, with currentTime within
// [lo, hi] (a number: want ± TOL).
export async function expectPlayerNear(page, want, what, hi) {
  const lo = hi === undefined ? want - TOL : want;
  const top = hi === undefined ? want + TOL : hi;
  const deadline = Date.now() + 15000;
  let s = null;
  while (Date.now() < deadline) {
    s = await playerState(page);
    if (!s) fail(`${what}: no #player on ${page.url()}`);
    if (s.err) fail(`${what}: the player failed to load the media (MediaError ${s.err})`);
    if (s.ready >= 1 && !s.seeking && s.t >= lo && s.t <= top) {
      note(`${what}: currentTime ${s.t.toFixed(3)} (want ${lo.toFixed(3)}..${top.toFixed(3)})`);
      return s;
    }
    await page.waitForTimeout(50);
  }
  fail(`${what}: currentTime ${s && s.t}, readyState ${s && s.ready}, want ${lo}..${top}`);
}

// axe-core on the page as it is: fails on any serious or critical violation.
let axeSource = null;
export async function axe(page, what) {
  if (!axeSource) {
    const p = join(here, 'node_modules', 'axe-core', 'axe.min.js');
    if (!existsSync(p)) fail('axe-core is not installed: run (cd tests/browser && npm ci)');
    axeSource = readFileSync(p, 'utf8');
  }
  // evaluate() runs outside the page's Content-Security-Policy, which forbids inline script
  await page.evaluate(axeSource);
  const res = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
                                      nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  const bad = res.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  for (const v of res) note(`axe ${what}: ${v.impact} ${v.id}: ${v.help} (${v.nodes.join(', ')})`);
  if (bad.length) fail(`axe-core on ${what}: ${bad.map((v) => `${v.impact} ${v.id} at ${v.nodes.join(', ')}`).join('; ')}`);
  note(`axe ${what}: no serious or critical violation`);
}

// Fails when the document is wider than the viewport (a phone must not scroll sideways).
export async function noHorizontalOverflow(page, what) {
  const o = await page.evaluate(() => ({ sw: document.documentElement.scrollWidth,
                                         cw: document.documentElement.clientWidth }));
  if (o.sw > o.cw + 1) fail(`${what}: the page is ${o.sw} px wide in a ${o.cw} px viewport`);
}

// Screenshots of the page at 1366x900 and 390x844 into outdir/NAME-wide.png and
// NAME-phone.png, and no horizontal overflow at 390 px. Leaves the viewport wide.
export async function screenshots(page, outdir, name) {
  mkdirSync(outdir, { recursive: true });
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.screenshot({ path: join(outdir, `${name}-wide.png`), fullPage: false });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(100);
  await noHorizontalOverflow(page, `${name} at 390 px`);
  await page.screenshot({ path: join(outdir, `${name}-phone.png`), fullPage: false });
  await page.setViewportSize({ width: 1366, height: 900 });
}
