// bench/video_page_bench.sh's browser half: node video_page_bytes.mjs BASE ID
import { open, go, run, fail } from '../tests/browser/lib.mjs';

const [base, id] = process.argv.slice(2);

// Bytes of every response from the page's load (at 1366x900) until the network is idle.
async function load(page, url) {
  const got = [];
  const onDone = async (r) => {
    const s = await r.sizes().catch(() => null);
    if (s) got.push({ url: r.url(), n: s.responseBodySize + s.responseHeadersSize });
  };
  page.on('requestfinished', onDone);
  await go(page, url);
  await page.waitForLoadState('networkidle');
  await page.waitForTimeout(300); // let the last sizes() promises settle
  page.off('requestfinished', onDone);
  return got;
}

await run(async () => {
  const b = await open(base);
  const first = await load(b.page, `${base}/v/${id}`);
  const frames = await b.page.evaluate(() => document.querySelectorAll('img.frame').length);
  // the baseline: every image the page references (frames, and the strip's keyframes), as
  // a page that loads them all at once does
  const srcs = await b.page.evaluate(() => [...new Set([
    ...[...document.querySelectorAll('img')].map((i) => i.getAttribute('src')),
    ...[...document.querySelectorAll('[data-src]')].map((a) => a.getAttribute('data-src'))])]
    .filter(Boolean));
  let imgBytes = 0;
  for (const s of srcs) {
    const r = await b.page.request.get(new URL(s, base).href);
    imgBytes += (await r.body()).length;
  }
  const sum = (xs) => xs.reduce((a, x) => a + x.n, 0);
  const lazy = sum(first);
  const nonImg = sum(first.filter((x) => !/\/frames\/\d+\.jpg/.test(x.url)));
  const eager = nonImg + imgBytes;
  const loadedFrames = first.filter((x) => /\/frames\/\d+\.jpg/.test(x.url)).length;
  const pct = (100 * lazy) / eager;
  console.log(`  page with ${frames} frames; ${srcs.length} distinct images referenced`);
  console.log(`  first paint, before scrolling: ${(lazy / 1e6).toFixed(3)} MB in ${first.length} responses (${loadedFrames} frame images)`);
  console.log(`  baseline, every image loaded:  ${(eager / 1e6).toFixed(3)} MB`);
  console.log(`  ratio: ${pct.toFixed(1)} % of the baseline; ${lazy <= 1e6 && pct <= 10 ? 'ok' : 'MISS'} (target <= 1 MB and <= 10 %)`);
  b.check();
  await b.close();
  if (!frames) fail('the page shows no frames');
});
