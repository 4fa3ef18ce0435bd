/**
 * The three export formats as Node streams fed by an async iterable of rows. Each pulls the next
 * row only when its consumer (the HTTP response) has room, so memory stays flat however many rows
 * there are; destroying the returned stream (client gone) ends the iteration, which stops the reads.
 */
import { PassThrough, pipeline, Readable, type Writable } from 'node:stream';
import { stringify } from 'csv-stringify';
import ExcelJS from 'exceljs';
import { COLUMN_NAMES, COLUMNS, neutralise, type CellValue, type ExportRow } from './columns';

export const EXPORT_FORMATS = ['csv', 'xlsx', 'ndjson'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ndjson: 'application/x-ndjson; charset=utf-8',
};

export interface ExportOptions {
  /** csv only: start with a UTF-8 byte order mark, so that Excel reads the file as UTF-8. */
  bom: boolean;
  /** Called once when the stream fails (a read or a write); the response is then cut off. */
  onError(err: Error): void;
}

const LIST_SEPARATOR = '; ';
// Excel refuses longer cell texts.
const XLSX_MAX_TEXT = 32_767;
// Rows between yields to the zip writer: without them a fast source runs ahead of the compression.
const XLSX_YIELD_ROWS = 100;

/** csv (RFC 4180: CRLF, quoted where needed, header row) and xlsx cells are text for people. */
function spreadsheetText(v: CellValue): string | number | boolean | null {
  if (v === null) return null;
  if (Array.isArray(v)) return v.length === 0 ? null : neutralise(v.join(LIST_SEPARATOR));
  return typeof v === 'string' ? neutralise(v) : v;
}

function csvCells(row: ExportRow): string[] {
  return COLUMNS.map((c) => {
    const v = spreadsheetText(c.get(row));
    return v === null ? '' : String(v);
  });
}

function ndjsonLine(row: ExportRow): string {
  // Programs read ndjson: values as they are (lists as arrays, no quote prefixes).
  return `${JSON.stringify(Object.fromEntries(COLUMNS.map((c) => [c.name, c.get(row)])))}\n`;
}

async function* mapRows<T>(rows: AsyncIterable<ExportRow>, f: (row: ExportRow) => T): AsyncGenerator<T> {
  for await (const row of rows) yield f(row);
}

function failOnce(onError: (err: Error) => void): (err: Error | null | undefined) => void {
  let reported = false;
  return (err) => {
    if (!err || reported) return;
    reported = true;
    onError(err);
  };
}

/**
 * Fields csv-stringify would leave bare although some reader splits them: it quotes only for `,`,
 * `"` and the CRLF delimiter, so a lone LF or CR ended the row for a reader that ends rows there
 * (and the rest of the cell, `=cmd|...`, started the next one as a formula), and `;` or TAB split
 * the cell for a reader that guesses the separator (OWASP CSV injection).
 */
const CSV_QUOTE_ALSO = /[\r\n\t;]/;

function csvStream(rows: AsyncIterable<ExportRow>, options: ExportOptions): Readable {
  const out = stringify({
    header: true,
    columns: COLUMN_NAMES,
    bom: options.bom,
    record_delimiter: 'windows',
    quoted_match: CSV_QUOTE_ALSO,
  });
  pipeline(Readable.from(mapRows(rows, csvCells)), out, failOnce(options.onError));
  return out;
}

function ndjsonStream(rows: AsyncIterable<ExportRow>, options: ExportOptions): Readable {
  const out = new PassThrough();
  pipeline(Readable.from(mapRows(rows, ndjsonLine)), out, failOnce(options.onError));
  return out;
}

/**
 * exceljs' streaming writer: rows are committed as they come and zipped into `out`; no shared
 * strings table and no styles, which would otherwise grow with the rows. exceljs writes strings as
 * text cells (never formulas), but a sheet saved again as csv would carry a formula on, so text is
 * neutralised as in csv; numbers and booleans stay typed cells.
 */
function xlsxStream(rows: AsyncIterable<ExportRow>, options: ExportOptions): Readable {
  const out = new PassThrough();
  const fail = failOnce(options.onError);
  const book = new ExcelJS.stream.xlsx.WorkbookWriter({
    stream: out as unknown as Writable,
    useSharedStrings: false,
    useStyles: false,
  });
  // exceljs listens for the zip writer's errors only while finishing; without a listener an error
  // before then would be thrown at the process.
  (book as unknown as { zip: NodeJS.EventEmitter }).zip.on('error', (err: Error) => {
    fail(err);
    out.destroy(err);
  });
  const sheet = book.addWorksheet('businesses');
  sheet.columns = COLUMNS.map((c) => ({ header: c.name, key: c.name }));
  let written = 0;
  const write = async () => {
    for await (const row of rows) {
      sheet
        .addRow(
          COLUMNS.map((c) => {
            const v = spreadsheetText(c.get(row));
            return typeof v === 'string' && v.length > XLSX_MAX_TEXT ? v.slice(0, XLSX_MAX_TEXT) : v;
          }),
        )
        .commit();
      // The zip writer compresses on the thread pool and pushes into `out` without waiting for it:
      // let it catch up now and then, and wait here while the client lags.
      if (++written % XLSX_YIELD_ROWS === 0) await new Promise((r) => setImmediate(r));
      if (out.writableNeedDrain) await roomOrClose(out);
      // Client gone: leaving the loop ends the source's reads; the unfinished workbook is dropped.
      if (out.destroyed) return;
    }
    if (out.destroyed) return;
    sheet.commit();
    await Promise.race([book.commit(), roomOrClose(out, 'close')]);
  };
  write().catch((err: unknown) => {
    const e = err instanceof Error ? err : new Error(String(err));
    fail(e);
    out.destroy(e);
  });
  return out;
}

/** Resolves on `drain` (or only on `close` when asked), and on close in any case: never hangs on a dead stream. */
function roomOrClose(s: PassThrough, only?: 'close'): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      s.off('drain', done);
      s.off('close', done);
      resolve();
    };
    if (s.destroyed) return resolve();
    if (only !== 'close') s.on('drain', done);
    s.on('close', done);
  });
}

export function exportStream(format: ExportFormat, rows: AsyncIterable<ExportRow>, options: ExportOptions): Readable {
  switch (format) {
    case 'csv':
      return csvStream(rows, options);
    case 'xlsx':
      return xlsxStream(rows, options);
    case 'ndjson':
      return ndjsonStream(rows, options);
  }
}
