// One notion of a hit (issue 25 item 3; tests/e2e/t1340-search-hits.sh runs it):
//   node hits.mjs BASE ID OUTDIR
// For a hybrid and a meaning search, at desktop (1366x900) and phone (390x844, touch) sizes:
// /search is opened with the mode, the first hit of video ID is followed by its link, and the
// video page's list of moments, seek-bar marks and strip marks must be /api/search's hits of
// that video (same mode, limit=1000), in the API's order; n then walks them in that order
// (the player at each hit's start) and p walks back. Every wait is for a condition, with a
// deadline; none is a fixed sleep that decides.
import { open, go, fail, note, run, expectPlayerNear, screenshots } from './lib.mjs';

const [base, id, outdir] = process.argv.slice(2);
if (!outdir) fail('usage: node hits.mjs BASE ID OUTDIR');

const searches = [
  { q: 'automobile', mode: 'hybrid' },
  { q: 'vehicle car traffic', mode: 'meaning' },
];
const sizes = [
  { name: 'desktop', width: 1366, height: 900, mobile: false },
  { name: 'phone', width: 390, height: 844, mobile: true },
];

// the API's hits of the search in video id, in its order
async function apiHits(s) {
  const u = `${base}/api/search?q=${encodeURIComponent(s.q)}&mode=${s.mode}&limit=1000`;
  const r = await fetch(u);
  if (r.status !== 200) fail(`GET ${u} gave ${r.status}`);
  const d = await r.json();
  if (d.mode !== s.mode) fail(`${u} ran as ${d.mode}`);
  return d.hits.filter((h) => h.video_id === id).map((h) => h.start_s);
}

const same = (a, b) => a.length === b.length && a.every((t, i) => Math.abs(t - b[i]) < 0.002);

await run(async () => {
  for (const size of sizes) {
    const b = await open(base, size);
    const { page } = b;
    for (const s of searches) {
      const what = `${s.mode} '${s.q}' (${size.name})`;
      const want = await apiHits(s);
      if (want.length < 2) fail(`${what}: the API has ${want.length} hits in ${id}, 2 or more are needed`);
      note(`${what}: the API's hits in ${id}: ${want.join(', ')}`);

      // from the search page, the first hit of this video
      await go(page, `${base}/search?q=${encodeURIComponent(s.q)}&mode=${s.mode}`);
      const link = page.locator(`ol.hits a[href^="/v/${id}?t="]`).first();
      const href = await link.getAttribute('href');
      if (!href.includes(`mode=${s.mode}`)) fail(`${what}: the hit link drops the mode: ${href}`);
      await link.click();
      await page.waitForURL((u) => u.pathname === `/v/${id}`);
      const url = new URL(page.url());
      if (url.searchParams.get('mode') !== s.mode || url.searchParams.get('q') !== s.q)
        fail(`${what}: the video page's URL does not keep the search: ${page.url()}`);
      const t0 = parseFloat(url.searchParams.get('t'));
      if (Math.abs(t0 - want[0]) > 0.002) fail(`${what}: the link opens at ${t0}, the best hit is at ${want[0]}`);
      await expectPlayerNear(page, t0, `${what}: opened at the best hit`);

      // the list, the seek bar and the strip: the API's hits in its order
      const onPage = await page.evaluate(() => {
        const ts = (sel) => [...document.querySelectorAll(sel)].map((a) => parseFloat(a.getAttribute('data-t')));
        return { list: ts('.hitlist a.hit'), bar: ts('svg.hitbar a.hit'), strip: ts('svg.shots a.hit') };
      });
      for (const k of ['list', 'bar', 'strip']) {
        if (!same(onPage[k], want))
          fail(`${what}: the ${k}'s hits ${JSON.stringify(onPage[k])} are not the API's ${JSON.stringify(want)}`);
      }
      note(`${what}: list, seek bar and strip hold the API's ${want.length} hits in its order`);
      // the words marked in the transcript: those the hits matched, nothing else
      const marks = await page.evaluate(() => [...document.querySelectorAll('#transcript mark')]
        .map((m) => m.textContent.toLowerCase()));
      if (s.mode === 'hybrid' && (!marks.length || !marks.every((m) => m === s.q)))
        fail(`${what}: the transcript marks ${JSON.stringify(marks)}, not '${s.q}'`);
      const cur = await page.evaluate(() => [...document.querySelectorAll('.hitlist a.hit')]
        .findIndex((a) => a.getAttribute('aria-current') === 'true'));
      if (cur !== 0) fail(`${what}: the hit walked to should be the first one, not ${cur}`);

      // n walks the hits in the API's order, p walks back
      await page.evaluate(() => document.getElementById('player').pause());
      await page.locator('h1').click();
      for (let i = 1; i < want.length; i++) {
        await page.keyboard.press('n');
        await expectPlayerNear(page, want[i], `${what}: n to hit ${i + 1}`, want[i] + 0.3);
        await page.evaluate(() => document.getElementById('player').pause());
      }
      await page.keyboard.press('n'); // past the last: stays
      await expectPlayerNear(page, want[want.length - 1], `${what}: n after the last`, want[want.length - 1] + 0.3);
      await page.evaluate(() => document.getElementById('player').pause());
      for (let i = want.length - 2; i >= 0; i--) {
        await page.keyboard.press('p');
        await expectPlayerNear(page, want[i], `${what}: p to hit ${i + 1}`, want[i] + 0.3);
        await page.evaluate(() => document.getElementById('player').pause());
      }
      if (size.mobile && s.mode === 'meaning') await screenshots(page, outdir, 'hits-meaning');
      b.check();
    }
    await b.close();
  }
  console.log('hits: ok');
});
