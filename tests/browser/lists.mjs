// The library and search pages in a real browser (tests/e2e/t1310-lists.sh makes the
// library and runs this):
//   node tests/browser/lists.mjs BASE_URL LIBRARY_DB VIDEO_A VIDEO_B OUTDIR
// VIDEO_B is marked as being indexed (processing, ocr running) when this starts.
// Checks: the library grid pages, its text filter and sort; a card being indexed follows
// its progress without a reload (library.js polling) and turns "Ready" when the database
// says so; the search page's pages, followed by their Next links, are the API's hits in
// the API's order with the true total (each hit's data-rank), one heading per video on a
// page (desktop and phone widths); the source filter; a typo's suggestion; every
// hit's picture is its own frame and loads; a hit's link opens the player at or after the
// hit's start; no console errors; axe-core with no serious or critical violation (light and
// dark themes);
// screenshots at 1366x900 and 390x844 without horizontal overflow at 390 px.
import { execFileSync } from 'node:child_process';
import { open, go, fail, note, run, axe, screenshots, expectPlayerNear } from './lib.mjs';

const [base, db, idA, idB, outdir] = process.argv.slice(2);
if (!base || !db || !idA || !idB || !outdir) {
  console.error('usage: lists.mjs BASE_URL LIBRARY_DB|POSTGRESQL_URL VIDEO_A VIDEO_B OUTDIR');
  process.exit(2);
}

// the catalog is SQLite's library.db, or a PostgreSQL URL when the suite runs there
function sql(s) {
  const [cmd, args] = /^postgres(ql)?:\/\//.test(db)
    ? ['psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', db, '-c', s]]
    : ['sqlite3', [db, `PRAGMA busy_timeout=5000; ${s}`]];
  execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
}

const cardTitles = (page) => page.$$eval('li.card h2.title a', (as) => as.map((a) => a.textContent));
const hitsOf = (page) => page.$$eval('li.hit', (ls) => ls.map((l) => ({
  video: l.dataset.video, rank: parseInt(l.dataset.rank, 10),
  start: parseFloat(l.dataset.start), frame: parseInt(l.dataset.frame, 10),
  src: (l.querySelector('img.thumb') || {}).src || '',
  loaded: !!(l.querySelector('img.thumb') && l.querySelector('img.thumb').complete &&
             l.querySelector('img.thumb').naturalWidth > 0),
})));

async function library(b) {
  const { page } = b;
  await go(page, `${base}/?per=3`);
  let t = await cardTitles(page);
  if (t.length !== 3) fail(`library ?per=3: ${t.length} cards`);
  await Promise.all([page.waitForNavigation(), page.click('nav.pager a[rel="next"]')]);
  const t2 = await cardTitles(page);
  if (t2.length !== 3 || t2.some((x) => t.includes(x))) fail(`library page 2: ${t2} (page 1: ${t})`);
  if (!/page=2/.test(page.url())) fail(`library next: ${page.url()}`);
  note(`library pages: ${t.join(', ')} | ${t2.join(', ')}`);

  await go(page, `${base}/`);
  await page.fill('form.filter input[name="q"]', 'tiny');
  await page.selectOption('form.filter select[name="sort"]', 'newest');
  await Promise.all([page.waitForNavigation(), page.click('form.filter button')]);
  t = await cardTitles(page);
  if (t.join(',') !== 'Tiny clip 5,Tiny clip 4,Tiny clip 3,Tiny clip 2,Tiny clip 1') {
    fail(`library filter 'tiny', newest first: ${t}`);
  }
  note('library: text filter and sort');

  // progress: the card of the video being indexed, then the database says it is done
  await go(page, `${base}/`);
  const card = `li.card[data-id="${idB}"]`;
  if (!(await page.$(`${card}[data-state="processing"] progress`))) fail('no progress bar on the card being indexed');
  await axe(page, 'library');
  await page.emulateMedia({ colorScheme: 'dark' });
  await axe(page, 'library (dark theme)');
  await page.emulateMedia({ colorScheme: 'light' });
  await screenshots(page, outdir, 'lists-library');
  sql(`UPDATE stages SET state='done' WHERE video_id='${idB}' AND state IN ('running','queued');
       UPDATE videos SET index_state='ready' WHERE id='${idB}';`);
  await page.waitForSelector(`${card}[data-state="ready"]`, { timeout: 15000 });
  if (await page.$(`${card} progress`)) fail('the finished card still has its progress bar');
  const word = await page.textContent(`${card} [data-role="state"]`);
  if (word !== 'Ready') fail(`the finished card says '${word}'`);
  note('library: the card being indexed turned Ready without a reload');
  b.check();
}

