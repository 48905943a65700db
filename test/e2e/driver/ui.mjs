// Phase A: drives the workbench like a user and checks what the DOM shows.
// Every wait is on the DOM (with a timeout); the only pauses are short settle times
// before screenshots and between mouse moves, never a condition for a check.
import fs from 'node:fs';
import path from 'node:path';
import { env, launchBrowser, logger, recordConsole, workbenchUrl } from './browser.mjs';

const FILE = 'train_mlp.py';
const HOVER_TITLE = 'Estimated peak GPU memory';
const SIZE = /\d+(\.\d+)?\s(GiB|MiB)/;
const STATUS = /\d+(\.\d+)?\s(GiB|MiB) \/ A100 40GB/;
const COMMAND = 'GPU Estimator: Estimate GPU memory';
const REPORT_TITLE = 'GPU estimate';
// The CodeLens above `model = nn.Sequential(`: `~1.2 GiB on A100 40GB (...) | Horus 2.0 GiB | ...`.
const CODELENS = /~\d+(\.\d+)?\s(GiB|MiB) on A100 40GB \(.+\) \| Horus \d+(\.\d+)?\s(GiB|MiB)/;
// The report's GPU chart shows every profile.
const GPU_COUNT = JSON.parse(fs.readFileSync(new URL('../../../src/core/gpus/gpuProfiles.json', import.meta.url), 'utf8')).profiles.length;

const outDir = env('E2E_OUT_DIR');
const log = logger('ui');
const checks = [];
function check(name, ok, detail = '') {
  checks.push({ name, ok, detail: String(detail) });
  log(`${ok ? 'PASS' : 'FAIL'} ${name} :: ${String(detail).replace(/\s+/g, ' ').slice(0, 200)}`);
}
// Monaco and the status bar may render spaces as U+00A0.
const clean = (s) => (s ?? '').replace(/\u00a0/g, ' ');
const untilTrue = (promise) => promise.then(() => true, () => false);

const { context, page, blocked } = await launchBrowser();
const closeConsole = recordConsole(page);
const screenshot = (name, locator) =>
  (locator ?? page).screenshot({ path: path.join(outDir, name) }).catch((e) => log(`screenshot ${name} failed: ${e.message}`));
const statusText = async () => clean(await page.locator('.part.statusbar').innerText().catch(() => ''));

async function openWithQuickOpen(name) {
  for (let attempt = 0; attempt < 3; attempt++) {
    await page.locator('.monaco-workbench').click({ position: { x: 700, y: 450 } }).catch(() => {});
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 15000 });
    await input.fill(name);
    await page.waitForSelector('.quick-input-list .monaco-list-row', { timeout: 15000 }).catch(() => {});
    await page.keyboard.press('Enter');
    const opened = await untilTrue(page.waitForFunction(
      () => document.querySelector('.editor-instance .view-lines')?.textContent.includes('nn.Sequential'),
      null, { timeout: 15000 }));
    if (opened) return true;
  }
  return false;
}

/** Screen box of `word` at the start of the first editor line matching `lineRe` (a DOM Range, so tokenisation does not matter). */
function findWord(word, lineRe) {
  return page.evaluate(([w, src]) => {
    const re = new RegExp(src);
    for (const line of document.querySelectorAll('.editor-instance .view-lines .view-line')) {
      if (!re.test(line.textContent.replace(/\u00a0/g, ' '))) continue;
      const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const at = n.textContent.indexOf(w);
        if (at < 0) continue;
        const range = document.createRange();
        range.setStart(n, at);
        range.setEnd(n, at + w.length);
        const b = range.getBoundingClientRect();
        return { x: b.x, y: b.y, w: b.width, h: b.height };
      }
    }
    return null;
  }, [word, lineRe.source]);
}

