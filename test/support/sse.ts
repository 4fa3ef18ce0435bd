export interface SseEvent {
  id?: number;
  event: string;
  data: Record<string, unknown>;
}

/** Reads an SSE response over real HTTP and collects its events. */
export class SseReader {
  readonly events: SseEvent[] = [];
  private readonly controller = new AbortController();
  private done: Promise<void> = Promise.resolve();
  status = 0;

  async open(url: string, headers: Record<string, string> = {}): Promise<this> {
    const res = await fetch(url, { headers, signal: this.controller.signal });
    this.status = res.status;
    if (!res.ok || !res.body) return this;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    this.done = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += decoder.decode(value, { stream: true });
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const fields: Record<string, string> = {};
            for (const line of block.split('\n')) {
              const i = line.indexOf(':');
              if (i > 0) fields[line.slice(0, i)] = line.slice(i + 1).trimStart();
            }
            if (fields.event)
              this.events.push({
                event: fields.event,
                data: JSON.parse(fields.data ?? '{}') as Record<string, unknown>,
                ...(fields.id ? { id: Number(fields.id) } : {}),
              });
          }
        }
      } catch {
        // aborted
      }
    })();
    return this;
  }

  async waitFor(predicate: (e: SseEvent) => boolean, timeoutMs = 20000): Promise<SseEvent> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const found = this.events.find(predicate);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`event not seen within ${timeoutMs} ms; saw ${this.events.map((e) => e.event).join(', ')}`);
  }

  async close(): Promise<void> {
    this.controller.abort();
    await this.done;
  }
}
