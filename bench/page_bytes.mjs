// Bytes of a page's first paint, for bench/page_bytes_bench.sh:
//   node bench/page_bytes.mjs http://127.0.0.1:PORT/v/ID [http://127.0.0.1:PORT2]
// Loads the page in Debian's headless Chromium at 1366x900 (tests/browser/lib.mjs's open()),
// without scrolling, waits until the network is idle, and sums every response the page
// caused: body and headers as Chromium counted them (a request still running, such as the
// media the player is buffering, counts what it received so far). The baseline is the page as
// it was before small frame images: its HTML plus every frame it references at full size
// (each <img>'s /api/videos/ID/frames/N.jpg without ?size=small), fetched from the same server
// (at the second origin when given: the server itself when the page went through a proxy).
// Prints one JSON line: {first_paint, requests, by_kind, baseline, html, frames, full_frames}.
import { open, go, run, fail } from '../tests/browser/lib.mjs';

const url = process.argv[2];
if (!url) fail('usage: node bench/page_bytes.mjs URL');

function kind(u) {
  const p = new URL(u).pathname;
  if (p.startsWith('/api/videos/') && p.includes('/frames/')) return 'frames';
  if (p.startsWith('/media/')) return 'media';
  if (p.startsWith('/static/') || p === '/favicon.ico') return 'static';
  return 'html';
}

await run(async () => {
  const b = await open(new URL(url).origin + '/', { width: 1366, height: 900 });
  const seen = [];
  b.page.on('requestfinished', (r) => seen.push(r));
  b.page.on('requestfailed', (r) => seen.push(r));
  await go(b.page, url);
  await b.page.waitForLoadState('networkidle');
  const by = {};
  let total = 0;
  for (const r of seen) {
    let n = 0;
    try {
      const s = await r.sizes();
      n = s.responseBodySize + s.responseHeadersSize;
    } catch (e) {
      n = 0; /* a request aborted before any response */
    }
    const k = kind(r.url());
    by[k] = (by[k] || 0) + n;
    total += n;
  }
  // the baseline: the same HTML and, for every frame the page shows, the full frame
  const srcs = await b.page.evaluate(() => [...document.images].map((i) => i.getAttribute('src')));
  const full = [...new Set(srcs.filter((s) => s && /^\/api\/videos\/[^/]+\/frames\/\d+\.jpg/.test(s))
                                 .map((s) => s.replace(/\?.*$/, '')))];
  const origin = process.argv[3] || new URL(url).origin;
  const html = (await (await fetch(origin + new URL(url).pathname)).arrayBuffer()).byteLength;
  let frames = 0;
  for (const s of full) {
    const r = await fetch(origin + s);
    if (r.status !== 200) fail(`GET ${s} gave ${r.status}`);
    frames += (await r.arrayBuffer()).byteLength;
  }
  b.check();
  await b.close();
  console.log(JSON.stringify({ first_paint: total, requests: seen.length, by_kind: by,
                               baseline: html + frames, html, frames, full_frames: full.length }));
});
