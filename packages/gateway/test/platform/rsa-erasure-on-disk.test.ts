/**
 * An RSA message's ciphertext is gone from the database files once the message has been handed to
 * the platform (dispatch writes rsa_phone = NULL with the sent outcome), proven by reading the
 * files themselves rather than through SQL. A second RSA message scheduled for next week, still
 * queued, is the control: its ciphertext must be found in the same bytes, so a miss means erased
 * and not a search that cannot see.
 *
 * SQLite: the gateway opens its store with secure_delete, so an erased value is overwritten with
 * zeros in its page; after a checkpoint that truncates the log, neither tms.sqlite nor
 * tms.sqlite-wal holds it. PostgreSQL never overwrites a row in place: the old version stays in
 * the heap as a dead tuple, and VACUUM frees its space without zeroing it. The bytes leave the
 * table's files only when the table is rewritten (VACUUM FULL, pg_repack): the operator's step the
 * README documents, proven here on the relation file found through pg_relation_filepath.
 */
import { readFileSync, existsSync, accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { startSimulator, type RunningSimulator } from '@tms/zns-sim';
import { sql } from 'kysely';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SENDER_ACCOUNT, DEMO_TEMPLATES } from '../../src/services/demo.ts';
import { STORE_KINDS, startTestGateway, type TestGateway } from '../harness.ts';
import { waitFor } from '../wait-for.ts';

const OTP_TEMPLATE = '250002';
const WEEK_MS = 7 * 24 * 60 * 60 * 1000;

function encryptPhone(phone: string, publicKeyPem: string): string {
  const key = forge.pki.publicKeyFromPem(publicKeyPem);
  const encrypted = key.encrypt(phone, 'RSA-OAEP', { md: forge.md.sha256.create(), mgf1: { md: forge.md.sha1.create() } });
  return forge.util.encode64(encrypted);
}

/** Every file of a relation: its first segment and any further 1 GB segments (.1, .2 …). */
function relationFiles(basePath: string): string[] {
  const files = [basePath];
  for (let segment = 1; existsSync(`${basePath}.${segment}`); segment += 1) files.push(`${basePath}.${segment}`);
  return files;
}

const FRAGMENT_CHARS = 24;

/**
 * Whether any fragment of `text` is in the files: a new row version written over part of the old
 * one leaves the rest, so the whole text is not what to look for.
 */
function filesContain(files: readonly string[], text: string): boolean {
  const contents = files.filter((file) => existsSync(file)).map((file) => readFileSync(file));
  for (let start = 0; start + FRAGMENT_CHARS <= text.length; start += FRAGMENT_CHARS / 2) {
    const fragment = Buffer.from(text.slice(start, start + FRAGMENT_CHARS), 'utf8');
    if (contents.some((content) => content.includes(fragment))) return true;
  }
  return false;
}

