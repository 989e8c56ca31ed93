/** Reads one console API resource for a page, again when its path or query changes or on reload(). */
import { useCallback, useEffect, useState } from 'react';
import { ConsoleApiError, request, type RequestOptions } from './api.ts';

export interface Resource<T> {
  /** The latest answer; while a new read runs, the previous one (so paging does not blank the page). */
  data: T | undefined;
  error: ConsoleApiError | null;
  loading: boolean;
  reload(): void;
  /** Replaces the data after a change whose answer is the new state. */
  setData(data: T): void;
}

export function toApiError(error: unknown): ConsoleApiError {
  if (error instanceof ConsoleApiError) return error;
  return new ConsoleApiError(0, 'client_error', error instanceof Error ? error.message : String(error));
}

interface Settled<T> {
  /** Which read this is the answer to. */
  key: string | null;
  data: T | undefined;
  error: ConsoleApiError | null;
}

/** path null: nothing to read (yet). */
export function useApi<T>(path: string | null, query?: RequestOptions['query']): Resource<T> {
  const [generation, setGeneration] = useState(0);
  const queryKey = JSON.stringify(query ?? {});
  const readKey = path === null ? null : `${generation} ${path} ${queryKey}`;
  const [settled, setSettled] = useState<Settled<T>>({ key: null, data: undefined, error: null });

  useEffect(() => {
    if (path === null) return;
    let active = true;
    request<T>('GET', path, { query: JSON.parse(queryKey) as RequestOptions['query'] })
      .then((body) => {
        if (active) setSettled({ key: readKey, data: body, error: null });
      })
      .catch((caught: unknown) => {
        if (active) setSettled((previous) => ({ key: readKey, data: previous.data, error: toApiError(caught) }));
      });
    return () => {
      active = false;
    };
  }, [path, queryKey, readKey]);

  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  const setData = useCallback((data: T) => setSettled((previous) => ({ ...previous, data })), []);
  return {
    data: settled.data,
    error: settled.key === readKey ? settled.error : null,
    loading: readKey !== null && settled.key !== readKey,
    reload,
    setData,
  };
}
