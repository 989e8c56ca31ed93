/**
 * At most one backup at a time in a process: `tms admin backup` and GET /admin/v1/backup alike.
 * Each copy takes as much disk as the database; two at once could fill the disk the live database
 * is on, and would only slow each other down.
 */

/** The slot, held by one backup until it releases it. */
export interface BackupTurn {
  /** Aborts when the process is closing: the backup stops copying. */
  readonly signal: AbortSignal;
  /** Frees the slot for the next backup; only the first call counts. */
  release(): void;
}

export class BackupSlot {
  private holder: AbortController | null = null;

  /** The slot, or null while another backup holds it. */
  take(): BackupTurn | null {
    if (this.holder) return null;
    const holder = new AbortController();
    this.holder = holder;
    return {
      signal: holder.signal,
      release: () => {
        if (this.holder === holder) this.holder = null;
      },
    };
  }

  /** Stops the backup that holds the slot, if one does: the process is closing. */
  abandon(): void {
    this.holder?.abort();
  }
}
