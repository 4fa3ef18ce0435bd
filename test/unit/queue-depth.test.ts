import { margin, QueueDepthEstimate } from '../../api/queue-depth';

// When a submission counts its queue's queued jobs for the capacity check (api/queue-depth.ts).
describe('QueueDepthEstimate', () => {
  let now = 0;
  const estimate = () => new QueueDepthEstimate(1000, () => now);
  beforeEach(() => {
    now = 1_000_000;
  });

  test('counts when it knows nothing of the queue, and when its count is older than a second', () => {
    const e = estimate();
    expect(e.mustCount('q', 5000)).toBe(true);
    e.record('q', 10, true);
    expect(e.mustCount('q', 5000)).toBe(false);
    now += 1001;
    expect(e.mustCount('q', 5000)).toBe(true);
  });

  test('far below the capacity it adds its own jobs to the last count; within the margin it counts again', () => {
    const e = estimate();
    e.record('q', 4000, true); // 4,001 queued; counting starts at 5,000 - 500
    for (let i = 0; i < 498; i++) {
      expect(e.mustCount('q', 5000)).toBe(false);
      e.record('q', null, true);
    }
    expect(e.mustCount('q', 5000)).toBe(false); // 4,499
    e.record('q', null, true);
    expect(e.mustCount('q', 5000)).toBe(true); // 4,500
  });

  test('a small capacity is always counted (the margin is at least 100 jobs)', () => {
    const e = estimate();
    e.record('q', 0, true);
    expect(margin(2)).toBe(100);
    expect(e.mustCount('q', 2)).toBe(true);
    expect(e.mustCount('q', 100)).toBe(true);
    expect(e.mustCount('q', 102)).toBe(false);
  });

  test('queues are estimated apart; a refused or cached submission adds nothing', () => {
    const e = estimate();
    e.record('a', 4499, false);
    e.record('b', 0, true);
    expect(e.mustCount('a', 5000)).toBe(false);
    e.record('a', null, false);
    expect(e.mustCount('a', 5000)).toBe(false);
    e.record('a', null, true);
    expect(e.mustCount('a', 5000)).toBe(true);
    expect(e.mustCount('b', 5000)).toBe(false);
  });

  test('a stale count is recounted by one submission at a time; the others go on with the estimate', () => {
    const e = estimate();
    e.record('q', 1000, true);
    now += 1001;
    expect(e.mustCount('q', 5000)).toBe(true); // the first after a second recounts
    expect(e.mustCount('q', 5000)).toBe(false); // its concurrent peers do not
    expect(e.mustCount('q', 5000)).toBe(false);
    expect(e.mustCount('other', 5000)).toBe(true); // another queue is counted on its own
    e.record('q', 1200, true);
    e.countSettled('q');
    expect(e.mustCount('q', 5000)).toBe(false);
    now += 1001;
    expect(e.mustCount('q', 5000)).toBe(true); // stale again: the next recount
  });

  test('a recount that never reports (its submission failed) lets another recount after a second', () => {
    const e = estimate();
    e.record('q', 10, true);
    now += 1001;
    expect(e.mustCount('q', 5000)).toBe(true);
    expect(e.mustCount('q', 5000)).toBe(false);
    now += 1001;
    expect(e.mustCount('q', 5000)).toBe(true);
    e.countSettled('q'); // a failed submission settles without a count
    expect(e.mustCount('q', 5000)).toBe(true);
  });

  test('near the capacity every submission counts, even while a recount is under way', () => {
    const e = estimate();
    e.record('q', 4600, true);
    now += 1001;
    expect(e.mustCount('q', 5000)).toBe(true);
    expect(e.mustCount('q', 5000)).toBe(true);
  });
});
