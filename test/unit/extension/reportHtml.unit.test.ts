import * as assert from 'node:assert/strict';
import { reportHtml } from '../../../src/extension/report/reportHtml';
import { estimate, fixture } from '../fixtures';

describe('report page', () => {
  const page = { cspSource: 'vscode-webview://abc', stylesheetUri: 'vscode-webview://abc/media/report.css' };

  it('shows the estimate, the layer table and the comparison under a strict CSP with no script', async () => {
    const html = reportHtml(await estimate(fixture('cnn_cifar')), page);
    assert.match(html, /Content-Security-Policy" content="default-src 'none'; style-src vscode-webview:\/\/abc;/);
    assert.doesNotMatch(html, /<script/i);
    assert.doesNotMatch(html, /https?:\/\//, 'no remote resources');
    assert.match(html, /Horus formula/);
    assert.equal((html.match(/<tr><td><code>/g) ?? []).length, 12, 'one row per layer');
  });

  it('escapes names from the source', async () => {
    const html = reportHtml(await estimate('import torch.nn as nn\nbatch_size = 2\nx_y = nn.Sequential(nn.Linear(2, 2))\n', { batchSize: 2 }), page);
    const evil = reportHtml({ file: '<img src=x onerror=alert(1)>.py', gpu: { id: 'a', name: 'A', memoryMiB: 1 }, models: [], warnings: ['<b>'] }, page);
    assert.match(html, /x_y/);
    assert.doesNotMatch(evil, /<img/);
    assert.match(evil, /&lt;b&gt;/);
  });
});
