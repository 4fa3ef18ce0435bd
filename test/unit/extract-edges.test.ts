import { htmlToMarkdown } from '../../activities/site/compendium';

// The first and last lines of an article, its headline, and a page whose paragraphs sit straight
// in the body.
const PROSE = [
  'The museum reopened on Saturday after two years of building work, with a new wing for the collection of maps and a café on the roof.',
  'Visitors queued from early morning, and by noon the staff had handed out the last of the free tickets for the opening weekend.',
  'The new wing shows the city as mapmakers drew it over four centuries, from the first survey of its walls to the plans for the metro.',
  'Entry will be free on the first Sunday of every month, and the museum will stay open until nine on Thursdays for the rest of the year.',
];
const paragraphs = PROSE.map((p) => `<p>${p}</p>`).join('');
const fit = (html: string) => htmlToMarkdown(html, 'fit', 'https://news.test/museum');
const page = (body: string, title = 'The museum reopens') =>
  `<html><head><title>${title}</title></head><body>${body}</body></html>`;

describe('fit: where the article starts and ends', () => {
  test('a first line that ends with a CJK full stop is a sentence, not a stub to trim', () => {
    const zh = '图为马素湘在澳大利亚悉尼游玩时的近影。';
    const body = [
      '在采访中，我们了解到不少学子在出国前就每年守在电脑前观看两会直播，但是出国后关注点大不同，他们更关心国家未来将如何发展。',
      '她说，在国外生活的这几年，让她对国内发生的变化有了新的认识，也更愿意和身边的外国同学分享中国的故事。',
      '另一位留学生表示，每年的两会报道都会让他思考，自己学成之后能够为家乡做些什么，这也是他努力学习的动力。',
      '记者在悉尼、墨尔本和布里斯班采访了二十多位留学生，他们中的大多数人表示，毕业后希望回国工作，参与家乡的建设。',
      '他们说，通过网络关注国内的新闻已经成为每天的习惯，而每年春天的两会更是他们了解国家发展方向的重要窗口。',
    ];
    const md = fit(page(`<article><p>${zh}</p>${body.map((p) => `<p>${p}</p>`).join('')}</article>`, '留学生'));
    expect(md).toContain(zh);
  });

  test('notes (※) and a members-only notice at the end of a Japanese article go', () => {
    const ja = [
      '気象庁によると、日向灘の地震は南海トラフ巨大地震の想定震源域の中で起きたもので、専門家が評価を進めている。',
      '政府は関係する自治体に対して、今後一週間程度は地震への備えを改めて確認するよう呼びかけた。',
      '沿岸部の住民の中には、念のため高台の親族の家に身を寄せる人もいて、避難所の準備も進められている。',
      '県内の鉄道は一時運転を見合わせたが、線路の点検を終えた区間から順に運転を再開し、夕方には平常に戻った。',
    ];
    const md = fit(
      page(
        `<article>${ja.map((p) => `<p>${p}</p>`).join('')}<p>この記事は会員限定です。</p><p>※紙の新聞とは、中日新聞朝刊です。</p></article>`,
        '地震',
      ),
    );
    for (const p of ja) expect(md).toContain(p);
    expect(md).not.toContain('会員限定');
    expect(md).not.toContain('※');
  });

  test("a table of contents (links to the article's own sections) before the first heading stays", () => {
    const toc = `<ul><li><a href="#reopening">The reopening</a></li><li><a href="#new-wing">The new wing</a></li></ul>`;
    const md = fit(page(`<article>${toc}<h2 id="reopening">The reopening</h2>${paragraphs}</article>`));
    expect(md).toContain('[The new wing](#new-wing)');
  });

  test('a colon inside a word ("about:addons") is no "Read more:" label', () => {
    const bugs = [1678173, 1678865, 1678866].map((n) => `<a href="https://bugs.test/${n}">Bug ${n}</a>`).join(', ');
    const md = fit(
      page(
        `<article>${paragraphs}<ul><li>Some more small about:addons cleanup from ntim (${bugs}). Thanks a lot, ntim!</li></ul></article>`,
      ),
    );
    expect(md).toContain('Some more small about:addons cleanup');
  });

  test('the heading that repeats the title goes even when another heading comes first', () => {
    const md = fit(
      page(
        `<article><h2>Culture</h2><h1>The museum reopens</h1>${paragraphs}<h2>Opening hours</h2><p>${PROSE[3]}</p></article>`,
      ),
    );
    expect(md).not.toMatch(/^#+ The museum reopens$/m);
    expect(md).toContain('## Opening hours');
  });

  test('a page whose paragraphs are straight in the body keeps them all, short ones and lists too', () => {
    const md = fit(
      page(
        `<div class="intro"><p>A note from the editor, written in the year the page went up.</p></div>${paragraphs}<p>${PROSE[0]}</p><p>${PROSE[1]}</p><ul> (A list without items, as a hand-written page has one, holding a remark.) </ul><p><i>What were they thinking?</i></p><p>${PROSE[2]}</p><p>${PROSE[3]}</p>`,
      ),
    );
    for (const p of PROSE) expect(md).toContain(p);
    expect(md).toContain('A list without items');
    expect(md).toContain('What were they thinking?');
  });
});
