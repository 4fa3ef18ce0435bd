import { parseDocument } from 'htmlparser2';
import { htmlToMarkdown } from '../../activities/site/compendium';
import { domToMarkdown } from '../../lib/dom-markdown';

const md = (html: string) =>
  domToMarkdown(parseDocument(html).children, { codeBlockStyle: 'fenced', emDelimiter: '*' });

describe('the Markdown of the main content', () => {
  test('a text starting "19) " is escaped as CommonMark\'s other ordered-list marker', () => {
    expect(md('<h3>19) <a href="/ingrid">Ingrid Goes West</a></h3><p>3) not a list</p>')).toBe(
      '### 19\\) [Ingrid Goes West](/ingrid)\n\n3\\) not a list',
    );
  });

  test('a <br> inside a code block is a line break (a highlighter writes one per line)', () => {
    expect(md('<pre><code>int a;<br>int b;<br><br>return a;</code></pre>')).toBe(
      '```\nint a;\nint b;\n\nreturn a;\n```',
    );
  });

  test('fit writes no image whose source is a data: URI (a placeholder, or the picture as text)', () => {
    const text =
      'The story of the game is told here in full, with the help of the people who made it, over several long paragraphs of text, with commas, and more.';
    const page = `<html><body><article><h1>Story</h1><p>${text}</p><p><img alt="placeholder" src="data:image/gif;base64,R0lGODlhAQABAAAAACH5BAEKAAEALAAAAAABAAEAAAICTAEAOw=="></p><p><img src="data:image/svg+xml;utf8,<svg xmlns='http://www.w3.org/2000/svg'><path d='M0 0h1'/></svg>"></p><p>${text}</p><p><img alt="a real one" src="/pic.jpg"></p><p>${text}</p><p>${text}</p></article></body></html>`;
    const out = htmlToMarkdown(page, 'fit', 'https://games.test/story');
    expect(out).not.toContain('data:');
    expect(out).not.toContain('svg');
    expect(out).toContain('![a real one](https://games.test/pic.jpg)');
  });
});