describe.each(STORE_KINDS)('RSA ciphertext on disk after the send (%s)', (kind) => {
  let simulator: RunningSimulator;
  let gateway: TestGateway;
  let apiKey: string;

  beforeAll(async () => {
    simulator = await startSimulator({ eventsUrl: null });
    gateway = await startTestGateway(kind, {
      worker: true,
      env: { ZNS_OAUTH_URL: simulator.url, ZNS_API_URL: simulator.url, TMS_DISPATCH_POLL_MS: '20', ZNS_TIMEOUT_MS: '2000' },
    });
    const workspaceId = (await gateway.admin('POST', '/workspaces', { name: 'rsa on disk' })).body.id as string;
    await gateway.admin('POST', `/workspaces/${workspaceId}/wallet/top-ups`, { amount: 1_000_000 });
    const { oa_id: oaId, ...account } = DEMO_SENDER_ACCOUNT;
    expect((await gateway.admin('PUT', `/workspaces/${workspaceId}/sender-accounts/${oaId}?verify=false`, account)).status).toBe(200);
    for (const { template_id: templateId, ...template } of DEMO_TEMPLATES) {
      expect((await gateway.admin('PUT', `/workspaces/${workspaceId}/templates/${templateId}?verify=false`, { ...template, oa_id: oaId })).status).toBe(200);
    }
    apiKey = (await gateway.admin('POST', `/workspaces/${workspaceId}/api-keys`, { scopes: ['messages:send', 'messages:read'] })).body.key as string;
  });
  afterAll(async () => {
    await gateway?.close();
    await simulator?.close();
  });

  /** One RSA message; `sendAt` keeps it queued until then. */
  async function sendRsa(phone: string, sendAt?: string): Promise<{ id: string; ciphertext: string }> {
    const ciphertext = encryptPhone(phone, simulator.control.rsaPublicKey(DEMO_SENDER_ACCOUNT.oa_id)!.pem);
    const response = await gateway.request('POST', '/api/v1/messages/rsa', {
      key: apiKey,
      body: { template_id: OTP_TEMPLATE, recipients: [{ rsa_phone: ciphertext, template_data: { otp: '246810' } }], ...(sendAt === undefined ? {} : { send_at: sendAt }) },
    });
    expect(response.status, response.text).toBe(202);
    return { id: response.body.results[0].msg_id as string, ciphertext };
  }

  it('leaves no trace of the ciphertext in the database files', async (context) => {
    const waiting = await sendRsa('84912000201', new Date(Date.now() + WEEK_MS).toISOString());
    const sent = await sendRsa('84912000202');
    const record = await waitFor(
      async () => (await gateway.request('GET', `/api/v1/messages/${sent.id}`, { key: apiKey })).body,
      (message) => message.status === 'sent',
      'the RSA message to be handed to the platform',
    );
    expect(record).toMatchObject({ phone: null, carrier: null });
    expect(simulator.control.received({ tracking_id: sent.id })).toHaveLength(1);
    const db = gateway.runtime.store.db;
    const rows = await db.selectFrom('messages').select(['id', 'rsa_phone']).where('id', 'in', [waiting.id, sent.id]).execute();
    expect(Object.fromEntries(rows.map((row) => [row.id, row.rsa_phone]))).toEqual({ [waiting.id]: waiting.ciphertext, [sent.id]: null });

    if (kind === 'sqlite') {
      await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
      const file = join(gateway.config.dataDir, 'tms.sqlite');
      const files = [file, `${file}-wal`];
      expect(filesContain(files, waiting.ciphertext), 'the control: a queued ciphertext is found in the files').toBe(true);
      expect(filesContain(files, sent.ciphertext), 'the sent message ciphertext is still in the files').toBe(false);
      return;
    }

    const dataDirectory = (await sql<{ data_directory: string }>`SHOW data_directory`.execute(db)).rows[0]!.data_directory;
    try {
      accessSync(dataDirectory, constants.R_OK);
    } catch {
      // CI runs as the machine's root beside its PostgreSQL, so there the proof must not be skipped.
      if (process.env.CI === 'true') throw new Error(`CI needs to read PostgreSQL's data directory ${dataDirectory} to check the heap files`);
      context.skip(`PostgreSQL's data directory ${dataDirectory} cannot be read from here`);
    }
    const heapFiles = async () => {
      await sql`CHECKPOINT`.execute(db);
      const path = (await sql<{ path: string }>`SELECT pg_relation_filepath('messages') AS path`.execute(db)).rows[0]!.path;
      return relationFiles(join(dataDirectory, path));
    };
    // VACUUM FULL copies a dead row version that a transaction still open may see, so wait until
    // every transaction in this database began after the erase; on a loaded machine the worker's
    // may still be open.
    const afterErase = (await sql<{ xid: string }>`SELECT xid(pg_current_xact_id())::text AS xid`.execute(db)).rows[0]!.xid;
    await waitFor(
      async () =>
        (
          await sql<{ pid: number; query: string }>`
            SELECT pid, query FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
              AND (age(backend_xid) > age(${afterErase}::xid) OR age(backend_xmin) > age(${afterErase}::xid))`.execute(db)
        ).rows,
      (olderTransactions) => olderTransactions.length === 0,
      'the transactions open during the erase to end',
    );
    // An UPDATE leaves the old row version in the heap; VACUUM would free its space but not zero it.
    // Rewriting the table drops every dead version with the old file.
    await sql`VACUUM FULL messages`.execute(db);
    const files = await heapFiles();
    expect(filesContain(files, waiting.ciphertext), 'the control: a queued ciphertext is found in the heap').toBe(true);
    expect(filesContain(files, sent.ciphertext), 'the sent message ciphertext is still in the heap').toBe(false);
  }, 60_000);
});
