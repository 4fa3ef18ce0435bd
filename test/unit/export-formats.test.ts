import type { Readable } from 'node:stream';
import { rowFromMaps, type ExportRow } from '../../api/exports/columns';
import { EXPORT_FORMATS, exportStream } from '../../api/exports/formats';

// The writers pull rows only as their reader takes bytes, and stop pulling when the reader goes away
// or a row fails: what keeps a 100k-row export flat in memory and a hang-up from reading on.

interface Source {
  rows: AsyncGenerator<ExportRow>;
  pulled: () => number;
  ended: Promise<void>;
}

function endless(failAt?: number): Source {
  let pulled = 0;
  let end!: () => void;
  const ended = new Promise<void>((r) => (end = r));
  async function* gen(): AsyncGenerator<ExportRow> {
    try {
      for (;;) {
        if (pulled === failAt) throw new Error('database went away');
        pulled++;
        // A database page boundary now and then, as the repository's reads are.
        if (pulled % 500 === 0) await new Promise((r) => setImmediate(r));
        yield rowFromMaps(
          {
            business_name: `Bakery ${pulled}`,
            place_id: `p${pulled}`,
            address: 'x'.repeat(200),
            categories: ['Bakery'],
          },
          { jobId: 'j', campaignId: null, location: null },
        );
      }
    } finally {
      end();
    }
  }
  return { rows: gen(), pulled: () => pulled, ended };
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The number of rows pulled once it stays the same for 200 ms; fails if it keeps growing for 5 s. */
async function pullsStopped(src: Source): Promise<number> {
  let last = -1;
  for (let i = 0; i < 25; i++) {
    await settle(200);
    if (src.pulled() === last) return last;
    last = src.pulled();
  }
  throw new Error(`still pulling rows after 5 s (${last})`);
}

async function firstChunk(s: Readable): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    s.once('data', () => resolve());
    s.once('error', reject);
  });
  s.pause();
}

describe.each(EXPORT_FORMATS)('%s', (format) => {
  test('an unread export stops pulling rows; destroying it ends the source', async () => {
    const src = endless();
    const errors: Error[] = [];
    const out = exportStream(format, src.rows, { bom: false, onError: (e) => errors.push(e) });
    await firstChunk(out);
    // Nobody reads: the pulls stop, bounded by the stream buffers (the zip writer's among them).
    const before = await pullsStopped(src);
    expect(before).toBeLessThan(20_000);
    out.destroy();
    await src.ended;
    expect(src.pulled()).toBe(before);
  });

  test('a failing source cuts the stream off with an error, reported once', async () => {
    const src = endless(50);
    const errors: Error[] = [];
    const out = exportStream(format, src.rows, { bom: false, onError: (e) => errors.push(e) });
    const failed = new Promise<Error>((resolve) => out.once('error', resolve));
    out.resume();
    expect((await failed).message).toBe('database went away');
    await src.ended;
    expect(errors.map((e) => e.message)).toEqual(['database went away']);
  });
});
