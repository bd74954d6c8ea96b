// The video page's viewer fixes of issue 25 (item 6) in Chromium, at desktop and phone sizes:
//   node tests/browser/viewer.mjs BASE_URL MANY_ID DISSOLVE_ID DISSOLVE_HIT_S OUTDIR URL_ID URL
// MANY_ID has more than 200 shots, its last one long, duplicate frames and 40 cues
// (tests/e2e/t1341-viewer.sh). Checks, at 1366x900 and as a 390x844 phone: the strip's last
// tile is the long shot at the end of the video and seeks there; a tapped cue keeps the
// player in view (on a phone the transcript is under it); "duplicate of #N" scrolls to that
// frame without reloading or pausing the player; the noise lines are folded; the screen
// hit after a dissolve opens the player at its moment; URL_ID (added from URL, a plain
// media URL) has "on the source at this second" follow playback as "Open at this second"
// does (URL#t=S). Screenshots viewer-*.png in OUTDIR.
import { open, fail, note, go, run, expectPlayerNear, playerState } from './lib.mjs';
import { join } from 'node:path';

const [base, many, dis, dhit, outdir, remote, remoteUrl] = process.argv.slice(2);
if (!base || !many || !dis || !dhit || !outdir || !remote || !remoteUrl) {
  console.error('usage: viewer.mjs BASE_URL MANY_ID DISSOLVE_ID DISSOLVE_HIT_S OUTDIR URL_ID URL');
  process.exit(2);
}

// The player is (mostly) on screen: at most a quarter of it off either edge.
async function playerInView(page) {
  return page.evaluate(() => {
    const r = document.getElementById('player').getBoundingClientRect();
    return r.top >= -r.height / 4 && r.bottom <= innerHeight + r.height / 4;
  });
}

async function startPlaying(page) {
  await page.evaluate(() => { const p = document.getElementById('player'); p.muted = true; return p.play().catch(() => {}); });
  await page.waitForFunction(() => !document.getElementById('player').paused, null, { timeout: 10000 })
    .catch(() => fail('the player does not play'));
}

