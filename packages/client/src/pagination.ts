/**
 * Walking GET /api/v1/messages page by page. The list is newest first with offset paging, so a
 * message created while we walk pushes older ones one place further: the next page would repeat
 * the last one we saw. We skip ids already yielded from the recent pages, so every record comes
 * once. (A message that leaves the filter while we walk, e.g. a `queued` one being sent, can move
 * the other way and be skipped; filter on terminal states such as `failed` or pin `to` for a
 * complete walk.)
 */
import type { CallOptions } from './transport.ts';
import type { ListMessagesQuery, MessageList, MessageRecord } from './types.ts';

export const MAX_PAGE_SIZE = 200;

export interface IterateOptions extends CallOptions {
  /** Records per request, 1..200 (default 200: fewest round trips). */
  pageSize?: number;
}

export type ListPage = (query: ListMessagesQuery, options: CallOptions) => Promise<MessageList>;

export async function* iterateMessages(listPage: ListPage, query: ListMessagesQuery, options: IterateOptions = {}): AsyncGenerator<MessageRecord, void, undefined> {
  const { pageSize = MAX_PAGE_SIZE, ...callOptions } = options;
  const limit = Math.min(MAX_PAGE_SIZE, Math.max(1, Math.floor(pageSize)));
  let offset = query.offset ?? 0;
  let previousIds = new Set<string>();
  for (;;) {
    const page = await listPage({ ...query, limit, offset }, callOptions);
    const pageIds = new Set<string>();
    for (const message of page.messages) {
      pageIds.add(message.msg_id);
      if (previousIds.has(message.msg_id)) continue;
      yield message;
    }
    // `has_more` is docs/api.md's; a page shorter than asked for ends the walk on any server.
    if (!page.has_more || page.messages.length < limit) return;
    offset += page.messages.length;
    previousIds = pageIds;
  }
}
