/**
 * The worker thread's side of lib/media/svg-worker.ts: sanitises one SVG per message. Only data
 * crosses: the text in, the sanitised text and notes (or the refusal's message) out.
 */
import { parentPort } from 'node:worker_threads';
import { InvalidSvgError, sanitizeSvg } from './svg';

export type SvgRequest = { id: number; text: string };
export type SvgReply =
  { id: number; svg: string; removed: string[] } | { id: number; invalid: string } | { id: number; failed: string };

// Posted once the modules (jsdom among them) are loaded: the deadline of the first document starts then.
parentPort?.postMessage({ ready: true });

parentPort?.on('message', ({ id, text }: SvgRequest) => {
  let reply: SvgReply;
  try {
    reply = { id, ...sanitizeSvg(text) };
  } catch (err) {
    reply =
      err instanceof InvalidSvgError
        ? { id, invalid: err.message }
        : { id, failed: err instanceof Error ? err.message : String(err) };
  }
  parentPort?.postMessage(reply);
});
