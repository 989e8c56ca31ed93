/** Human output of the CLI: aligned tables, key/value blocks and a progress bar on stderr. */

export interface Stream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface Io {
  stdout: Stream;
  stderr: Stream;
}

export type Cell = string | number | boolean | null | undefined;

function text(cell: Cell): string {
  return cell === null || cell === undefined || cell === '' ? '-' : String(cell);
}

function width(value: string): number {
  return [...value].length;
}

/** Columns padded to their widest cell; the last column is not padded (no trailing spaces). */
export function table(headers: string[], rows: Cell[][]): string {
  const cells = [headers, ...rows.map((row) => row.map(text))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => width(row[column] ?? ''))));
  return `${cells
    .map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell + ' '.repeat(widths[column]! - width(cell)))).join('  '))
    .join('\n')}\n`;
}

export function keyValues(entries: [string, Cell][]): string {
  const pad = Math.max(...entries.map(([key]) => key.length));
  return `${entries.map(([key, value]) => `${key.padEnd(pad)}  ${text(value)}`).join('\n')}\n`;
}

/**
 * One progress line: redrawn in place on a terminal, one line per update otherwise (logs of a CI
 * job or a redirected stderr stay readable).
 */
export class ProgressBar {
  private drawn = false;

  constructor(
    private readonly stream: Stream,
    private readonly total: number,
  ) {}

  update(done: number, detail: string): void {
    const share = this.total === 0 ? 1 : done / this.total;
    const filled = Math.round(share * 30);
    const line = `[${'#'.repeat(filled)}${'-'.repeat(30 - filled)}] ${String(Math.floor(share * 100)).padStart(3)}% ${done}/${this.total} ${detail}`;
    if (this.stream.isTTY) {
      this.stream.write(`\r${line}\x1b[K`);
      this.drawn = true;
    } else {
      this.stream.write(`${line}\n`);
    }
  }

  finish(): void {
    if (this.drawn) this.stream.write('\n');
    this.drawn = false;
  }
}
