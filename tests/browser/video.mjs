// The video page in a real browser (tests/e2e/t1300-video-page.sh runs it):
//   node video.mjs BASE ID OUTDIR HITS.json SAID.json WORD WAITING_ID
// HITS.json: `search --json "harbor video:ID"` (two slides); SAID.json: the hits of WORD, a
// word of the last cue; WAITING_ID: a video waiting to be fetched, which `vidtheque resume`
// (run from here, VIDTHEQUE and VT_LIBRARY in the environment) makes fail while its page is
// open. Every wait is for a condition, with a deadline; none is a fixed sleep that decides.
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { open, go, fail, note, run, playerState, expectPlayerNear, axe, screenshots, TOL } from './lib.mjs';

const [base, id, outdir, hitsFile, saidFile, word, waiting] = process.argv.slice(2);
if (!waiting) fail('usage: node video.mjs BASE ID OUTDIR HITS.json SAID.json WORD WAITING_ID');
const hits = JSON.parse(readFileSync(hitsFile, 'utf8')).hits; // the search's order: n and p walk it
const said = JSON.parse(readFileSync(saidFile, 'utf8')).hits[0];

// Wait until fn() (run in the page) is truthy; fail with what() after 15 s.
async function until(page, fn, arg, what) {
  try {
    return await page.waitForFunction(fn, arg, { timeout: 15000, polling: 50 });
  } catch (e) {
    fail(`${what}: ${e.message.split('\n')[0]}`);
  }
}

// Is the element matching sel inside the transcript's scroll box, as the reader sees it?
function inBox(sel) {
  const box = document.querySelector('.cuebox'), el = document.querySelector(sel);
  if (!box || !el) return false;
  const b = box.getBoundingClientRect(), r = el.getBoundingClientRect();
  return r.top >= b.top - 1 && r.bottom <= b.bottom + 1;
}

async function pause(page) {
  await page.evaluate(() => document.getElementById('player').pause());
}

async function setTime(page, t) {
  await pause(page);
  await page.evaluate((t) => { document.getElementById('player').currentTime = t; }, t);
  await expectPlayerNear(page, t, `set to ${t}`);
}

