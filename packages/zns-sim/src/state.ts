/**
 * The state file (`--state-file`, `stateFile`): what the platform would remember across a restart of the
 * simulator, so a client that keeps its own state (the gateway of `npm start`, which stores the single-use
 * refresh token it was last given) keeps working against a restarted simulator.
 *
 * Kept: each OA's refresh token, valid access tokens, today's quota usage and tier, RSA key pair, and the most
 * recent messages (for /message/status and for deliveries still due). Not kept: the received log, counters,
 * faults, control-API changes to templates, events settings and rules, authorization codes, event retries.
 *
 * Writes are atomic (a temp file in the same directory, fsync, rename), so a crash leaves the old or the new
 * file, never a torn one. The file holds tokens and private keys: mode 0600.
 *
 * Durable sends go to a journal beside it (`FILE.sends`): one JSON line per accepted send, appended and
 * fsynced before the send is answered. A line costs the same however many messages the state holds, where
 * rewriting the whole file per send would grow with them. Each full write of the file takes in every send
 * journalled so far and empties the journal; reading the file replays what the journal still holds.
 */
import { closeSync, fdatasyncSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { isJsonObject } from './json-object.ts';

export const STATE_FILE_VERSION = 1;

/** Messages kept in the file, newest first when cut: enough for any demo, small enough to rewrite each second. */
export const STATE_FILE_MESSAGE_LIMIT = 100_000;

/** How long after a change the file is written (changes in between share one write). Token changes are written at once. */
const STATE_FILE_WRITE_DELAY_MS = 1000;

export interface PersistedAccessToken {
  token: string;
  expires_at: number;
}

export interface PersistedOa {
  oa_id: string;
  refresh_token: string | null;
  refresh_token_expires_at: number | null;
  access_tokens: PersistedAccessToken[];
  daily_quota: number;
  /** Vietnam day number (days since the epoch at UTC+7) that `used_today` counts. */
  quota_day: number;
  used_today: number;
  /** PKCS#8 PEM, or null when the OA has no key. */
  rsa_private_key_pem: string | null;
}

/** [msg_id, oa_id, recipient, phone or null, tracking_id, sent_time, delivery_time (0 = not yet), never_delivered] */
export type PersistedMessage = [string, string, string, string | null, string, number, number, boolean];

/** A line of the sends journal: the message, then its OA's quota day and use of that day after the send. */
export type PersistedSend = [...PersistedMessage, number, number];

export interface PersistedState {
  version: typeof STATE_FILE_VERSION;
  saved_at: number;
  oas: PersistedOa[];
  messages: PersistedMessage[];
}

export class StateFileError extends Error {
  override name = 'StateFileError';
}

function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v);
}

function checkOa(v: unknown, at: string): PersistedOa {
  const bad = (field: string): never => {
    throw new StateFileError(`${at}.${field} is missing or has the wrong type`);
  };
  if (!isJsonObject(v)) throw new StateFileError(`${at} must be an object`);
  if (typeof v.oa_id !== 'string') bad('oa_id');
  if (v.refresh_token !== null && typeof v.refresh_token !== 'string') bad('refresh_token');
  if (v.refresh_token_expires_at !== null && !isInt(v.refresh_token_expires_at)) bad('refresh_token_expires_at');
  if (!Array.isArray(v.access_tokens) || !v.access_tokens.every((t) => isJsonObject(t) && typeof t.token === 'string' && isInt(t.expires_at))) bad('access_tokens');
  if (!isInt(v.daily_quota) || v.daily_quota < 0) bad('daily_quota');
  if (!isInt(v.quota_day)) bad('quota_day');
  if (!isInt(v.used_today) || v.used_today < 0) bad('used_today');
  if (v.rsa_private_key_pem !== null && typeof v.rsa_private_key_pem !== 'string') bad('rsa_private_key_pem');
  return v as unknown as PersistedOa;
}

