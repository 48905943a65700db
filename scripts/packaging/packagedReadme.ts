/**
 * The README that goes into the .vsix. VS Code shows an installed extension's README in a webview
 * whose policy allows images from `https:` and `data:` only, with no base URL (checked in VS Code
 * 1.100's extension editor): a relative `media/screenshots/x.png` is a broken image there, and
 * this project has no public URL to point at. So each relative image is put into the README itself
 * as a `data:` URL; vsce is then told not to rewrite links (it would insist on a repository URL).
 */
import * as path from 'node:path';

const IMAGE_TYPES: Readonly<Record<string, string>> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp' };

/** Markdown images: `![alt](target)` and `![alt](target "title")`. */
const MARKDOWN_IMAGE = /!\[([^\]]*)\]\(([^)\s]+)(\s+"[^"]*")?\)/g;

/** Whether an image source is one VS Code's README view can show: https: or data: (not data:image/svg, which vsce refuses). */
export function showableImage(source: string): boolean {
  return /^https:\/\//i.test(source) || (/^data:image\//i.test(source) && !/^data:image\/svg/i.test(source));
}

/**
 * The README with every relative image replaced by a data: URL of the file it names (read with
 * `readFile`, relative to the README's folder). Throws, naming the image, for an image VS Code
 * could not show: a missing file, an SVG or other type it cannot embed, an http: or HTML image.
 */
export function readmeWithInlineImages(markdown: string, readmeDir: string, readFile: (file: string) => Buffer): string {
  if (/<img\b/i.test(markdown)) throw new Error('README.md: an HTML <img> tag; use a Markdown image, which the packaged README can embed');
  return markdown.replace(MARKDOWN_IMAGE, (_whole, alt: string, source: string, title: string | undefined) => {
    if (showableImage(source)) return `![${alt}](${source}${title ?? ''})`;
    if (/^[a-z][a-z0-9+.-]*:/i.test(source)) throw new Error(`README.md: the image ${source} would be broken in VS Code (only https: and data: images show)`);
    const type = IMAGE_TYPES[path.extname(source).toLowerCase()];
    if (!type) throw new Error(`README.md: the image ${source} is not PNG, JPEG, GIF or WebP, so it cannot be embedded`);
    let bytes: Buffer;
    try {
      bytes = readFile(path.join(readmeDir, source));
    } catch {
      throw new Error(`README.md: the image ${source} does not exist`);
    }
    return `![${alt}](data:${type};base64,${bytes.toString('base64')}${title ?? ''})`;
  });
}

/** The images of a Markdown text, in order (for checking a packaged README). */
export function markdownImages(markdown: string): string[] {
  return [...markdown.matchAll(MARKDOWN_IMAGE)].map((match) => match[2]!);
}
