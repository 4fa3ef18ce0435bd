import type { SearchAttributeType } from '@temporalio/common';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime } from '@temporalio/worker';

// Worker state changes are logged at INFO; a test run only wants warnings. Once per Jest worker.
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed in this process
}

/**
 * A throwaway Temporal dev server from the binary dev/stack built (never a download), with the
 * same dynamic config as the stack's server; `searchAttributes` registered (as dev/stack registers them).
 */
export function createLocalTemporal(
  searchAttributes: SearchAttributeKey<SearchAttributeType>[] = [],
): Promise<TestWorkflowEnvironment> {
  const path = process.env.TEMPORAL_CLI_PATH;
  if (!path) throw new Error('TEMPORAL_CLI_PATH is not set (npm test sets it from .stack/env)');
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path },
      ip: '127.0.0.1',
      searchAttributes,
      extraArgs: [
        '--dynamic-config-value',
        'matching.useNewMatcher=true',
        '--dynamic-config-value',
        'matching.priorityLevels=11',
        '--dynamic-config-value',
        'matching.numTaskqueueReadPartitions=1',
        '--dynamic-config-value',
        'matching.numTaskqueueWritePartitions=1',
        '--log-level',
        'error',
      ],
    },
  });
}
