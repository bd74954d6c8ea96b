// Managing the library in a real browser (tests/e2e/t1330-manage.sh runs it):
//   node tests/browser/manage.mjs BASE RO_BASE TOKEN_FILE CLIP VIDEO_ID OUTDIR
// BASE is a writable server, RO_BASE a read-only one of the same library, CLIP a media file
// on the server to add, VIDEO_ID a video already there, FAILED_ID one whose fetch failed. Signed out, no form writes and a
// POST without the session and its CSRF token is refused; a wrong token is refused; the
// right one signs in (an HttpOnly, SameSite=Strict cookie no script can read); then add
// the clip, redo a stage (its attempts grow), remove it (a dialog that can be dismissed,
// then accepted), sign out; the read-only server has no sign-in and refuses writes.
// axe-core on the login, queue and confirmation pages; no console errors but the 403/404/405
// the test provokes; screenshots in OUTDIR. Also (issue 25 item 7): a refused add shows the
// form again with the reason and what was typed; the finished add is named by its title on
// /queue, with its times; a video queued for workers (QUEUED_CLIP, `vidtheque add --queue`:
// VIDTHEQUE and VT_LIBRARY in the environment) is on /queue with its progress and gets a card
// on a library page open meanwhile; the manage panel sits under the player.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { open, go, fail, note, run, axe, screenshots } from './lib.mjs';

const [base, roBase, tokenFile, clip, id1, outdir, failedId, queuedClip] = process.argv.slice(2);
if (!queuedClip || !process.env.VIDTHEQUE || !process.env.VT_LIBRARY) {
  console.error('usage: VIDTHEQUE=BIN VT_LIBRARY=DIR manage.mjs BASE RO_BASE TOKEN_FILE CLIP VIDEO_ID OUTDIR FAILED_ID QUEUED_CLIP');
  process.exit(2);
}
const token = readFileSync(tokenFile, 'utf8').split('\n')[0].trim();
const provoked = /status of 40[345]/;

// A stage's attempts and state, from the public JSON API.
async function stage(page, id, name) {
  return page.evaluate(async ([id, name]) => {
    const r = await fetch(`/api/videos/${id}`);
    if (r.status !== 200) return { status: r.status };
    const d = await r.json();
    const s = d.stages.find((x) => x.name === name);
    return { status: 200, attempts: s.attempts, state: s.state, index: d.index_state };
  }, [id, name]);
}

// Reload the queue page until job no is done or failed (the worker runs it meanwhile).
async function waitJob(page, no) {
  for (let i = 0; i < 600; i++) {
    await go(page, `${base}/queue`);
    const cls = await page.getAttribute(`#job-${no}`, 'class');
    if (cls && /job-(done|failed)/.test(cls)) return cls.includes('job-done') ? 'done' : 'failed';
    await page.waitForTimeout(100);
  }
  fail(`job ${no} did not finish`);
}

