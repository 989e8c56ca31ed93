/** Load generation with autocannon: request bodies, response checks and the numbers of one run. */
import autocannon, { type RequestData, type RequestSpec, type Result } from 'autocannon';
import { phoneOf } from './phones.ts';

export const BATCH_SIZE = 500;

/** What came back during one autocannon run, checked response by response. */
export interface Tally {
  /** 202 answers whose body is what a full acceptance looks like. */
  good: number;
  /** Everything else that was answered: other statuses, or a 202 that did not accept every recipient. */
  bad: number;
  statuses: Record<string, number>;
  /** A few examples of bad answers, for the report. */
  samples: string[];
}

export const newTally = (): Tally => ({ good: 0, bad: 0, statuses: {}, samples: [] });

/** Every msg_id a 202 answered with, over all runs against one gateway (warm-up included). */
export type AcceptedIds = string[];

export interface LoadShape {
  url: string;
  path: string;
  connections: number;
  headers: Record<string, string>;
  /** Returns the body of the next request. */
  nextBody(): string | Buffer;
  /** Checks one answer; returns the accepted msg_ids, or an error text. */
  check(status: number, body: string): string[] | string;
}

export interface LoadRun {
  result: Result;
  tally: Tally;
  seconds: number;
  /** Good answers per second. */
  requestsPerSecond: number;
}

function recordBad(tally: Tally, status: number, text: string): void {
  tally.bad += 1;
  if (tally.samples.length < 5) tally.samples.push(`${status}: ${text.slice(0, 300)}`);
}

/** Runs autocannon for `seconds`, checking every answer and collecting the accepted ids. */
export async function runLoad(shape: LoadShape, seconds: number, ids: AcceptedIds | null): Promise<LoadRun> {
  const tally = newTally();
  const request: RequestSpec = {
    method: 'POST',
    path: shape.path,
    headers: shape.headers,
    setupRequest: (data: RequestData) => ({ ...data, body: shape.nextBody() }),
    onResponse: (status, body) => {
      tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
      const checked = shape.check(status, body);
      if (typeof checked === 'string') {
        recordBad(tally, status, checked);
        return;
      }
      tally.good += 1;
      if (ids) for (const id of checked) ids.push(id);
    },
  };
  const result = await autocannon({ url: shape.url, connections: shape.connections, duration: seconds, timeout: 10, requests: [request] });
  return { result, tally, seconds: result.duration, requestsPerSecond: tally.good / result.duration };
}

/** Valid template_data for the seeded template: name 1..30 and code 1..10 characters. */
const templateData = (n: number) => ({ name: 'Nguyễn Văn A', code: `C${n % 1_000_000_000}` });

/** Single sends: every request a new phone number and new template_data. */
export function singleSendShape(input: { url: string; apiKey: string | null; templateId: string; connections: number; expectMsgId: boolean }): LoadShape {
  let counter = 0;
  return {
    url: input.url,
    path: '/api/v1/messages/send',
    connections: input.connections,
    headers: { 'content-type': 'application/json', ...(input.apiKey ? { authorization: `Bearer ${input.apiKey}` } : {}) },
    nextBody: () => {
      counter += 1;
      return JSON.stringify({ template_id: input.templateId, phone: phoneOf(counter), template_data: templateData(counter) });
    },
    check: (status, text) => {
      if (status !== 202) return text;
      if (!input.expectMsgId) return [];
      try {
        const body = JSON.parse(text) as { msg_id?: unknown; status?: unknown };
        return typeof body.msg_id === 'string' && body.status === 'queued' ? [body.msg_id] : `202 without msg_id: ${text}`;
      } catch {
        return `202 with a body that is not JSON: ${text}`;
      }
    },
  };
}

/** 500-recipient batches, from a pool of prepared bodies (distinct phones) used in turn. */
export function batchShape(input: { url: string; apiKey: string; templateId: string; connections: number; pool: number }): LoadShape {
  const bodies: Buffer[] = [];
  for (let b = 0; b < input.pool; b += 1) {
    const recipients = Array.from({ length: BATCH_SIZE }, (_, r) => {
      const n = b * BATCH_SIZE + r;
      return { phone: phoneOf(n + 50_000_000), template_data: templateData(n) };
    });
    bodies.push(Buffer.from(JSON.stringify({ template_id: input.templateId, recipients })));
  }
  let counter = 0;
  return {
    url: input.url,
    path: '/api/v1/messages/batch',
    connections: input.connections,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${input.apiKey}` },
    nextBody: () => bodies[counter++ % bodies.length]!,
    check: (status, text) => {
      if (status !== 202) return text;
      try {
        const body = JSON.parse(text) as { accepted?: unknown; results?: { msg_id?: string; status?: string }[] };
        if (body.accepted !== BATCH_SIZE || !Array.isArray(body.results) || body.results.length !== BATCH_SIZE) {
          return `202 with accepted ${String(body.accepted)} of ${BATCH_SIZE}: ${text}`;
        }
        const ids: string[] = [];
        for (const item of body.results) {
          if (item.status !== 'queued' || typeof item.msg_id !== 'string') return `202 with a recipient not queued: ${JSON.stringify(item)}`;
          ids.push(item.msg_id);
        }
        return ids;
      } catch {
        return `202 with a body that is not JSON: ${text.slice(0, 200)}`;
      }
    },
  };
}