async function hoverText(word, lineRe, expected) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const box = await findWord(word, lineRe);
    if (!box) throw new Error(`\`${word}\` not found on a line matching ${lineRe} in the editor DOM`);
    // Leave, then come back: each arrival starts a new hover request.
    await page.mouse.move(box.x - 60, box.y + 160);
    await page.waitForTimeout(150);
    await page.mouse.move(box.x + box.w / 2, box.y + box.h / 2, { steps: 5 });
    const text = await page.waitForFunction((e) => {
      const hit = [...document.querySelectorAll('.monaco-hover')].find((h) => h.textContent.includes(e));
      return hit ? hit.textContent : null;
    }, expected, { timeout: 8000 }).then((h) => h.jsonValue(), () => '');
    if (text) return clean(text);
  }
  const seen = await page.evaluate(() => [...document.querySelectorAll('.monaco-hover')].map((h) => h.textContent).filter(Boolean));
  return `no hover with "${expected}"; hovers seen: ${JSON.stringify(seen)}`;
}

async function runFromPalette(title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 15000 });
  await input.fill(`>${title}`);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  await row.waitFor({ state: 'visible', timeout: 15000 });
  await row.click();
}

const tabLabels = () => page.evaluate(() => [...document.querySelectorAll('.tabs-container .tab')].map((t) =>
  (t.querySelector('.label-name')?.textContent || t.getAttribute('aria-label') || t.textContent || '').trim()));

/** Text of the webview's content frame, once it shows a size (the report renders asynchronously). */
async function webviewText(timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let text = '';
  while (Date.now() < deadline) {
    const frames = page.frames().filter((f) => f.url().includes('/contrib/webview/browser/pre/'));
    const texts = await Promise.all(frames.map((f) => f.evaluate(() => document.body?.innerText ?? '').catch(() => '')));
    text = clean(texts.sort((a, b) => b.length - a.length)[0] ?? '').trim();
    if (SIZE.test(text)) break;
    await page.waitForTimeout(250);
  }
  return text;
}

// The report's charts, each a uPlot canvas in a role="img" container whose aria-label sums it up.
const REPORT_CHARTS = ['estimators', 'breakdown', 'curve', 'gpus'];

/** The report's charts (canvases, role, label, drawn size) and its GPU comparison table, once drawn. */
async function webviewCharts(timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last = null;
  const drawn = (f) => f && REPORT_CHARTS.every((k) => f.charts[k].canvases > 0 && f.charts[k].height > 0) && f.gpuComparison;
  while (Date.now() < deadline) {
    const frames = page.frames().filter((f) => f.url().includes('/contrib/webview/browser/pre/'));
    const found = await Promise.all(frames.map((f) => f.evaluate((kinds) => ({
      charts: Object.fromEntries(kinds.map((k) => {
        const box = document.getElementById(`model-0-${k}`);
        const canvas = box?.querySelector('canvas');
        return [k, { canvases: box?.querySelectorAll('canvas').length ?? 0, role: box?.getAttribute('role') ?? null, label: box?.getAttribute('aria-label') ?? '', height: canvas?.getBoundingClientRect().height ?? 0 }];
      })),
      gpuComparison: [...document.querySelectorAll('caption')].some((c) => /GPU comparison/.test(c.textContent ?? '')),
      estimateRangeColumn: [...document.querySelectorAll('table.curve th')].some((th) => / range$/.test(th.textContent ?? '')),
    }), REPORT_CHARTS).catch(() => null)));
    last = found.find((f) => f && Object.values(f.charts).some((c) => c.canvases)) ?? last;
    if (drawn(last)) return last;
    await page.waitForTimeout(250);
  }
  return last;
}

/** The images of the extension page's README (a webview), once it shows its title and every image has settled. */
async function readmeImages(timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last = [];
  while (Date.now() < deadline) {
    const frames = page.frames().filter((f) => f.url().includes('/contrib/webview/browser/pre/'));
    const found = await Promise.all(frames.map((f) => f.evaluate(() => document.querySelector('h1')?.textContent === 'GPU Estimator for PyTorch'
      ? [...document.images].map((i) => ({ src: i.getAttribute('src').slice(0, 32), complete: i.complete, loaded: i.complete && i.naturalWidth > 0 }))
      : null).catch(() => null)));
    last = found.find(Boolean) ?? last;
    if (last.length > 0 && last.every((i) => i.complete)) return last;
    await page.waitForTimeout(250);
  }
  return last;
}

