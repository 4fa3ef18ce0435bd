import { ApplicationFailure } from '@temporalio/activity';
import { MailRepository } from '../../db/repositories/mail';
import { CredentialCipher } from '../../lib/cipher';
import type { ActivityDeps } from '../deps';

/** The mail repository, or a permanent failure naming the missing key (passwords cannot be opened without it). */
export function mailRepository(deps: ActivityDeps): () => MailRepository {
  let repo: MailRepository | undefined;
  return () => {
    if (repo) return repo;
    const cipher = CredentialCipher.fromConfig(deps.config);
    if (!cipher)
      throw ApplicationFailure.nonRetryable(
        'INTEGRATIONS_ENCRYPTION_KEY is not set on the worker: mailbox passwords cannot be opened',
        'MailNotConfigured',
      );
    repo = new MailRepository(deps.db, cipher);
    return repo;
  };
}