function isMessage(v: unknown): v is PersistedMessage {
  return (
    Array.isArray(v) &&
    v.length === 8 &&
    typeof v[0] === 'string' &&
    typeof v[1] === 'string' &&
    typeof v[2] === 'string' &&
    (v[3] === null || typeof v[3] === 'string') &&
    typeof v[4] === 'string' &&
    isInt(v[5]) &&
    isInt(v[6]) &&
    typeof v[7] === 'boolean'
  );
}

/** The journal of durable sends that belongs to the state file `file`. */
export function sendsJournalOf(file: string): string {
  return `${file}.sends`;
}

function isSend(v: unknown): v is PersistedSend {
  return Array.isArray(v) && v.length === 10 && isMessage(v.slice(0, 8)) && isInt(v[8]) && isInt(v[9]) && v[9] >= 0;
}

/**
 * The sends of the journal, oldest first. A last line cut short (a crash in the middle of its write) was never
 * answered and is left out; any other line that cannot be read is damage.
 */
function readSendsJournal(journal: string): PersistedSend[] {
  let text: string;
  try {
    text = readFileSync(journal, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new StateFileError(`sends journal ${journal} cannot be read: ${(err as Error).message}`);
  }
  const lines = text.split('\n');
  const sends: PersistedSend[] = [];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (line === '') continue;
    let send: unknown;
    try {
      send = JSON.parse(line);
    } catch {
      send = undefined;
    }
    if (isSend(send)) sends.push(send);
    else if (index < lines.length - 1) throw new StateFileError(`sends journal ${journal}: line ${index + 1} is damaged; delete the state file and the journal to start from the seed`);
  }
  return sends;
}

/** Adds the journalled sends the state does not have yet, and their OAs' quota use. */
function replaySends(state: PersistedState, sends: PersistedSend[]): PersistedState {
  const known = new Set(state.messages.map((message) => message[0]));
  const oas = new Map(state.oas.map((oa) => [oa.oa_id, oa]));
  for (const send of sends) {
    const message = send.slice(0, 8) as PersistedMessage;
    if (!known.has(message[0])) {
      known.add(message[0]);
      state.messages.push(message);
    }
    const oa = oas.get(message[1]);
    const [quotaDay, usedToday] = [send[8], send[9]];
    if (oa === undefined || quotaDay < oa.quota_day) continue;
    // Use only grows within a day, so the larger count is the later one.
    oa.used_today = quotaDay > oa.quota_day ? usedToday : Math.max(oa.used_today, usedToday);
    oa.quota_day = quotaDay;
  }
  return state;
}

/** The state in `file` (with the durable sends its journal holds), or null when there is no such file. Throws StateFileError when it cannot be used. */
export function readStateFile(file: string): PersistedState | null {
  const state = readSnapshot(file);
  return state === null ? null : replaySends(state, readSendsJournal(sendsJournalOf(file)));
}

