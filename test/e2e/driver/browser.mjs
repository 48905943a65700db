// Shared by the two phase drivers: loads playwright-core from the e2e cache (it is not a
// repo dependency), starts Debian's Chromium headless, keeps the page on loopback, and
// builds the workbench URL. Configured by the E2E_* variables that run.sh exports.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { format } from 'node:util';

export function env(name) {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set (run test/e2e/run.sh)`);
  return value;
}

export function logger(tag) {
  const t0 = Date.now();
  return (...args) => console.log(`[${tag} +${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...args);
}

const { chromium } = createRequire(path.join(env('E2E_DRIVER_DIR'), 'package.json'))('playwright-core');

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
const LOCAL_PROTOCOLS = new Set(['data:', 'blob:']);

/** Launches Chromium with a fresh profile; every non-loopback request is aborted and recorded. */
export async function launchBrowser({ viewport = { width: 1400, height: 900 } } = {}) {
  const context = await chromium.launchPersistentContext(env('E2E_PROFILE_DIR'), {
    executablePath: env('E2E_CHROMIUM'),
    headless: true,
    viewport,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-dev-shm-usage', '--disable-crash-reporter'],
  });
  const blocked = new Set();
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (LOOPBACK_HOSTS.has(url.hostname) || LOCAL_PROTOCOLS.has(url.protocol)) return route.continue();
    blocked.add(url.origin);
    return route.abort();
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return { context, page, blocked };
}

/**
 * Writes every console message of the page to <E2E_LOG_DIR>/browser-console.log; `onText`
 * sees each formatted line and whether the workbench forwarded it from the extension host.
 */
export function recordConsole(page, onText = () => {}) {
  const logDir = env('E2E_LOG_DIR');
  fs.mkdirSync(logDir, { recursive: true });
  const file = fs.createWriteStream(path.join(logDir, 'browser-console.log'));
  page.on('console', async (message) => {
    // Forwarded extension-host output arrives as ('%c<prefix>', '<css>', ...printf args).
    let args = await Promise.all(message.args().map((a) => a.jsonValue().catch(() => '?')));
    const forwarded = typeof args[0] === 'string' && args[0].startsWith('%c') && typeof args[1] === 'string';
    if (forwarded) args = args.slice(2);
    const text = args.length ? format(...args) : message.text();
    file.write(`${message.type()}${forwarded ? ' [exthost]' : ''}: ${text}\n`);
    onText(text, forwarded);
  });
  page.on('pageerror', (e) => file.write(`pageerror: ${e.stack ?? e.message}\n`));
  page.on('response', (r) => { if (r.status() >= 400) file.write(`http ${r.status()}: ${r.url()}\n`); });
  return () => new Promise((resolve) => file.end(resolve));
}

/**
 * The workbench URL for folder E2E_WS_DIR. With `extensionDevelopmentPath` (and, for
 * tests, `extensionTestsPath`) the workbench loads the extension from that server-side
 * folder, as VS Code does for remote extension development.
 */
export function workbenchUrl({ extensionDevelopmentPath, extensionTestsPath } = {}) {
  const base = env('E2E_CS_URL');
  const host = new URL(base).host;
  const remote = (p) => `vscode-remote://${host}${p}`;
  const payload = [];
  if (extensionDevelopmentPath) payload.push(['extensionDevelopmentPath', remote(extensionDevelopmentPath)]);
  if (extensionTestsPath) payload.push(['extensionTestsPath', remote(extensionTestsPath)]);
  let url = `${base}/?folder=${encodeURIComponent(env('E2E_WS_DIR'))}`;
  if (payload.length) url += `&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  return url;
}

// run.sh sends SIGTERM on its timeout or when it is stopped itself. Playwright then closes
// the browser, but a pending wait would keep node alive until the KILL that follows: exit
// now (Playwright's exit hook kills whatever browser process is left).
process.once('SIGTERM', () => {
  console.log('driver: SIGTERM, exiting');
  process.exit(124);
});