await run(async () => {
  const b = await open(base);
  const { page } = b;

  note('a cue click seeks, and the page does not move');
  await go(page, `${base}/v/${id}`);
  await expectPlayerNear(page, 0, 'opened');
  const layout = await page.evaluate(() => {
    const v = document.getElementById('player').getBoundingClientRect();
    const p = document.querySelector('#transcript .cuebox').getBoundingClientRect();
    return { side: p.left >= v.right - 1 && p.top < v.bottom, vr: v.right, pl: p.left };
  });
  if (!layout.side) fail(`at 1366 px the transcript should be beside the player: ${JSON.stringify(layout)}`);
  await page.evaluate(() => window.scrollTo(0, 120));
  const y0 = await page.evaluate(() => window.scrollY);
  const last = await page.evaluate(() => {
    const c = [...document.querySelectorAll('li.cue')].pop();
    return { t: parseFloat(c.getAttribute('data-t')), end: parseFloat(c.getAttribute('data-end')) };
  });
  await page.locator('li.cue').last().locator('.tx').click();
  await expectPlayerNear(page, last.t, 'after the cue click', last.end);
  const y1 = await page.evaluate(() => window.scrollY);
  if (y1 !== y0) fail(`the cue click moved the page from ${y0} to ${y1}`);
  await pause(page);

  note('the transcript follows playback inside its own box');
  // a box one cue tall, scrolled to its top: the last cue is out of view until it is said
  await page.evaluate(() => {
    const box = document.querySelector('.cuebox');
    box.style.flex = 'none';
    box.style.height = '2.2em';
    box.scrollTop = 0;
  });
  if (await page.evaluate(inBox, 'li.cue:last-child')) fail('the last cue should start out of the box');
  const y2 = await page.evaluate(() => window.scrollY);
  await setTime(page, Math.max(0, last.t - 0.4));
  await page.evaluate(() => document.getElementById('player').play());
  await until(page, () => {
    const c = document.querySelector('li.cue:last-child');
    const p = document.getElementById('player');
    return !p.paused && p.currentTime > parseFloat(c.getAttribute('data-t')) && c.classList.contains('current');
  }, null, 'the last cue highlighted while it is said');
  await until(page, inBox, 'li.cue.current', 'the current cue scrolled into the box');
  if ((await page.evaluate(() => document.querySelectorAll('li.cue.current').length)) !== 1)
    fail('more than one current cue');
  if ((await page.evaluate(() => window.scrollY)) !== y2) fail('following playback moved the page');
  const ph = await page.evaluate(() => parseFloat(document.querySelector('svg.shots rect.ph').getAttribute('x')));
  if (!(ph > 0)) fail(`the strip's playhead did not move: x=${ph}`);
  await pause(page);

  note('the filter box filters this transcript');
  await page.fill('#cue-filter', word);
  const shown = await page.evaluate(() => [...document.querySelectorAll('li.cue')].filter((c) => !c.hidden)
    .map((c) => c.textContent.toLowerCase()));
  if (!shown.length || !shown.every((s) => s.includes(word))) fail(`filter '${word}' shows ${JSON.stringify(shown)}`);
  await page.fill('#cue-filter', '');

  note('keys: k and space play and pause, j/l 10 s, arrows 5 s, not while typing');
  await setTime(page, 6);
  await page.locator('h1').click();
  await page.keyboard.press('k');
  await until(page, () => !document.getElementById('player').paused, null, 'k plays');
  await page.keyboard.press('k');
  await until(page, () => document.getElementById('player').paused, null, 'k pauses');
  await page.keyboard.press(' ');
  await until(page, () => !document.getElementById('player').paused, null, 'space plays');
  await page.keyboard.press(' ');
  await until(page, () => document.getElementById('player').paused, null, 'space pauses');
  let t = (await playerState(page)).t;
  await page.keyboard.press('j');
  await expectPlayerNear(page, Math.max(0, t - 10), 'j');
  await page.keyboard.press('l');
  await expectPlayerNear(page, Math.min(10, (await playerState(page)).dur), 'l');
  await page.keyboard.press('ArrowLeft');
  await expectPlayerNear(page, 5, 'ArrowLeft');
  await page.keyboard.press('ArrowRight');
  await expectPlayerNear(page, 10, 'ArrowRight');
  await page.focus('#cue-filter');
  await page.keyboard.type('jl');
  await expectPlayerNear(page, 10, 'typing j and l in the filter does not seek');
  await page.fill('#cue-filter', '');

  note('captions: the track loads');
  await page.evaluate(() => { document.getElementById('player').textTracks[0].mode = 'showing'; });
  await until(page, () => {
    const tr = document.getElementById('player').textTracks[0];
    return tr && tr.cues && tr.cues.length > 0;
  }, null, 'the captions track has cues');
  const ncues = await page.evaluate(() => document.getElementById('player').textTracks[0].cues.length);
  const nli = await page.evaluate(() => document.querySelectorAll('li.cue').length);
  if (ncues !== nli) fail(`the captions track has ${ncues} cues, the transcript ${nli}`);

  note('the strip: a shot shows its keyframe and time; it stays right after a resize');
  await page.hover('svg.shots a.shot:nth-of-type(2)');
  await until(page, () => {
    const p = document.querySelector('.kfpop');
    return p && !p.hidden && /\/frames\/\d+\.jpg/.test(p.querySelector('img').getAttribute('src') || '') &&
      /^Shot 1, /.test(p.querySelector('span').textContent);
  }, null, 'the hovered shot shows its keyframe');
  const shot2 = await page.evaluate(() => parseFloat(document.querySelector('svg.shots a.shot:nth-of-type(3)').getAttribute('data-t')));
  const y3 = await page.evaluate(() => window.scrollY);
  await page.click('svg.shots a.shot:nth-of-type(3)');
  await expectPlayerNear(page, shot2, 'a click on the third shot', shot2 + 1);
  if ((await page.evaluate(() => window.scrollY)) !== y3) fail('a click on the strip moved the page');
  await pause(page);
  if (await page.isHidden('#keys')) fail('the keys are not said');
  for (const width of [1366, 390]) {
    await page.setViewportSize({ width, height: 844 });
    const fit = await page.evaluate(() => {
      const s = document.querySelector('svg.shots').getBoundingClientRect();
      const rs = [...document.querySelectorAll('svg.shots a.shot rect')].map((r) => r.getBoundingClientRect());
      const gaps = rs.slice(1).map((r, i) => Math.abs(r.left - rs[i].right));
      return { left: rs[0].left - s.left, right: s.right - rs[rs.length - 1].right, gap: Math.max(...gaps), w: s.width };
    });
    // the last shot ends where the video does (within a second of it: 1/12 of the strip)
    if (fit.left > 1 || fit.right < -1 || fit.right > fit.w / 12 || fit.gap > 1)
      fail(`at ${width} px the shots do not tile the strip: ${JSON.stringify(fit)}`);
  }
  await page.setViewportSize({ width: 1366, height: 900 });

  note('arriving from a hit: the moment, its words marked, n and p');
  const h0 = hits[0], h1 = hits[1];
  await go(page, `${base}/v/${id}?t=${h0.start_s}&q=harbor`);
  await expectPlayerNear(page, h0.start_s, 'arrived at the first harbor hit', h0.end_s);
  const marks = await page.evaluate(() => [...document.querySelectorAll('#frames mark')].map((m) => m.textContent.toLowerCase()));
  if (!marks.length || !marks.every((m) => m === 'harbor')) fail(`marks in the frames: ${JSON.stringify(marks)}`);
  const onBars = await page.evaluate(() => [document.querySelectorAll('svg.hitbar a.hit').length,
    document.querySelectorAll('svg.shots a.hit').length]);
  if (onBars[0] !== hits.length || onBars[1] !== hits.length)
    fail(`${hits.length} hits, marks on the seek bar and strip: ${onBars}`);
  await page.locator('h1').click();
  await page.keyboard.press('n');
  await expectPlayerNear(page, h1.start_s, 'n: the next hit', h1.end_s);
  await page.keyboard.press('p');
  await expectPlayerNear(page, h0.start_s, 'p: the previous hit', h0.end_s);

  note(`arriving from a hit of a spoken word ('${word}'): marked in its cue, in view in the box`);
  await page.setViewportSize({ width: 390, height: 844 });
  await go(page, `${base}/v/${id}?t=${said.start_s}&q=${encodeURIComponent(word)}`);
  await expectPlayerNear(page, said.start_s, `arrived at '${word}'`, said.end_s);
  const cm = await page.evaluate(() => [...document.querySelectorAll('li.cue mark')].map((m) => m.textContent.toLowerCase()));
  if (!cm.includes(word)) fail(`'${word}' is not marked in the transcript: ${JSON.stringify(cm)}`);
  await until(page, inBox, 'li.cue.current', "the hit's cue is current and inside the box");

  note('accessibility and screenshots');
  await page.setViewportSize({ width: 1366, height: 900 });
  await go(page, `${base}/v/${id}?t=${h0.start_s}&q=harbor`);
  await expectPlayerNear(page, h0.start_s, 'reloaded at the hit', h0.end_s);
  await axe(page, 'the video page');
  await page.setViewportSize({ width: 390, height: 844 });
  await axe(page, 'the video page at 390 px');
  await screenshots(page, outdir, 'video-page');

  note('bytes before scrolling: frames below the fold wait');
  const bytes = [];
  const onDone = async (r) => {
    const s = await r.sizes().catch(() => null);
    if (s) bytes.push({ url: r.url(), n: s.responseBodySize + s.responseHeadersSize });
  };
  page.on('requestfinished', onDone);
  await go(page, `${base}/v/${id}`);
  await page.waitForLoadState('networkidle');
  page.off('requestfinished', onDone);
  const total = bytes.reduce((a, x) => a + x.n, 0);
  const frames = bytes.filter((x) => /\/frames\/\d+\.jpg/.test(x.url));
  const below = await page.evaluate(() => [...document.querySelectorAll('img.frame')]
    .filter((i) => i.getBoundingClientRect().top > 3 * innerHeight).length);
  note(`first load at 1366x900: ${total} bytes in ${bytes.length} responses, ${frames.length} frame images; ${below} frames lie 3 screens down`);
  if (total > 1e6) fail(`the page loaded ${total} bytes before scrolling`);
  b.check();

  note('the keys hint: shown at a desk, its arrows as wide as its letters; not on a phone');
  await go(page, `${base}/v/${id}`);
  const hint = await page.evaluate(() => {
    const k = document.getElementById('keys');
    const glyph = (el) => { const r = document.createRange(); r.selectNodeContents(el); return r.getBoundingClientRect().width; };
    const kbds = [...k.querySelectorAll('kbd')];
    return { shown: !!k.offsetParent, px: parseFloat(getComputedStyle(kbds[0]).fontSize),
             keys: kbds.map((e) => ({ t: e.textContent, box: e.getBoundingClientRect().width, glyph: glyph(e) })) };
  });
  if (!hint.shown) fail('the keys hint is hidden at 1366 px with a mouse');
  const letter = hint.keys.find((x) => x.t === 'k');
  for (const x of hint.keys.filter((x) => x.t === '←' || x.t === '→')) {
    if (x.glyph < 0.45 * hint.px || x.glyph < 0.9 * letter.glyph || x.box < letter.box - 0.5)
      fail(`the hint's ${x.t} is ${x.glyph.toFixed(1)} px wide in a ${x.box.toFixed(1)} px key (k: ${letter.glyph.toFixed(1)} in ${letter.box.toFixed(1)}; font ${hint.px} px)`);
  }
  if (hint.keys.filter((x) => x.t === '←' || x.t === '→').length !== 2) fail(`the hint's keys: ${JSON.stringify(hint.keys)}`);
  {
    const ph = await open(base, { width: 390, height: 844, mobile: true });
    await go(ph.page, `${base}/v/${id}`);
    const shown = await ph.page.evaluate(() => !!document.getElementById('keys').offsetParent);
    // and a wide touch screen (a tablet across), where no keyboard is assumed either
    await ph.page.setViewportSize({ width: 1024, height: 768 });
    await go(ph.page, `${base}/v/${id}`);
    const tablet = await ph.page.evaluate(() => !!document.getElementById('keys').offsetParent);
    ph.check();
    await ph.close();
    if (shown) fail('the keys hint shows on a phone');
    if (tablet) fail('the keys hint shows on a touch screen without a mouse');
  }

  note('a video being indexed: its state polled and shown in place, the page not reloaded');
  await go(page, `${base}/v/${waiting}`);
  if ((await page.textContent('#state-words')) !== 'Waiting to be indexed') fail('the waiting video should say so');
  await page.evaluate(() => { window.vtNotReloaded = 1; });
  try {
    // it exits 1: the video failed, which is the point
    execFileSync(process.env.VIDTHEQUE, ['-q', '-L', process.env.VT_LIBRARY, 'resume'], { stdio: 'ignore' });
  } catch (e) {
    if (e.status !== 1) fail(`vidtheque resume: ${e.message}`);
  }
  await until(page, () => document.getElementById('state-words').textContent === 'Failed' &&
    /failed/.test(document.querySelector('#progress .what').textContent), null, 'the failure shown in place');
  if (!(await page.evaluate(() => window.vtNotReloaded === 1))) fail('the page reloaded itself');

  b.check();
  await b.close();
  note('video page: all good');
});
