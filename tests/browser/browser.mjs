// End to end in a real browser (Debian's Chromium, driven by playwright-core):
//   node tests/browser/browser.mjs BASE_URL VIDEO_ID OUTDIR [SLIDE_WORD [LOOKALIKE_ID]]
// BASE_URL is the vidtheque server (http://127.0.0.1:PORT). Checks that clicking a
// transcript cue seeks the player there, that /v/ID?t=S starts the player at S, that a
// search from the search page leads to /v/ID?t=S with the player at S; saves screenshots
// of the library, video and search pages in OUTDIR. With LOOKALIKE_ID (the video's frames
// are embedded, and video LOOKALIKE_ID shows the same picture as its first frame): clicks
// the first frame's "more like this" link, checks the similar-frames page (each frame
// with its video, second, similarity best first, a thumbnail that loads; the same list as
// GET /api/videos/ID/frames/N/similar; LOOKALIKE_ID first) and follows the lookalike that
// is furthest into its video, checking the player lands at that second (screenshot
// similar.png). Exits 1 with "FAIL: ..." on any
// failure. Chromium only ever talks to 127.0.0.1: no background networking, no updates,
// no QUIC, no sync, a fresh profile, and every request to another host is aborted and
// counted as a failure.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, fail, note, playerState, expectPlayerNear } from './lib.mjs';

const [base, id, outdir, word = 'harbor', lookalike = ''] = process.argv.slice(2);

if (!base || !id || !outdir) {
  console.error('usage: browser.mjs BASE_URL VIDEO_ID OUTDIR [SLIDE_WORD [LOOKALIKE_ID]]');
  process.exit(2);
}
mkdirSync(outdir, { recursive: true });

