/** The API process bench/submit measures: the real server with crawlSite submissions accepted. */
import { startServer } from '../api/server';
import { loadConfig } from '../lib/config';

startServer(loadConfig(), ['crawlSite']).then(
  ({ close }) =>
    process.once('SIGTERM', () => {
      void close().then(() => process.exit(0));
    }),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