// A form POST made by a script of the page (fetch), as a forged request would be.
async function post(page, path, body) {
  return page.evaluate(async ([path, body]) => {
    const r = await fetch(path, { method: 'POST', body, redirect: 'manual',
                                  headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    return r.status;
  }, [path, body]);
}

// A refused add: the form again, the reason on it, what was typed kept (desktop and phone).
async function refusedAdd(page, b) {
  for (const [w, h] of [[1366, 900], [390, 844]]) {
    for (const [typed, status, says] of [['/no/such/dir/talk.mp4', 404, /No such file/],
                                         ['relative/talk.mp4', 400, /absolute path/],
                                         ['ftp://127.0.0.1/talk.mp4', 400, /http and https/]]) {
      note(`a refused add at ${w} px: '${typed}' (${status})`);
      await page.setViewportSize({ width: w, height: h });
      await go(page, `${base}/`);
      await page.fill('#add-source', typed);
      const [resp] = await Promise.all([page.waitForNavigation(), page.click('form[action="/manage/add"] button')]);
      if (resp.status() !== status) fail(`'${typed}' gave ${resp.status()}, want ${status}`);
      const kept = await page.inputValue('#add-source');
      if (kept !== typed) fail(`the form lost what was typed: '${kept}', not '${typed}'`);
      if (!(await page.isVisible('#add-error'))) fail(`'${typed}': no reason on the form`);
      const why = await page.textContent('#add-error');
      if (!says.test(why)) fail(`'${typed}': the form says '${why}'`);
      if ((await page.getAttribute('#add-source', 'aria-invalid')) !== 'true') fail('the field is not marked invalid');
      b.check(/status of 40[0345]/);
    }
    await page.locator('section.manage.add').screenshot({ path: join(outdir, `manage-add-refused-${w}.png`) });
  }
  await axe(page, 'refused add');
  await page.setViewportSize({ width: 1366, height: 900 });
}

// The whole queue: a video queued for workers (`vidtheque add --queue`, not this server's
// thread) is on /queue with its title and progress, and a library page open meanwhile
// gets its card.
async function libraryQueue(b) {
  const lib = await b.context.newPage();
  await go(lib, `${base}/`);
  const before = await lib.locator('ul.cards li.card').count();
  note(`a video queued by the CLI while the library page is open (${before} cards)`);
  const qid = execFileSync(process.env.VIDTHEQUE, ['-q', '-L', process.env.VT_LIBRARY, 'add', '--queue', queuedClip],
                           { encoding: 'utf8' }).trim();
  try {
    await lib.waitForSelector(`ul.cards li.card[data-id="${qid}"]`, { timeout: 15000 });
  } catch (e) {
    fail(`no card for ${qid} appeared on the open library page`);
  }
  const card = await lib.textContent(`ul.cards li.card[data-id="${qid}"]`);
  if (!/four/.test(card) || !/Waiting/.test(card)) fail(`the new card says '${card}'`);
  if ((await lib.locator('ul.cards li.card').count()) !== before + 1) fail('the card was added more than once');
  await lib.close();

  const page = b.page;
  await go(page, `${base}/queue`);
  const row = page.locator(`ul.lqueue li.qvideo[data-id="${qid}"]`);
  if (!(await row.count())) fail(`the queue page does not list ${qid}, queued for workers`);
  const text = await row.textContent();
  if (!/four/.test(text) || !/0 of \d+ steps done/.test(text) || !/added .* ago/.test(text))
    fail(`the queue page says '${text}'`);
  if (!(await row.locator('progress').count())) fail('no progress bar in the queue');
  await screenshots(page, outdir, 'queue-library');
  execFileSync(process.env.VIDTHEQUE, ['-q', '-L', process.env.VT_LIBRARY, 'rm', qid], { stdio: 'ignore' });
}

// The manage panel under the player and the transcript (desktop and phone), not above them.
async function panelBelowPlayer(page, id) {
  for (const [w, h] of [[1366, 900], [390, 844]]) {
    await page.setViewportSize({ width: w, height: h });
    await go(page, `${base}/v/${id}`);
    const r = await page.evaluate(() => {
      const p = document.querySelector('.watch').getBoundingClientRect();
      const m = document.querySelector('section.manage.actions').getBoundingClientRect();
      const v = document.getElementById('player').getBoundingClientRect();
      return { watchBottom: p.bottom, manageTop: m.top, playerTop: v.top + window.scrollY };
    });
    if (r.manageTop < r.watchBottom) fail(`at ${w} px the manage panel is above the player: ${JSON.stringify(r)}`);
    note(`at ${w} px the manage panel starts ${Math.round(r.manageTop - r.watchBottom)} px under the player's column`);
  }
  await page.setViewportSize({ width: 1366, height: 900 });
}

async function writable() {
  const b = await open(base);
  const { page } = b;
  try {
    note('signed out: a Sign in link, no form that writes, writes refused');
    await go(page, `${base}/`);
    if (!(await page.isVisible('a.signin'))) fail('no Sign in link in the header');
    if (await page.$('input[name="csrf"]')) fail('a form that writes is shown signed out');
    let st = await post(page, `/v/${id1}/redo`, 'stage=ocr');
    if (st !== 403) fail(`a redo without a session gave ${st}, want 403`);
    b.check(provoked);

    note('the sign-in page; a wrong token is refused');
    await Promise.all([page.waitForURL(/\/login$/), page.click('a.signin')]);
    await axe(page, 'login');
    await page.emulateMedia({ colorScheme: 'dark' });
    await axe(page, 'login (dark)');
    await page.emulateMedia({ colorScheme: 'light' });
    await screenshots(page, outdir, 'login');
    await page.fill('#token', 'wrong-token-0123456789');
    let [resp] = await Promise.all([page.waitForNavigation(), page.click('form[action="/login"] button')]);
    if (resp.status() !== 403) fail(`a wrong token gave ${resp.status()}, want 403`);
    if (!(await page.isVisible('p.error'))) fail('a wrong token says nothing');
    if ((await b.context.cookies()).some((c) => c.name === 'vt_session')) fail('a wrong token set a cookie');
    b.check(provoked);

    note('the right token signs in: an HttpOnly, SameSite=Strict cookie');
    await page.fill('#token', token);
    await Promise.all([page.waitForURL(`${base}/`), page.click('form[action="/login"] button')]);
    if (page.url().includes(token)) fail('the token is in the URL');
    const ck = (await b.context.cookies()).find((c) => c.name === 'vt_session');
    if (!ck || !ck.httpOnly || ck.sameSite !== 'Strict') fail(`session cookie: ${JSON.stringify(ck)}`);
    if (ck.value.includes(token)) fail('the cookie holds the token');
    if ((await page.evaluate(() => document.cookie)).includes('vt_session')) fail('a script can read the session cookie');
    if (!(await page.isVisible('#add-source'))) fail('signed in, no add form');
    await page.locator('section.manage.add').screenshot({ path: join(outdir, 'manage-add.png') });
    st = await post(page, `/v/${id1}/redo`, 'stage=ocr');
    if (st !== 403) fail(`a redo without the CSRF token gave ${st}, want 403`);
    b.check(provoked);

    await refusedAdd(page, b);

    note('add the clip: the queue page, then indexed');
    await page.fill('#add-source', clip);
    await Promise.all([page.waitForURL(/\/queue\?job=\d+/), page.click('form[action="/manage/add"] button')]);
    const no = new URL(page.url()).searchParams.get('job');
    if ((await waitJob(page, no)) !== 'done') fail(`the add job failed: ${await page.textContent(`#job-${no}`)}`);
    const jobTitle = (await page.textContent(`#job-${no} a.title`)).trim();
    const jobId = (await page.getAttribute(`#job-${no} a.title`, 'href')).slice(3);
    const apiTitle = await page.evaluate(async (id) => (await (await fetch(`/api/videos/${id}`)).json()).title, jobId);
    if (!apiTitle || jobTitle !== apiTitle || jobTitle === jobId)
      fail(`the finished add is named '${jobTitle}', not its title '${apiTitle}'`);
    if (!/queued .* ago, ran /.test(await page.textContent(`#job-${no} .times`)))
      fail(`the job's times: '${await page.textContent(`#job-${no} .times`)}'`);
    await libraryQueue(b);
    await axe(page, 'queue');
    await page.emulateMedia({ colorScheme: 'dark' });
    await axe(page, 'queue (dark)');
    await page.emulateMedia({ colorScheme: 'light' });
    await screenshots(page, outdir, 'queue');
    const href = await page.getAttribute(`#job-${no} a[href^="/v/"]`, 'href');
    if (!href) fail('the finished add links no video');
    const id = href.slice(3);

    await panelBelowPlayer(page, id);

    note(`redo keyframe of ${id}: its attempts grow`);
    await go(page, `${base}/v/${id}`);
    await page.locator('section.manage.actions').screenshot({ path: join(outdir, 'manage-video.png') });
    const before = await stage(page, id, 'keyframe');
    await page.selectOption('#redo-stage', 'keyframe');
    await Promise.all([page.waitForNavigation(), page.click('form[action$="/redo"] button')]);
    if (!page.url().startsWith(`${base}/v/${id}`)) fail(`redo went to ${page.url()}`);
    let after = null;
    for (let i = 0; i < 600; i++) {
      after = await stage(page, id, 'keyframe');
      if (after.attempts === before.attempts + 1 && after.state === 'done' && after.index === 'ready') break;
      await page.waitForTimeout(100);
    }
    if (after.attempts !== before.attempts + 1 || after.state !== 'done')
      fail(`redo: keyframe ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);

    note('remove: a dismissed dialog changes nothing, an accepted one removes');
    await go(page, `${base}/v/${id}`);
    page.once('dialog', (d) => d.dismiss());
    await page.click('form.remove button'); // the dialog is answered before click() returns
    if (!page.url().startsWith(`${base}/v/${id}`)) fail(`a dismissed remove went to ${page.url()}`);
    if ((await stage(page, id, 'fetch')).status !== 200) fail('a dismissed remove removed');
    page.once('dialog', (d) => {
      if (!d.message().includes('Remove')) fail(`dialog says '${d.message()}'`);
      d.accept();
    });
    await Promise.all([page.waitForURL(/\/queue\?job=\d+/), page.click('form.remove button')]);
    const rno = new URL(page.url()).searchParams.get('job');
    if ((await waitJob(page, rno)) !== 'done') fail('the remove job failed');
    if ((await stage(page, id, 'fetch')).status !== 404) fail('the video is still there');

    note('a failure shows its reason; Retry runs the stage again');
    await go(page, `${base}/v/${failedId}`);
    const why = await page.textContent('ul.failures');
    if (!/fetch/.test(why) || !/site down for the test/.test(why)) fail(`failures say '${why}'`);
    await page.locator('section.manage.actions').screenshot({ path: join(outdir, 'manage-failed.png') });
    const f0 = await stage(page, failedId, 'fetch');
    await Promise.all([page.waitForURL(`${base}/v/${failedId}`), page.click('form[action$="/retry"] button')]);
    let f1 = null;
    for (let i = 0; i < 600; i++) {
      f1 = await stage(page, failedId, 'fetch');
      if (f1.attempts > f0.attempts && f1.state !== 'running') break;
      await page.waitForTimeout(100);
    }
    if (!(f1.attempts > f0.attempts)) fail(`retry: fetch ${JSON.stringify(f0)} -> ${JSON.stringify(f1)}`);

    note('the confirmation page (what a browser without JS gets)');
    await go(page, `${base}/v/${id1}/remove`);
    if (!(await page.$('input[name="confirm"][value="yes"]'))) fail('no confirmation form');
    await axe(page, 'remove confirmation');

    note('sign out');
    await go(page, `${base}/`);
    await Promise.all([page.waitForURL(`${base}/`), page.click('form.signout button')]);
    if (!(await page.isVisible('a.signin'))) fail('signed out, no Sign in link');
    if (await page.$('input[name="csrf"]')) fail('signed out, the forms are still there');
    b.check(provoked);
  } finally {
    await b.close();
  }
}

async function readOnly() {
  const b = await open(roBase);
  const { page } = b;
  try {
    note('read-only: no sign-in, no forms, writes refused');
    await go(page, `${roBase}/`);
    if (await page.$('a.signin, input[name="csrf"], form[method="post"]')) fail('read-only page offers a write');
    await go(page, `${roBase}/login`, 404);
    await go(page, `${roBase}/v/${id1}`);
    if (await page.$('section.manage')) fail('read-only video page has manage controls');
    const st = await post(page, `/v/${id1}/remove`, 'confirm=yes');
    if (st !== 405) fail(`a read-only remove gave ${st}, want 405`);
    b.check(provoked);
  } finally {
    await b.close();
  }
}

await run(async () => {
  await writable();
  await readOnly();
  note('all good');
});
