import { markdownToText, shingleMatch, shingleMetrics, snippetCounts } from '../../bench/extract';

// bench:extract's figures are only as right as its scoring: these pin it to the published methods.
describe('bench:extract scoring', () => {
  it('scores the words of the markdown, not its syntax', () => {
    const md =
      '## The title\n\n- [the link text](https://example.org/a "t") and **bold** *words*\n\n![a photo](p.png)\n\n| a | b |\n|---|---|\n| c | d |';
    expect(markdownToText(md).split(/\s+/).filter(Boolean)).toEqual([
      'The',
      'title',
      'the',
      'link',
      'text',
      'and',
      'bold',
      'words',
      'a',
      'b',
      'c',
      'd',
    ]);
  });

  it('reads a link as its text where the URL or title holds parentheses, a footnote link, and an image with an <...> destination', () => {
    // What the converter writes for Wikipedia's film links and footnotes and for a lazy image's data: URL.
    const md =
      'Remake of *[The Time Travelers](https://en.wikipedia.org/wiki/The_Time_Travelers_\\(1964_film\\) "The Time Travelers (1964 film)")*[\\[4\\]](https://en.wikipedia.org/wiki/List#cite_note-4).\n\n![Zendaya at a "Dune" screening.](<data:image/svg+xml,%3Csvg xmlns=\'http://www.w3.org/2000/svg\'%3E%3C/svg%3E>) After.';
    expect(markdownToText(md).split(/\s+/).filter(Boolean)).toEqual([
      'Remake',
      'of',
      'The',
      'Time',
      'Travelers[4].',
      'After.',
    ]);
  });

  it('reads code as it is written: underscores and asterisks inside code blocks and code spans are no emphasis', () => {
    // toc-missing (Readability's pages): SQL whose identifiers hold underscores was scored as
    // "lowerbound upperbound", so the words the converter kept counted as missing.
    const md =
      '```sql\nSELECT n, lower_bound, upper_bound FROM t WHERE n * 2 > 1 * 3\n```\n\nCall `is_anomaly_0_5` and *really* `a_b_c`, [`generate_series`](https://www.postgresql.org/docs/ "f").';
    expect(markdownToText(md).split(/\s+/).filter(Boolean)).toEqual([
      'SELECT',
      'n,',
      'lower_bound,',
      'upper_bound',
      'FROM',
      't',
      'WHERE',
      'n',
      '*',
      '2',
      '>',
      '1',
      '*',
      '3',
      'Call',
      'is_anomaly_0_5',
      'and',
      'really',
      'a_b_c,',
      'generate_series.',
    ]);
  });

  it('averages precision over pages with output and recall over pages with ground truth (the article-extraction benchmark)', () => {
    const truth = 'one two three four five six seven eight';
    expect(shingleMatch(truth, truth)).toEqual([1, 0, 0]);
    const perfect = shingleMatch(truth, truth);
    const empty = shingleMatch(truth, '');
    const m = shingleMetrics([perfect, empty]);
    expect(m.precision).toBe(1);
    expect(m.recall).toBe(0.5);
    expect(m.f1).toBeCloseTo(2 / 3, 6);
  });

  it('counts with/without snippets as trafilatura does, whitespace-normalised', () => {
    const page = { with: ['the  main\ntext', 'missing part'], without: ['Impressum', 'Twitter'] };
    expect(snippetCounts(page, 'Here is the main text. Impressum')).toEqual([1, 1, 1, 1]);
  });
});
