/**
 * The worker thread's side of lib/media/svg-worker.ts: sanitises one SVG per task. Only data
 * crosses: the text in, the sanitised text and notes (or the refusal's message) out.
 */
import { serveTasks } from '../threads';
import { InvalidSvgError, sanitizeSvg } from './svg';

export type SvgReply = { svg: string; removed: string[] } | { invalid: string };

serveTasks<string, SvgReply>((text) => {
  try {
    return sanitizeSvg(text);
  } catch (err) {
    if (err instanceof InvalidSvgError) return { invalid: err.message };
    throw err;
  }
});
