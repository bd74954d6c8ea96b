// Chapters and the storyboard on the video page, in a real browser, at desktop and phone
// sizes (tests/e2e/t1311-chapters-browser.sh runs it):
//   node chapters.mjs BASE ID OUTDIR DOC.json QUERY
// DOC.json is `vidtheque export ID` (its chapters, cues and frames are the truth); the page
// is opened with ?q=QUERY so that it also carries the query's hit marks. Checks: the seek
// bar has one segment per chapter (title, start); the transcript has each chapter's heading
// right before the first cue said in it; hovering (desktop) or touching (phone) the bar
// over a chapter shows its title and the small frame showing that moment (the one whose
// OCR lines hold the chapter's title), and a click or tap seeks there. Saves screenshots
// of the page with the chapters, the preview and the hit marks: OUTDIR/chapters-wide.png
// and OUTDIR/chapters-phone.png.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { open, go, fail, note, run, expectPlayerNear, axe, noHorizontalOverflow } from './lib.mjs';

const [base, id, outdir, docFile, query] = process.argv.slice(2);
if (!query) fail('usage: node chapters.mjs BASE ID OUTDIR DOC.json QUERY');
const doc = JSON.parse(readFileSync(docFile, 'utf8'));
const chapters = doc.chapters;
if (chapters.length < 2) fail(`the fixture wants at least 2 chapters, the export has ${chapters.length}`);

// The frame the export says shows moment t (its shot's kept frame; a duplicate's original).
function frameText(frame) {
  const f = doc.frames.find((x) => x.index === frame);
  return f ? (f.ocr || []).map((l) => l.text).join(' ') : '';
}

async function ready(page) {
  await page.waitForFunction(() => {
    const p = document.getElementById('player');
    return p && p.readyState >= 1;
  }, null, { timeout: 15000 }).catch(() => fail('the player did not load'));
}

// The seek bar's segments as the page has them.
async function checkBar(page) {
  const segs = await page.$$eval('#seekbar a.chap', (as) => as.map((a) => ({
    title: a.getAttribute('data-title'), t: parseFloat(a.getAttribute('data-t')),
    label: a.getAttribute('aria-label') })));
  if (segs.length !== chapters.length) fail(`the seek bar has ${segs.length} chapters, the export ${chapters.length}`);
  chapters.forEach((c, i) => {
    if (segs[i].title !== c.title) fail(`seek bar chapter ${i}: '${segs[i].title}', want '${c.title}'`);
    if (Math.abs(segs[i].t - c.start_s) > 0.001) fail(`seek bar chapter ${i} starts at ${segs[i].t}, want ${c.start_s}`);
    if (!segs[i].label.includes(c.made === 'slides' ? 'from the slides' : 'from the source')) {
      fail(`seek bar chapter ${i} does not say how it was made: ${segs[i].label}`);
    }
  });
  note(`seek bar: ${segs.map((s) => `${s.t} ${s.title}`).join(' | ')}`);
}

// Each chapter in which a cue starts has its heading right before the first such cue.
async function checkHeadings(page) {
  const items = await page.$$eval('ol.cues > li', (lis) => lis.map((li) => li.classList.contains('chaphead')
    ? { head: li.querySelector('h3').textContent, t: parseFloat(li.querySelector('a').getAttribute('data-t')) }
    : { cue: parseFloat(li.getAttribute('data-t')) }));
  let want = 0;
  for (const c of chapters) {
    const first = doc.cues.find((q) => q.start_s >= c.start_s && q.start_s < c.end_s);
    if (!first) continue;
    want++;
    const k = items.findIndex((it) => it.cue !== undefined && Math.abs(it.cue - first.start_s) < 0.001);
    if (k < 1 || !items[k - 1].head || !items[k - 1].head.endsWith(c.title)) {
      fail(`no heading '${c.title}' before the cue at ${first.start_s}: ${JSON.stringify(items.slice(Math.max(0, k - 2), k + 1))}`);
    }
  }
  if (!want) fail('no chapter has a cue: the fixture wants speech in its chapters');
  note(`transcript: ${items.filter((it) => it.head).map((it) => it.head).join(' | ')}`);
}