let b;
try {
  b = await open(base, { width: 1280, height: 900 });
  const { page, origin } = b;

  // ---- the library page ----
  let r = await page.goto(`${base}/`);
  if (!r || r.status() !== 200) fail(`GET / gave ${r && r.status()}`);
  if (!(await page.locator(`a[href="/v/${id}"]`).count())) fail('the library page does not link the video');
  // the load event may come before a busy server has sent the thumbnail: wait for it
  const thumbOk = await page
    .waitForFunction(() => {
      const img = document.querySelector('img');
      return img && img.complete && img.naturalWidth > 0;
    }, null, { timeout: 30000 })
    .then(() => true, () => false);
  if (!thumbOk) fail('the library page thumbnail did not load');
  await page.screenshot({ path: join(outdir, 'library.png'), fullPage: true });
  note('library page ok');

  // ---- the video page: click a transcript cue ----
  r = await page.goto(`${base}/v/${id}`);
  if (!r || r.status() !== 200) fail(`GET /v/${id} gave ${r && r.status()}`);
  await page.waitForFunction(() => {
    const p = document.getElementById('player');
    return (p && p.readyState >= 1) || (p && p.error);
  }, null, { timeout: 15000 }).catch(() => {});
  let s = await playerState(page);
  if (!s || s.err || s.ready < 1) fail(`the player did not load /media/${id}: ${JSON.stringify(s)}`);
  if (!(s.dur > 1)) fail(`the player's duration is ${s.dur}`);
  note(`player loaded, duration ${s.dur.toFixed(2)} s`);
  const cues = page.locator('li.cue a.seek[data-t]');
  const n = await cues.count();
  if (n < 1) fail('the video page has no transcript cue link');
  // the last cue: furthest from the start, so a seek that did nothing is caught
  const cue = cues.nth(n - 1);
  const cueT = parseFloat(await cue.getAttribute('data-t'));
  if (!(cueT > 1)) fail(`the cue time ${cueT} is too close to 0 to prove a seek`);
  const urlBefore = page.url();
  await cue.click();
  await expectPlayerNear(page, cueT, `click on the cue at ${cueT}`);
  if (page.url() !== urlBefore) fail(`the cue click navigated to ${page.url()} instead of seeking`);
  await page.evaluate(() => document.getElementById('player').pause());
  await page.screenshot({ path: join(outdir, 'video.png'), fullPage: true });

  // ---- /v/ID?t=SECONDS ----
  const tq = Math.max(1, Math.floor(s.dur / 2));
  r = await page.goto(`${base}/v/${id}?t=${tq}`);
  if (!r || r.status() !== 200) fail(`GET /v/${id}?t=${tq} gave ${r && r.status()}`);
  await expectPlayerNear(page, tq, `/v/${id}?t=${tq}`);

  // ---- search from the search page, follow the first hit ----
  r = await page.goto(`${base}/search`);
  if (!r || r.status() !== 200) fail(`GET /search gave ${r && r.status()}`);
  await page.fill('form.search input[name="q"]', word);
  await Promise.all([page.waitForURL(/\/search\?q=/), page.press('form.search input[name="q"]', 'Enter')]);
  if (!(await page.locator('li.hit').count())) fail(`searching '${word}' found nothing on ${page.url()}`);
  await page.screenshot({ path: join(outdir, 'search.png'), fullPage: true });
  const first = page.locator('li.hit a.ts').first();
  const href = await first.getAttribute('href');
  const m = /^\/v\/([A-Za-z0-9_-]+)\?t=([0-9]+(?:\.[0-9]+)?)(?:&q=[^&]*)?$/.exec(href || '');
  if (!m || m[1] !== id) fail(`the first hit links '${href}', expected /v/${id}?t=S[&q=...]`);
  const hitT = Number(m[2]);
  await Promise.all([page.waitForURL(/\/v\/[^?]+\?t=/), first.click()]);
  const u = new URL(page.url());
  if (u.origin !== origin || u.pathname !== `/v/${id}` || u.searchParams.get('t') !== m[2]) {
    fail(`following the hit went to ${page.url()}, expected /v/${id}?t=${hitT}`);
  }
  await expectPlayerNear(page, hitT, `search hit '${word}' -> ${u.pathname}${u.search}`);

  // ---- more like this: from the video page to the similar frames, and on to one ----
  if (lookalike) {
    r = await page.goto(`${base}/v/${id}`);
    if (!r || r.status() !== 200) fail(`GET /v/${id} gave ${r && r.status()}`);
    const likeLinks = page.locator('li.frame a.similar');
    const nLike = await likeLinks.count();
    if (nLike < 1) fail(`the video page has no "more like this" link (is frame_embed done?)`);
    const link = likeLinks.first();
    const linkHref = await link.getAttribute('href');
    const lm = /^\/v\/([A-Za-z0-9_-]+)\/frames\/([0-9]+)\/similar$/.exec(linkHref || '');
    if (!lm || lm[1] !== id) fail(`"more like this" links '${linkHref}', expected /v/${id}/frames/N/similar`);
    if ((await link.textContent()).trim() !== 'more like this') fail(`the link reads '${await link.textContent()}'`);
    const frameNo = Number(lm[2]);
    await Promise.all([page.waitForURL(/\/frames\/[0-9]+\/similar$/), link.click()]);
    if (new URL(page.url()).pathname !== `/v/${id}/frames/${frameNo}/similar`) {
      fail(`the "more like this" click went to ${page.url()}`);
    }
    const items = page.locator('ol.similar li.like');
    const nItems = await items.count();
    if (nItems < 1) fail(`the similar-frames page of frame ${frameNo} lists nothing`);
    const shown = [];
    for (let i = 0; i < nItems; i++) {
      const li = items.nth(i);
      const thumb = li.locator('a.thumb');
      const href = await thumb.getAttribute('href');
      const hm = /^\/v\/([A-Za-z0-9_-]+)\?t=([0-9]+(?:\.[0-9]+)?)$/.exec(href || '');
      if (!hm) fail(`lookalike ${i} links '${href}', expected /v/ID?t=S`);
      const titleHref = await li.locator('a.title').getAttribute('href');
      if (titleHref !== href) fail(`lookalike ${i}: the title links '${titleHref}', the thumbnail '${href}'`);
      const title = (await li.locator('a.title').textContent()).trim();
      if (!title) fail(`lookalike ${i} has no video title`);
      const meta = (await li.locator('p.meta').textContent()).replace(/\s+/g, ' ');
      const mm = /^([0-9]+:)?[0-9]{1,2}:[0-9]{2} · frame ([0-9]+) · similarity (-?[0-9.]+) · more like this$/.exec(meta.trim());
      if (!mm) fail(`lookalike ${i}: '${meta.trim()}' is not "M:SS · frame N · similarity S · more like this"`);
      const sim = Number(mm[3]);
      if (!(sim >= -1.0005 && sim <= 1.0005)) fail(`lookalike ${i}: similarity ${sim} is not a cosine`);
      const img = li.locator('img.thumb');
      if (!(await img.count())) fail(`lookalike ${i} has no thumbnail`);
      await img.scrollIntoViewIfNeeded();
      await page.waitForFunction((el) => el.complete, await img.elementHandle(), { timeout: 10000 });
      const w = await img.evaluate((el) => el.naturalWidth);
      if (!(w > 0)) fail(`lookalike ${i}: its thumbnail ${await img.getAttribute('src')} did not load`);
      shown.push({ video_id: hm[1], t: Number(hm[2]), frame: Number(mm[2]), similarity: sim,
                   title, href, src: await img.getAttribute('src'), el: thumb });
    }
    for (let i = 1; i < shown.length; i++) {
      if (shown[i].similarity > shown[i - 1].similarity) fail(`lookalikes not best first: ${shown.map((x) => x.similarity)}`);
    }
    if (shown.some((x) => x.video_id === id && x.frame === frameNo)) fail(`frame ${frameNo} is among its own lookalikes`);
    if (shown[0].video_id !== lookalike) {
      fail(`the first lookalike of frame ${frameNo} is in ${shown[0].video_id}, expected ${lookalike} (its copy)`);
    }
    // the page says what the API says
    const api = await page.request.get(`${base}/api/videos/${id}/frames/${frameNo}/similar?limit=${nItems}`);
    if (api.status() !== 200) fail(`GET /api/videos/${id}/frames/${frameNo}/similar gave ${api.status()}`);
    const res = (await api.json()).results;
    if (!Array.isArray(res) || res.length !== nItems) fail(`the API lists ${res && res.length} lookalikes, the page ${nItems}`);
    res.forEach((a, i) => {
      const p = shown[i];
      if (a.video_id !== p.video_id || a.frame !== p.frame || !(p.t >= a.t - 1e-9 && p.t - a.t < 0.0015) ||
          Math.abs(a.similarity - p.similarity) > 0.0006 || a.thumbnail !== p.src ||
          a.link !== p.href || (a.title || a.video_id) !== p.title) {
        fail(`lookalike ${i}: the page shows ${JSON.stringify({ ...p, el: undefined })}, the API ${JSON.stringify(a)}`);
      }
    });
    note(`frame ${frameNo}: ${nItems} lookalike(s), first ${shown[0].video_id} at ${shown[0].t} s (similarity ${shown[0].similarity})`);
    await page.screenshot({ path: join(outdir, 'similar.png'), fullPage: true });
    // follow the one furthest into its video, so that a player left at 0 is caught
    const far = shown.reduce((a, b) => (b.t > a.t ? b : a));
    if (!(far.t >= 1)) fail(`every lookalike is at 0 s: following one would not prove a seek`);
    await Promise.all([page.waitForURL(/\/v\/[^/?]+\?t=/), far.el.click()]);
    const fu = new URL(page.url());
    if (fu.origin !== origin || fu.pathname !== `/v/${far.video_id}` || fu.searchParams.get('t') !== String(far.t)) {
      fail(`following the lookalike went to ${page.url()}, expected /v/${far.video_id}?t=${far.t}`);
    }
    await expectPlayerNear(page, far.t, `lookalike -> ${fu.pathname}${fu.search}`);
  }

  b.check();
  console.log('browser: all good');
} catch (e) {
  if (!process.exitCode) {
    console.error(`FAIL: ${e && e.message ? e.message : e}`);
    process.exitCode = 1;
  }
} finally {
  if (b) await b.close();
}