async function size(name, opts) {
  const b = await open(base, opts);
  const { page } = b;
  const click = (loc) => (opts.mobile ? loc.tap() : loc.click());

  // ---- the strip: every shot, the last tile the long shot at the end ----
  await go(page, `${base}/v/${many}`);
  await page.waitForFunction(() => document.getElementById('player').readyState >= 1, null, { timeout: 15000 });
  const dur = (await playerState(page)).dur;
  const tiles = page.locator('svg.shots a.shot');
  const n = await tiles.count();
  if (n < 2 || n > 200) fail(`${name}: the strip has ${n} tiles, want 2..200`);
  const last = tiles.nth(n - 1);
  const lastT = parseFloat(await last.getAttribute('data-t'));
  if (!(lastT > dur - 9 && lastT < dur - 7)) fail(`${name}: the strip's last tile starts at ${lastT}, the long shot at ${dur - 8}`);
  const box = await last.boundingBox();
  const svg = await page.locator('svg.shots').boundingBox();
  if (!box || box.x + box.width < svg.x + svg.width - 2) fail(`${name}: the strip's last tile ends before the strip does`);
  if (!opts.mobile) {
    await last.hover();
    const label = await page.locator('.kfpop span').textContent();
    if (!/^Shot \d+, /.test(label)) fail(`${name}: the last tile's preview says '${label}'`);
    await tiles.nth(0).hover();
    const first = await page.locator('.kfpop span').textContent();
    note(`${name}: first tile '${first}', last '${label}'`);
  }
  const url0 = page.url();
  await page.locator('#timeline').scrollIntoViewIfNeeded();
  await click(last);
  await expectPlayerNear(page, lastT, `${name}: the strip's last tile`);
  if (page.url() !== url0) fail(`${name}: the tile navigated to ${page.url()}`);

  // ---- a tapped cue keeps the player in view ----
  await page.evaluate(() => document.getElementById('player').pause());
  const cues = page.locator('li.cue a.seek');
  const cue = cues.nth((await cues.count()) - 1);
  await cue.scrollIntoViewIfNeeded();
  // the page scrolled so the transcript's end shows (on a phone, the player scrolls away)
  await page.evaluate(() => {
    const box = document.querySelector('.cuebox');
    box.scrollTop = box.scrollHeight;
    const r = box.getBoundingClientRect();
    window.scrollBy(0, r.bottom - innerHeight + 4);
  });
  const before = await playerInView(page);
  const cueT = parseFloat(await cue.getAttribute('data-t'));
  await click(cue);
  await expectPlayerNear(page, cueT, `${name}: the last cue`);
  await page.waitForTimeout(300);
  if (!(await playerInView(page))) fail(`${name}: the player is out of view after a tapped cue`);
  const cueBox = await cue.boundingBox();
  note(`${name}: player in view before the tap: ${before}, after: true; the cue at y=${cueBox && cueBox.y}`);
  await page.screenshot({ path: join(outdir, `viewer-cue-${name}.png`) });

  // ---- "duplicate of #N": a scroll on the page, the player playing on ----
  const dup = page.locator('li.frame a.dup').first();
  if (!(await dup.count())) fail(`${name}: no "duplicate of" link on the page`);
  const target = (await dup.getAttribute('href')).slice(1);
  await startPlaying(page);
  const path0 = new URL(page.url()).pathname + new URL(page.url()).search;
  await dup.scrollIntoViewIfNeeded();
  let navigated = false;
  page.once('framenavigated', (f) => { if (f === page.mainFrame() && !f.url().includes('#')) navigated = true; });
  await click(dup);
  await page.waitForTimeout(400);
  const u = new URL(page.url());
  if (navigated || u.pathname + u.search !== path0 || u.hash !== `#${target}`) fail(`${name}: the duplicate link went to ${page.url()}`);
  const seen = await page.evaluate((id) => {
    const r = document.getElementById(id).getBoundingClientRect();
    return r.top < innerHeight && r.bottom > 0;
  }, target);
  if (!seen) fail(`${name}: frame ${target} is not on screen after the duplicate link`);
  if ((await playerState(page)).paused) fail(`${name}: the duplicate link stopped the player`);
  await page.evaluate(() => document.getElementById('player').pause());
  await page.screenshot({ path: join(outdir, `viewer-dup-${name}.png`) });

  // ---- the noise lines folded, when there are any ----
  const folds = await page.locator('details.noise').count();
  const opened = await page.locator('details.noise[open]').count();
  if (opened) fail(`${name}: ${opened} of ${folds} noise folds are open with no query`);

  // ---- a screen hit after a dissolve opens on its moment ----
  await go(page, `${base}/v/${dis}?t=${dhit}`);
  await expectPlayerNear(page, Number(dhit), `${name}: the hit after the dissolve`);
  await page.screenshot({ path: join(outdir, `viewer-dissolve-${name}.png`) });
  // ---- the source's link follows playback ----
  await go(page, `${base}/v/${remote}`);
  await page.waitForFunction(() => document.getElementById('player').readyState >= 1, null, { timeout: 15000 });
  const src0 = await page.getAttribute('#source-at', 'href');
  if (src0 !== `${remoteUrl}#t=0`) fail(`${name}: the source's link is ${src0}, want ${remoteUrl}#t=0`);
  await page.evaluate(() => { document.getElementById('player').currentTime = 5.3; });
  await expectPlayerNear(page, 5.3, `${name}: seek on the URL video`);
  await page.waitForFunction((u) => document.getElementById('source-at').getAttribute('href') === u &&
    document.getElementById('open-at').getAttribute('href').endsWith('?t=5'), `${remoteUrl}#t=5`, { timeout: 5000 })
    .catch(async () => fail(`${name}: at 5.3 s the source's link is ${await page.getAttribute('#source-at', 'href')}, ` +
      `"Open at this second" ${await page.getAttribute('#open-at', 'href')}`));
  note(`${name}: the source's link follows playback: ${await page.getAttribute('#source-at', 'href')}`);
  b.check();
  await b.close();
}

await run(async () => {
  // VIEWER_ONLY=desktop or phone: that size alone (to look at one by hand)
  const only = process.env.VIEWER_ONLY || '';
  if (only !== 'phone') await size('desktop', { width: 1366, height: 900 });
  if (only !== 'desktop') await size('phone', { width: 390, height: 844, mobile: true });
  console.log('viewer: all good');
});
