// Phase B: opens the workbench with extensionDevelopmentPath + extensionTestsPath, so
// that code-server's Node extension host loads the extension from the repo and runs the
// mocha runner (test/e2e/exthost/index.ts). When the runner settles, the workbench calls
// window.codeAutomationExit(code, logs); the runner's output reaches the page console.
import fs from 'node:fs';
import path from 'node:path';
import { env, launchBrowser, logger, recordConsole, workbenchUrl } from './browser.mjs';

const TIMEOUT_MS = 180000;
const START = '=== gpu-estimator e2e tests start';  // printed by test/e2e/exthost/index.ts
const END = '=== gpu-estimator e2e tests end';
const log = logger('exthost');

const { context, page, blocked } = await launchBrowser({ viewport: { width: 1280, height: 800 } });
let inTests = false;
const closeConsole = recordConsole(page, (text, fromExtensionHost) => {
  if (!fromExtensionHost) return;  // e.g. webview warnings: browser-console.log has them
  if (text.includes(START)) inTests = true;
  if (inTests) console.log('  ' + text);
  if (text.includes(END)) inTests = false;
});

let settle;
const finished = new Promise((resolve) => { settle = resolve; });
await page.exposeFunction('codeAutomationExit', (code, logs) => settle({ code, logs }));
await page.goto(workbenchUrl({
  extensionDevelopmentPath: env('E2E_EXT_DIR'),
  extensionTestsPath: env('E2E_TESTS_PATH'),
}));
log('workbench opened; waiting for the test runner in the extension host');
const timer = new Promise((resolve) => setTimeout(() => resolve({ code: 'timeout' }), TIMEOUT_MS));
const result = await Promise.race([finished, timer]);

// The workbench hands over its own (browser-side) logs; keep them next to the server's.
for (const l of result.logs ?? []) {
  const file = path.join(env('E2E_LOG_DIR'), 'workbench-logs', l.relativePath);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, l.contents);
}
if (result.code === 'timeout') {
  log(`no codeAutomationExit within ${TIMEOUT_MS / 1000}s`);
  await page.screenshot({ path: path.join(env('E2E_OUT_DIR'), 'exthost-timeout.png') }).catch(() => {});
}
if (blocked.size) log(`blocked non-loopback requests: ${[...blocked].join(' ')}`);
log(`codeAutomationExit(${result.code})`);
await closeConsole();
await context.close().catch(() => {});
process.exit(result.code === 0 ? 0 : 1);