// The pointer (hover or touch) over chapter i's middle: its title and its frame in the
// preview. Returns the moment previewed.
async function previewAt(page, i, how) {
  const c = chapters[i];
  const box = await page.locator('#seekbar svg').boundingBox();
  const t = (c.start_s + Math.min(c.end_s, doc.duration_s)) / 2;
  const x = box.x + box.width * t / doc.duration_s, y = box.y + box.height / 2;
  if (how === 'touch') await page.touchscreen.tap(x, y);
  else await page.mouse.move(x, y, { steps: 4 });
  await page.waitForFunction((title) => {
    const p = document.querySelector('#seekbar .sbpop'), img = p && p.querySelector('img');
    return p && !p.hidden && p.querySelector('.sbc').textContent === title && img && !img.hidden &&
      img.complete && img.naturalWidth > 0;
  }, c.title, { timeout: 15000 }).catch(async () => {
    const s = await page.$eval('#seekbar .sbpop', (p) => p.outerHTML);
    fail(`${how} over chapter '${c.title}': no preview with its title and a frame: ${s}`);
  });
  const p = await page.$eval('#seekbar .sbpop', (p) => ({
    t: parseFloat(p.getAttribute('data-t')), src: p.querySelector('img').getAttribute('src'),
    visible: p.getBoundingClientRect().height > 0 }));
  if (!p.visible) fail(`${how}: the preview is not visible`);
  const m = /\/frames\/([0-9]+)\.jpg\?size=small$/.exec(p.src);
  if (!m) fail(`the preview's image is not a small frame: ${p.src}`);
  const words = c.title.toLowerCase().split(/\s+/);
  const text = frameText(parseInt(m[1], 10)).toLowerCase();
  if (!words.every((w) => text.includes(w))) {
    fail(`${how} at ${t.toFixed(2)} s previews frame ${m[1]} ('${text}'), not the slide '${c.title}'`);
  }
  if (Math.abs(p.t - t) > 0.25) fail(`${how}: previewed ${p.t}, the pointer is at ${t}`);
  note(`${how} over '${c.title}' at ${p.t.toFixed(2)} s: frame ${m[1]}`);
  return p.t;
}

await run(async () => {
  // ---- desktop ----
  let b = await open(base, { width: 1366, height: 900 });
  let page = b.page;
  await go(page, `${base}/v/${id}?q=${encodeURIComponent(query)}`);
  await ready(page);
  await checkBar(page);
  await checkHeadings(page);
  const hits = await page.locator('svg.hitbar a.hit').count();
  if (hits < 1) fail(`no hit marks for '${query}'`);
  await page.evaluate(() => document.getElementById('player').pause());
  await page.locator('#seekbar').scrollIntoViewIfNeeded();
  await previewAt(page, 0, 'hover');
  const t = await previewAt(page, chapters.length - 1, 'hover');
  await page.screenshot({ path: join(outdir, 'chapters-wide.png'), fullPage: false });
  await page.mouse.down();
  await page.mouse.up();
  await expectPlayerNear(page, t, `click on the seek bar at ${t.toFixed(2)}`);
  await page.evaluate(() => document.getElementById('player').pause());
  const now = await page.textContent('#chapnow');
  if (!now.includes(chapters[chapters.length - 1].title)) fail(`the chapter played is not named: '${now}'`);
  await page.mouse.move(5, 5);
  await page.waitForFunction(() => document.querySelector('#seekbar .sbpop').hidden, null, { timeout: 5000 })
    .catch(() => fail('the preview stays after the pointer left'));
  await axe(page, 'the video page with chapters');
  b.check();
  await b.close();

  // ---- phone ----
  b = await open(base, { width: 390, height: 844, mobile: true });
  page = b.page;
  await go(page, `${base}/v/${id}?q=${encodeURIComponent(query)}`);
  await ready(page);
  await checkBar(page);
  await checkHeadings(page);
  await noHorizontalOverflow(page, 'the video page on a phone');
  await page.locator('#seekbar').scrollIntoViewIfNeeded();
  const tp = await previewAt(page, 1, 'touch');
  await expectPlayerNear(page, tp, `tap on the seek bar at ${tp.toFixed(2)}`);
  await page.evaluate(() => document.getElementById('player').pause());
  await page.screenshot({ path: join(outdir, 'chapters-phone.png'), fullPage: false });
  b.check();
  await b.close();
  note('chapters ok at desktop and phone sizes');
});
