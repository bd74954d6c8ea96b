// The browser's share of bench/page_weight_bench.sh:
//   node bench/page_weight.mjs URL LOADS
// Loads URL LOADS times in Debian's headless Chromium at 1366x900 (tests/browser/lib.mjs's
// open()), the cache off, each until its load event and the network idle, and prints
// "LOAD_MS BYTES": the median of the navigation's load event (from the start of navigation)
// and of the bytes received by then, the network idle (the navigation and every resource,
// as Resource Timing's transferSize counts them, the player's /media/ left out: it is the
// player's read-ahead, not the page).
import { open, go, run, fail } from '../tests/browser/lib.mjs';

const url = process.argv[2];
const loads = parseInt(process.argv[3] || '5', 10);
if (!url || !(loads > 0)) fail('usage: node bench/page_weight.mjs URL LOADS');

await run(async () => {
  const b = await open(new URL(url).origin + '/', { width: 1366, height: 900 });
  const cdp = await b.context.newCDPSession(b.page);
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  const ms = [], bytes = [];
  for (let i = 0; i < loads; i++) {
    await go(b.page, url);
    await b.page.waitForLoadState('load');
    // the bytes: once the network is idle (the lazy images in view all fetched, whether
    // or not they made it before the load event), so that they do not vary with timing
    await b.page.waitForLoadState('networkidle');
    const r = await b.page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      let n = nav.transferSize;
      for (const e of performance.getEntriesByType('resource')) {
        if (!new URL(e.name).pathname.startsWith('/media/')) n += e.transferSize;
      }
      return { ms: nav.loadEventStart, bytes: n };
    });
    ms.push(r.ms);
    bytes.push(r.bytes);
  }
  b.check();
  await b.close();
  const med = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
  console.log(`${med(ms).toFixed(0)} ${med(bytes)}`);
});
