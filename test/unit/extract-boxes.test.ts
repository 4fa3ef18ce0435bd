import { htmlToMarkdown } from '../../activities/site/compendium';

// Boxes inside or beside an article, told apart by what their class says and by what they hold.
const PROSE = [
  'The council voted on Tuesday to close the old swimming baths, after a survey found the roof beyond repair and the pool losing water.',
  'Residents who had campaigned for a decade to keep the baths open said they would ask the courts to review the decision, and a petition has begun.',
  'The leader of the council said the money would go to a new leisure centre by the river, with two pools, a gym and a café, to open in three years.',
  'Swimming clubs that train at the baths will move to the school pool on Park Road until then, and lessons for children will continue as before.',
];
const paragraphs = (from = 0, to = PROSE.length) =>
  PROSE.slice(from, to)
    .map((p) => `<p>${p}</p>`)
    .join('');
const fit = (body: string, title = 'Council closes the baths') =>
  htmlToMarkdown(
    `<html><head><title>${title}</title></head><body>${body}</body></html>`,
    'fit',
    'https://news.test/baths',
  );
const expectProse = (md: string) => {
  for (const p of PROSE) expect(md).toContain(p);
};

describe('fit: boxes in and around the article', () => {
  test('an item whose class says it has no caption (`no_caption`) is no caption: its heading stays', () => {
    const md = fit(
      `<article><div class="superlist_item superlist_item_image no_caption"><h2>The roof of the old baths has been leaking since the winter storms of last year.</h2><img src="/roof.jpg"></div>${paragraphs()}</article>`,
    );
    expect(md).toContain('The roof of the old baths has been leaking');
    expectProse(md);
  });

  test('a "most popular" box after the article goes, whatever its length', () => {
    const stories = Array.from(
      { length: 6 },
      (_, i) =>
        `<li><h3><a href="/story-${i}">Another story of the day, number ${i}</a></h3><p>A summary of that other story, long enough to read as a sentence of its own.</p></li>`,
    ).join('');
    const md = fit(
      `<main><article>${paragraphs()}</article><section class="c-article-most-popular"><h2>Most Popular</h2><ol>${stories}</ol></section></main>`,
    );
    expectProse(md);
    expect(md).not.toContain('Most Popular');
    expect(md).not.toContain('Another story of the day');
  });

  test("a chart's labels (an ai2html graphic) are not the article's text", () => {
    const labels = ['$915 billion', 'Interest payments', '$900', '600', '300', '2018', '2028']
      .map((l) => `<p class="g-pstyle0">${l}</p>`)
      .join('');
    const md = fit(
      `<article>${paragraphs(0, 2)}<div class="ai2html ai2html-box-v5"><div class="g-artboard">${labels}</div></div>${paragraphs(2)}</article>`,
    );
    expectProse(md);
    expect(md).not.toContain('$915 billion');
  });

  test("an advertisement's label left without its advertisement goes", () => {
    const md = fit(
      `<article>${paragraphs(0, 2)}<div class="slot"><p>Advertisement</p></div>${paragraphs(2)}<div>Anzeige</div></article>`,
    );
    expectProse(md);
    expect(md).not.toMatch(/Advertisement|Anzeige/);
  });

  test("a byline box goes; a dateline inside the lede's paragraph stays", () => {
    const md = fit(
      `<article><div class="article-author"><a href="/by/joe">Joe Wee</a> Monday, February 29, 2016 11:10 PM UTC</div><p><span class="dateline">KOBE – </span>${PROSE[0]}</p>${paragraphs(1)}</article>`,
    );
    expect(md).not.toContain('Joe Wee');
    expect(md).toContain(`KOBE – ${PROSE[0]}`);
    expectProse(md);
  });

  test("the article's body split over like boxes does not take in a related story's box of the same class", () => {
    // NYT's shape: the body in two wrappers of one class, a related-coverage aside in the first.
    const related = `<div class="supplemental"><aside class="marginalia" role="complementary"><h2>Related Coverage</h2><ul><li><article class="story"><div class="story-body"><h2 class="headline">A related story told in a headline long enough to read as prose</h2></div></article></li></ul></aside></div>`;
    const links = `<div class="interrupter"><a href="#story-continues-1">Continue reading the main story</a> <a href="/section/business">More in Business and the economy</a> <a href="/section/media">More in Media and advertising</a></div>`;
    const md = fit(
      `<article id="story"><div class="story-body-supplemental"><div class="story-body story-body-1">${paragraphs(0, 1)}</div>${related}</div>${links}<div class="story-body-supplemental"><div class="story-body story-body-2">${paragraphs(1)}${paragraphs(1)}</div>${links}</div></article>`,
    );
    expectProse(md);
    expect(md).not.toContain('A related story');
  });
});
