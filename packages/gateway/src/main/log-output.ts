import { write } from 'node:fs';

/** Queued log text beyond this is dropped (and counted) while standard output is not being read. */
const DEFAULT_MAX_QUEUED_CHARS = 16 * 1024 * 1024;
/** Pause before writing again to an output that is full (EAGAIN). */
const FULL_OUTPUT_RETRY_MS = 50;

/**
 * Where the service's JSON log lines go: standard output, written asynchronously, in order, and
 * never in a way that can hold the process. pino's default destination retries a full or broken
 * output forever, and does so synchronously when the process exits, so a `tms start` whose reader
 * stalled and went away could never exit after SIGTERM. Here:
 * - a full output (EAGAIN) is retried on a timer, while the service goes on;
 * - lines beyond a bounded queue are dropped, and how many is logged once writing works again;
 * - a broken output (EPIPE, or any other write error) ends logging for good: nobody reads it;
 * - flush() waits for the queue with a time limit, so exiting never depends on the reader.
 */
export class LogOutput {
  private queue: string[] = [];
  private queuedChars = 0;
  private writing = false;
  private broken = false;
  private droppedLines = 0;
  private readonly drained = new Set<() => void>();

  constructor(
    private readonly fd: number = 1,
    private readonly maxQueuedChars: number = DEFAULT_MAX_QUEUED_CHARS,
  ) {}

  /** pino's destination interface: one serialised line. */
  write(line: string): void {
    if (this.broken) return;
    if (this.queuedChars + line.length > this.maxQueuedChars) {
      this.droppedLines += 1;
      return;
    }
    this.queue.push(line);
    this.queuedChars += line.length;
    if (!this.writing) this.writeQueued();
  }

  private writeQueued(): void {
    if (this.broken || this.queue.length === 0) {
      this.writing = false;
      for (const resolve of [...this.drained]) resolve();
      return;
    }
    this.writing = true;
    let text = this.queue.join('');
    this.queue = [];
    this.queuedChars = 0;
    if (this.droppedLines > 0) {
      const notice = { level: 40, time: Date.now(), msg: `${this.droppedLines} log lines were dropped: standard output was not being read` };
      text = `${JSON.stringify(notice)}\n${text}`;
      this.droppedLines = 0;
    }
    this.writeBuffer(Buffer.from(text, 'utf8'));
  }

  private writeBuffer(buffer: Buffer): void {
    write(this.fd, buffer, 0, buffer.length, null, (error, written) => {
      if (error) {
        if (error.code === 'EAGAIN') {
          setTimeout(() => this.writeBuffer(buffer), FULL_OUTPUT_RETRY_MS).unref();
          return;
        }
        // EPIPE (the reader is gone) or worse: nothing written from now on will be read.
        this.broken = true;
        this.queue = [];
        this.queuedChars = 0;
        this.writeQueued();
        return;
      }
      if (written < buffer.length) this.writeBuffer(buffer.subarray(written));
      else this.writeQueued();
    });
  }

  /** Resolves once everything queued is written, the output is found broken, or `timeoutMs` passed. */
  flush(timeoutMs: number): Promise<void> {
    if (!this.writing && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.drained.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.drained.add(done);
    });
  }
}