function readSnapshot(file: string): PersistedState | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new StateFileError(`state file ${file} cannot be read: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new StateFileError(`state file ${file} is not valid JSON (${(err as Error).message}); delete it to start from the seed`);
  }
  try {
    if (!isJsonObject(raw)) throw new StateFileError('the top level must be an object');
    if (raw.version !== STATE_FILE_VERSION) throw new StateFileError(`version must be ${STATE_FILE_VERSION}, got ${JSON.stringify(raw.version)}`);
    if (!Array.isArray(raw.oas)) throw new StateFileError('oas must be an array');
    const oas = raw.oas.map((oa, i) => checkOa(oa, `oas[${i}]`));
    if (!Array.isArray(raw.messages)) throw new StateFileError('messages must be an array');
    const badMessage = raw.messages.findIndex((m) => !isMessage(m));
    if (badMessage !== -1) throw new StateFileError(`messages[${badMessage}] must be [msg_id, oa_id, recipient, phone, tracking_id, sent_time, delivery_time, never_delivered]`);
    return { version: STATE_FILE_VERSION, saved_at: isInt(raw.saved_at) ? raw.saved_at : 0, oas, messages: raw.messages as PersistedMessage[] };
  } catch (err) {
    if (err instanceof StateFileError) throw new StateFileError(`state file ${file}: ${err.message}; delete it to start from the seed`);
    throw err;
  }
}

/** Replaces `file` with `state` atomically and durably (temp file, fsync, rename). Synchronous on purpose: see StateFile.saveNow. */
function writeStateFile(file: string, state: PersistedState): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  const fd = openSync(temp, 'w', 0o600);
  try {
    writeSync(fd, JSON.stringify(state));
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw err;
  }
  closeSync(fd);
  renameSync(temp, file);
  // The rename itself must reach the disk too, or a power cut could bring the old file back.
  try {
    const dir = openSync(dirname(file), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  } catch {
    // Some file systems cannot fsync a directory; the rename is still atomic for a process crash.
  }
}

/**
 * Keeps `file` in step with the platform: `saveNow` for changes a client may already rely on (a token the
 * answer is about to carry), `saveSoon` for the rest (sends, deliveries), coalesced into one write per
 * STATE_FILE_WRITE_DELAY_MS.
 */
export class StateFile {
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly journal: string;
  /** The journal, open for appending once a durable send was stored; its length is known, so a failed line can be taken back. */
  private journalFd: number | null = null;
  private journalBytes = 0;

  constructor(
    readonly file: string,
    private readonly snapshot: () => PersistedState,
  ) {
    this.journal = sendsJournalOf(file);
  }

  /** Writes the state before returning; throws when it cannot, so the caller can refuse what it was about to answer. */
  saveNow(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    writeStateFile(this.file, this.snapshot());
    this.emptyJournal();
  }

  /**
   * Stores one durable send before it is answered: a line appended to the journal and fsynced. Throws when it
   * cannot; the line is then taken back, so a send refused with an error is never replayed after a restart.
   */
  appendSend(send: PersistedSend): void {
    const line = `${JSON.stringify(send)}\n`;
    if (this.journalFd === null) {
      const fd = openSync(this.journal, 'a', 0o600);
      this.journalBytes = fstatSync(fd).size;
      this.journalFd = fd;
    }
    const fd = this.journalFd;
    const before = this.journalBytes;
    try {
      writeSync(fd, line);
      fdatasyncSync(fd);
      this.journalBytes = before + Buffer.byteLength(line);
    } catch (err) {
      // Taken back and closed (opened again by the next send), so no part of this line can come back.
      this.journalFd = null;
      try {
        ftruncateSync(fd, before);
      } catch {
        // Nothing more can be done: after a crash the reader leaves out a line cut short at the end.
      }
      closeSync(fd);
      throw err;
    }
  }

  /** After a full write every journalled send is in the file: the journal starts again empty. */
  private emptyJournal(): void {
    try {
      if (this.journalFd !== null) ftruncateSync(this.journalFd, 0);
      else rmSync(this.journal, { force: true });
      this.journalBytes = 0;
    } catch {
      // Harmless: a replay skips the sends the file already has.
    }
  }

  saveSoon(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      try {
        this.saveNow();
      } catch (err) {
        // The next change or the final save at close tries again; the simulator keeps serving meanwhile.
        process.stderr.write(`tms-zns-sim: could not write the state file ${this.file}: ${(err as Error).message}\n`);
      }
    }, STATE_FILE_WRITE_DELAY_MS);
    this.timer.unref();
  }

  /** Writes what is pending (if anything) and stops further delayed writes. */
  flush(): void {
    if (this.timer) this.saveNow();
  }

  close(): void {
    this.flush();
    this.closed = true;
    if (this.journalFd !== null) closeSync(this.journalFd);
    this.journalFd = null;
  }
}
