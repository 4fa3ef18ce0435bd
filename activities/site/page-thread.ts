/**
 * The worker thread's side of activities/site/page-threads.ts: processPage for one page per task.
 * Only data crosses: the HTML, its URL and the options in, the page's facts out.
 */
import { serveTasks } from '../../lib/threads';
import { processPage, type PageFacts, type PageOptions } from './page';

export interface PageTask {
  html: string;
  url: string;
  options: PageOptions;
}

serveTasks<PageTask, PageFacts>(({ html, url, options }) => processPage(html, url, options));