let crashed = false;
try {
  const ext = process.env.E2E_EXT_DIR;
  await page.goto(workbenchUrl(ext ? { extensionDevelopmentPath: ext } : {}));
  await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: 90000 });
  log(`workbench loaded (${ext ? `development extension ${ext}` : 'installed .vsix'})`);

  const opened = await openWithQuickOpen(FILE);
  check(`${FILE} opens with Quick Open`, opened, await page.locator('.tabs-container .tab.active').first().innerText().catch(() => ''));
  if (!opened) throw new Error(`${FILE} did not open`);

  // The status item appears once the extension (onLanguage:python) has analysed the file.
  const statusOk = await untilTrue(page.waitForFunction((src) =>
    new RegExp(src).test((document.querySelector('.part.statusbar')?.innerText ?? '').replace(/\u00a0/g, ' ')),
  STATUS.source, { timeout: 60000 }));
  check(`status bar matches ${STATUS}`, statusOk, await statusText());
  await screenshot('statusbar.png', page.locator('.part.statusbar'));

  // CodeLens: rendered as a view zone above the model's line.
  const lens = await page.waitForFunction((src) => {
    const re = new RegExp(src);
    const hit = [...document.querySelectorAll('.editor-instance .codelens-decoration')].map((e) => e.textContent.replace(/\u00a0/g, ' ')).find((t) => re.test(t));
    return hit ?? null;
  }, CODELENS.source, { timeout: 30000 }).then((h) => h.jsonValue(), () => '');
  // The view zone is laid out after its text appears: wait for it to sit above the line.
  const lensAboveModel = Boolean(lens) && await untilTrue(page.waitForFunction(() => {
    const lensBox = document.querySelector('.editor-instance .codelens-decoration')?.getBoundingClientRect();
    const line = [...document.querySelectorAll('.editor-instance .view-lines .view-line')].find((l) => /^model\s*=\s*nn\.Sequential\(/.test(l.textContent.replace(/\u00a0/g, ' ')));
    const lineBox = line?.getBoundingClientRect();
    return Boolean(lensBox && lineBox && lensBox.bottom <= lineBox.top + 1 && lineBox.top - lensBox.bottom < lineBox.height);
  }, undefined, { timeout: 10000 }));
  check(`CodeLens above \`model = nn.Sequential(\` matches ${CODELENS}`, Boolean(lens) && lensAboveModel, lens || JSON.stringify(await page.evaluate(() => [...document.querySelectorAll('.codelens-decoration')].map((e) => e.textContent))));
  await screenshot('codelens.png', page.locator('.part.editor'));

  const hover = await hoverText('model', /^model\s*=\s*nn\.Sequential\(/, HOVER_TITLE);
  check(`hover on \`model\` (line 6) shows "${HOVER_TITLE}" and a size`, hover.includes(HOVER_TITLE) && SIZE.test(hover), hover);
  await page.waitForTimeout(300);  // let the hover finish fading in for the picture
  await screenshot('hover.png');

  await page.keyboard.press('Escape');
  await page.mouse.move(900, 700);
  await runFromPalette(COMMAND);
  // Run by the user, the command asks which GPU, the configured one (A100 40GB) first: take it.
  const gpuPick = await untilTrue(page.waitForFunction(() => {
    const widget = document.querySelector('.quick-input-widget');
    return Boolean(widget && widget.offsetParent !== null && /which GPU/.test(widget.querySelector('.quick-input-title')?.textContent ?? ''));
  }, null, { timeout: 15000 }));
  const firstGpu = gpuPick ? clean(await page.locator('.quick-input-list .monaco-list-row').first().innerText().catch(() => '')) : '(no GPU pick shown)';
  check('the command asks which GPU, the configured A100 40GB first', gpuPick && /^A100 40GB/.test(firstGpu), firstGpu);
  if (gpuPick) await page.keyboard.press('Enter');
  const reportOk = await untilTrue(page.waitForFunction((title) =>
    [...document.querySelectorAll('.tabs-container .tab')].some((t) =>
      [t.querySelector('.label-name')?.textContent, t.getAttribute('aria-label')].some((l) => l?.trim().startsWith(title))),
  REPORT_TITLE, { timeout: 30000 }));
  check(`"${COMMAND}" opens a tab titled "${REPORT_TITLE}…"`, reportOk, JSON.stringify(await tabLabels()));
  if (reportOk) log(`report webview text: ${(await webviewText(15000)).replace(/\s+/g, ' ').slice(0, 300) || '(none)'}`);
  const charts = reportOk ? await webviewCharts(15000) : null;
  const drawnCharts = REPORT_CHARTS.filter((k) => charts?.charts[k].canvases > 0 && charts.charts[k].height > 0);
  check(`the report draws ${REPORT_CHARTS.length} charts (${REPORT_CHARTS.join(', ')}: uPlot canvases) and keeps the GPU comparison table`,
    drawnCharts.length === REPORT_CHARTS.length && Boolean(charts?.gpuComparison), JSON.stringify({ drawn: drawnCharts, gpuComparison: charts?.gpuComparison }));
  check('every chart is a role="img" with an aria-label summing it up',
    Boolean(charts) && REPORT_CHARTS.every((k) => charts.charts[k].role === 'img' && charts.charts[k].label.length > 20),
    JSON.stringify(charts && Object.fromEntries(REPORT_CHARTS.map((k) => [k, `${charts.charts[k].role}: ${charts.charts[k].label.slice(0, 70)}`]))));
  check(`the curve shades the estimate's range (its label says so, its table lists the range), the GPU chart names all ${GPU_COUNT} GPUs`,
    Boolean(charts) && /its range shaded/.test(charts.charts.curve.label) && charts.estimateRangeColumn && charts.charts.gpus.label.startsWith(`GPU memory of ${GPU_COUNT} GPUs against the estimate of `),
    JSON.stringify(charts && { curve: charts.charts.curve.label, gpus: charts.charts.gpus.label.slice(0, 80), estimateRangeColumn: charts.estimateRangeColumn }));
  await screenshot('report.png');
  await screenshot('workbench.png');
  // The curve with the estimate's band and the GPU chart are further down the report: scroll to them for a second picture.
  const scrolled = await Promise.all(page.frames().filter((f) => f.url().includes('/contrib/webview/browser/pre/')).map((f) =>
    f.evaluate(() => { const h = document.getElementById('model-0-curve')?.previousElementSibling?.previousElementSibling; h?.scrollIntoView(); return Boolean(h); }).catch(() => false)));
  if (scrolled.some(Boolean)) {
    await page.waitForTimeout(300);
    await screenshot('report-charts.png');
  }

  // Raise the batch size past the GPU's memory by typing, and watch the status bar item turn to the theme's error colour.
  const statusItemColours = () => page.evaluate(() => {
    const item = [...document.querySelectorAll('.part.statusbar .statusbar-item')].find((e) => / \/ A100 40GB/.test(e.textContent.replace(/\u00a0/g, ' ')));
    const probe = document.createElement('div');
    document.querySelector('.monaco-workbench').appendChild(probe);
    const resolve = (v) => { probe.style.backgroundColor = `var(${v})`; return getComputedStyle(probe).backgroundColor; };
    const colours = { item: item ? getComputedStyle(item).backgroundColor : null, text: item?.textContent ?? null, error: resolve('--vscode-statusBarItem-errorBackground'), warning: resolve('--vscode-statusBarItem-warningBackground') };
    probe.remove();
    return colours;
  });
  const before = await statusItemColours();
  check('status bar item has neither the error nor the warning background while the model fits', before.item !== null && before.item !== before.error && before.item !== before.warning, JSON.stringify(before));
  const tab = page.locator('.tabs-container .tab', { hasText: FILE }).first();
  await tab.click();
  const box = await findWord('256', /^batch_size\s*=\s*256/);
  if (!box) throw new Error('`batch_size = 256` not found in the editor DOM');
  await page.mouse.click(box.x + box.w + 2, box.y + box.h / 2);
  await page.keyboard.press('End');
  await page.keyboard.type('0000');
  const oom = await untilTrue(page.waitForFunction(() => {
    const item = [...document.querySelectorAll('.part.statusbar .statusbar-item')].find((e) => / \/ A100 40GB/.test(e.textContent.replace(/\u00a0/g, ' ')));
    const probe = document.createElement('div');
    probe.style.backgroundColor = 'var(--vscode-statusBarItem-errorBackground)';
    document.querySelector('.monaco-workbench').appendChild(probe);
    const error = getComputedStyle(probe).backgroundColor;
    probe.remove();
    return Boolean(item) && getComputedStyle(item).backgroundColor === error;
  }, null, { timeout: 30000 }));
  const after = await statusItemColours();
  check('after typing batch_size = 2560000 the status bar item turns to statusBarItem.errorBackground', oom && after.error !== before.item, JSON.stringify(after));
  await screenshot('statusbar-oom.png', page.locator('.part.statusbar'));

  // A click on the status item reports on the model and GPU it shows, asking nothing: close the report, click, and it is back.
  const reportTab = () => page.locator('.tabs-container .tab', { hasText: REPORT_TITLE }).first();
  await reportTab().click();
  await page.keyboard.press('Control+W');
  const closed = await untilTrue(reportTab().waitFor({ state: 'detached', timeout: 10000 }));
  await page.locator('.part.statusbar .statusbar-item', { hasText: '/ A100 40GB' }).first().click();
  const reopened = await untilTrue(reportTab().waitFor({ state: 'attached', timeout: 30000 }));
  const asked = await page.evaluate(() => { const w = document.querySelector('.quick-input-widget'); return Boolean(w && w.offsetParent !== null); });
  check('clicking the status bar item opens the report again without asking for a model or GPU', closed && reopened && !asked, JSON.stringify({ closed, reopened, asked, tabs: await tabLabels() }));

  if (!ext) {
    // Installed from a .vsix: its page in the Extensions view shows the README with every screenshot
    // (the view allows only https: and data: images; a relative one would be a broken image).
    // The report (a webview) has the focus, and keeps F1 to itself: give it back to the editor first.
    await page.locator('.tabs-container .tab', { hasText: FILE }).first().click();
    await runFromPalette('Extensions: Show Enabled Extensions');
    const item = page.locator('.extension-list-item', { hasText: 'GPU Estimator for PyTorch' }).first();
    await item.waitFor({ state: 'visible', timeout: 30000 });
    await item.click();
    const images = await readmeImages(30000);
    await screenshot('extension-details.png');
    check('the Extensions view shows the installed README with all its screenshots loaded', images.length >= 6 && images.every((i) => i.loaded), JSON.stringify(images));
  }
} catch (e) {
  crashed = true;
  check('ui driver ran to the end', false, e?.stack ?? e);
  await screenshot('failure.png');
} finally {
  if (blocked.size) log(`blocked non-loopback requests: ${[...blocked].join(' ')}`);
  await closeConsole();
  await context.close().catch(() => {});
  const passed = checks.filter((c) => c.ok).length;
  fs.writeFileSync(env('E2E_RESULT_FILE'), JSON.stringify({ passed, failed: checks.length - passed, checks }, null, 2));
  log(`ui: ${passed} passed, ${checks.length - passed} failed`);
  process.exit(crashed || passed < checks.length ? 1 : 0);
}
