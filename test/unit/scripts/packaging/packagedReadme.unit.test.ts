import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { markdownImages, readmeWithInlineImages, showableImage } from '../../../../scripts/packaging/packagedReadme';
import { REPO_ROOT } from '../../fixtures';

describe('the packaged README', () => {
  const files: Record<string, Buffer> = { [path.join('/repo', 'media', 'a.png')]: Buffer.from([0x89, 0x50, 0x4e, 0x47]) };
  const readFile = (file: string): Buffer => {
    const bytes = files[file];
    if (!bytes) throw new Error(`ENOENT ${file}`);
    return bytes;
  };

  it('embeds a relative image as a data: URL of its file, and leaves https: and data: images alone', () => {
    const markdown = 'Text ![shot](media/a.png "title") and ![badge](https://example.org/b.png) ![dot](data:image/png;base64,AA==)';
    assert.equal(
      readmeWithInlineImages(markdown, '/repo', readFile),
      'Text ![shot](data:image/png;base64,iVBORw== "title") and ![badge](https://example.org/b.png) ![dot](data:image/png;base64,AA==)',
    );
  });

  it('refuses, naming it, an image VS Code could not show', () => {
    assert.throws(() => readmeWithInlineImages('![x](media/missing.png)', '/repo', readFile), /^Error: README\.md: the image media\/missing\.png does not exist$/);
    assert.throws(() => readmeWithInlineImages('![x](media/logo.svg)', '/repo', readFile), /the image media\/logo\.svg is not PNG, JPEG, GIF or WebP/);
    assert.throws(() => readmeWithInlineImages('![x](http://example.org/a.png)', '/repo', readFile), /http:\/\/example\.org\/a\.png would be broken in VS Code/);
    assert.throws(() => readmeWithInlineImages('<img src="media/a.png">', '/repo', readFile), /HTML <img> tag/);
  });

  it("leaves none of the repository README's screenshots relative", () => {
    const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const relative = markdownImages(readme).filter((source) => !showableImage(source));
    assert.ok(relative.length >= 6, 'the README has its screenshots');
    const packaged = markdownImages(readmeWithInlineImages(readme, REPO_ROOT, (file) => readFileSync(file)));
    assert.equal(packaged.length, markdownImages(readme).length);
    assert.deepEqual(packaged.filter((source) => !showableImage(source)), []);
  });
});
