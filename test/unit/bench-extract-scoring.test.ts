import { markdownToText, shingleMatch, shingleMetrics, snippetCounts } from '../../bench/extract';

// bench:extract's figures are only as right as its scoring: these pin it to the published methods.
describe('bench:extract scoring', () => {
  it('scores the words of the markdown, not its syntax', () => {
    const md = '## The title\n\n- [the link text](https://example.org/a "t") and **bold** *words*\n\n![a photo](p.png)\n\n| a | b |\n|---|---|\n| c | d |';
    expect(markdownToText(md).split(/\s+/).filter(Boolean)).toEqual(['The', 'title', 'the', 'link', 'text', 'and', 'bold', 'words', 'a', 'b', 'c', 'd']);
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
