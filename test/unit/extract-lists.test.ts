import { htmlToMarkdown } from '../../activities/site/compendium';

// Lists and definition lists inside an article: which are its text and which are the site's.
const PROSE = [
  'This fortnight the team landed the new update checks, which stop an update from starting while another copy of the browser is running.',
  'Printing now takes page ranges that are not contiguous, and the address bar lets each search engine be switched off for tab-to-search.',
  'Many thanks to everyone who sent a first patch this fortnight, and to the reviewers who turned them around in a day or two, every time.',
  'The next release goes to the beta channel on Monday, and the one after that moves to the new rendering engine on every platform.',
];
const paragraphs = PROSE.map((p) => `<p>${p}</p>`).join('');
const fit = (body: string) =>
  htmlToMarkdown(
    `<html><body><article><h1>These weeks in the browser</h1>${body}</article></body></html>`,
    'fit',
    'https://blog.test/2020/12/18/issue-85/',
  );

describe('fit: lists inside the article', () => {
  test('a list of links to bug reports is what the changelog lists: it stays', () => {
    const bugs = [
      [1677080, 'Fullscreen video window is affected by switching video source'],
      [1677107, 'Add telemetry for tracking multiple video windows'],
      [1681796, 'Prevent superfluous parent actors from being associated with each tab'],
    ];
    const list = `<h3>In progress</h3><ul>${bugs.map(([id, t]) => `<li><a href="https://bugs.test/show_bug.cgi?id=${id}">Bug ${id} – ${t}</a></li>`).join('')}</ul>`;
    const md = fit(`${paragraphs}${list}`);
    for (const [id] of bugs) expect(md).toContain(`Bug ${id}`);
  });

  test('a list of links to other stories is a box of teasers: it goes', () => {
    const stories = [
      ['/2020/12/08/these-weeks-in-the-browser-issue-84/', 'These weeks in the browser: Issue 84'],
      ['/news/business-45814459', 'How the government raises and spends its money'],
      ['/a-look-back-at-the-year-in-the-browser', 'A look back at the year in the browser'],
    ];
    const list = `<ul>${stories.map(([href, t]) => `<li><a href="${href}">${t}</a></li>`).join('')}</ul>`;
    const md = fit(
      `${PROSE.slice(0, 2)
        .map((p) => `<p>${p}</p>`)
        .join('')}${list}${PROSE.slice(2)
        .map((p) => `<p>${p}</p>`)
        .join('')}`,
    );
    for (const p of PROSE) expect(md).toContain(p);
    for (const [, t] of stories) expect(md).not.toContain(t as string);
  });

  test("a definition list with a formula's images between its words is text (a proof), not a gallery", () => {
    const formula = (tex: string) => `<img class="math-fallback-image" src="/math/${tex.length}.svg" alt="${tex}">`;
    const dl = `<dl><dd><i>Proof:</i> by definition ${formula('H_{ij}=H_{ji}')} thus ${formula('H_{ii}=H_{ii}')} and the entries on the diagonal are real.</dd></dl>`;
    const md = fit(`${paragraphs}${dl}<p>${PROSE[0]}</p>`);
    expect(md).toContain('by definition');
    expect(md).toContain('the entries on the diagonal are real.');
  });
});