// One heading per video on a search page, shown above its moments, at desktop and phone
// widths: the videos in the order of their best hit, each video's hits in rank order.
async function groupedOnce(page, what) {
  for (const width of [1366, 390]) {
    await page.setViewportSize({ width, height: width > 500 ? 900 : 844 });
    const groups = await page.$$eval('section.group', (ss) => ss.map((s) => {
      const h = s.querySelector('h2').getBoundingClientRect();
      const ls = [...s.querySelectorAll('li.hit')];
      return {
        video: (s.querySelector('h2 a').getAttribute('href') || '').replace(/^\/v\/([^?]*).*$/, '$1'),
        shown: h.width > 0 && h.height > 0 && h.right <= window.innerWidth + 1,
        above: ls.length > 0 && h.bottom <= ls[0].getBoundingClientRect().top + 1,
        videos: [...new Set(ls.map((l) => l.dataset.video))],
        ranks: ls.map((l) => parseInt(l.dataset.rank, 10)),
      };
    }));
    const videos = groups.map((g) => g.video);
    if (new Set(videos).size !== videos.length) fail(`${what} at ${width} px: a video's heading repeats: ${videos}`);
    for (const g of groups) {
      if (!g.shown || !g.above) fail(`${what} at ${width} px: the heading of ${g.video} is not shown above its hits`);
      if (g.videos.length !== 1 || g.videos[0] !== g.video) fail(`${what} at ${width} px: ${g.video}'s section holds ${g.videos}`);
      if (g.ranks.some((r, i) => i && r <= g.ranks[i - 1])) fail(`${what} at ${width} px: ${g.video}'s hits out of order: ${g.ranks}`);
    }
    const firsts = groups.map((g) => g.ranks[0]);
    if (firsts.some((r, i) => i && r <= firsts[i - 1])) fail(`${what} at ${width} px: videos not in the order of their best hit: ${firsts}`);
  }
  await page.setViewportSize({ width: 1366, height: 900 });
}

async function search(b) {
  const { page } = b;
  const api = await (await fetch(`${base}/api/search?q=banana&limit=1000`)).json();
  await go(page, `${base}/search?q=banana&per=10`);
  const total = await page.getAttribute('#count', 'data-total');
  if (Number(total) !== api.hits.length) fail(`search total ${total}, the API has ${api.hits.length}`);
  const seen = [];
  for (let p = 1; ; p++) {
    const hits = await hitsOf(page);
    for (const h of hits) {
      if (h.frame >= 0 && !new RegExp(`/frames/${h.frame}\\.jpg(\\?size=small)?$`).test(h.src)) fail(`hit ${h.video} ${h.start}: picture ${h.src} is not frame ${h.frame}`);
      if (h.frame >= 0 && !h.loaded) {
        await page.waitForFunction((s) => [...document.images].some((i) => i.src === s && i.complete && i.naturalWidth > 0), h.src);
      }
    }
    seen.push(...hits);
    await groupedOnce(page, `search page ${p}`);
    const next = await page.$('nav.pager a[rel="next"]');
    if (!next) break;
    await Promise.all([page.waitForNavigation(), next.click()]);
    if (p > 20) fail('the search pages do not end');
  }
  // a page groups its hits by video; their ranks give the API's order back
  seen.sort((x, y) => x.rank - y.rank);
  if (seen.some((h, i) => h.rank !== i + 1)) fail(`the pages' ranks are not 1..${seen.length}`);
  const same = seen.length === api.hits.length && seen.every((h, i) =>
    h.video === api.hits[i].video_id && h.start - api.hits[i].start_s >= -0.0005 && h.start - api.hits[i].start_s < 0.0015);
  if (!same) fail(`the pages (${seen.length} hits) are not the API's ${api.hits.length} hits in order`);
  note(`search: ${seen.length} hits over the pages, in the API's order, every picture its own frame`);

  await page.selectOption('form.refine select[name="source"]', 'title');
  await Promise.all([page.waitForNavigation(), page.click('form.refine button')]);
  const titles = await page.$$eval('li.hit .badge', (bs) => bs.map((x) => x.className));
  if (!titles.length || titles.some((c) => /src-/.test(c) && !/src-title/.test(c))) fail(`source filter: ${titles}`);

  await go(page, `${base}/search?q=bana`);
  await Promise.all([page.waitForNavigation(), page.click('div.suggest a')]);
  if (!/q=bana(\*|%2A)/.test(page.url()) || !(await page.$('li.hit'))) fail(`suggestion for 'bana': ${page.url()}`);
  note('search: source filter; "bana" suggests "bana*", which finds hits');

  await go(page, `${base}/search?q=harbor`);
  await groupedOnce(page, 'search for harbor');
  await axe(page, 'search');
  await page.emulateMedia({ colorScheme: 'dark' });
  await axe(page, 'search (dark theme)');
  await page.emulateMedia({ colorScheme: 'light' });
  await screenshots(page, outdir, 'lists-search');
  const hit = (await (await fetch(`${base}/api/search?q=harbor&video=${idA}`)).json()).hits[0];
  await Promise.all([page.waitForNavigation(),
    page.click(`li.hit[data-video="${idA}"] a.ts`)]);
  await expectPlayerNear(page, hit.start_s, `hit at ${hit.start_s} s`, hit.start_s + 0.5);
  b.check();
}

await run(async () => {
  const b = await open(base);
  try {
    await library(b);
    await search(b);
  } finally {
    await b.close();
  }
  if (!process.exitCode) console.log('lists: all good');
});
