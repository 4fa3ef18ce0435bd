/**
 * Operator commands (a composition root: it parses the database config itself).
 *   migrate | rollback
 *   client:create --name <name>        prints exactly one JSON object {client_id, api_key, api_secret}
 *   client:deactivate --client-id <id> | client:activate --client-id <id>
 *   integrations:reseal                 re-seals LLM credentials, mailbox passwords and webhook secrets (sealing those stored in plaintext) with the current INTEGRATIONS_ENCRYPTION_KEY (README "Key rotation")
 * Run through npm: `npm run --silent client:create -- --name acme`.
 */
import { parseArgs } from 'node:util';
import { loadDbConfig, loadIntegrationKeys } from '../lib/config';
import { CredentialCipher } from '../lib/llm/cipher';
import { createDb, migrateLatest } from '.';
import { ClientRepository } from './repositories/clients';
import { IntegrationRepository } from './repositories/integrations';
import { MailRepository } from './repositories/mail';
import { WebhookRepository } from './repositories/webhooks';

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: { name: { type: 'string' }, 'client-id': { type: 'string' } },
    strict: true,
  });
  const config = loadDbConfig();
  const db = createDb(config);
  try {
    switch (command) {
      case 'migrate': {
        const applied = await migrateLatest(db, config.DATABASE_SCHEMA);
        process.stderr.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
        return 0;
      }
      case 'rollback': {
        const [, undone] = (await db.migrate.rollback()) as [number, string[]];
        process.stderr.write(`rolled back: ${undone.join(', ') || 'nothing'}\n`);
        return 0;
      }
      case 'client:create': {
        const name = values.name?.trim();
        if (!name) return usage('client:create needs --name <name>');
        await migrateLatest(db, config.DATABASE_SCHEMA);
        const creds = await new ClientRepository(db).create(name);
        process.stdout.write(`${JSON.stringify(creds)}\n`);
        return 0;
      }
      case 'client:deactivate':
      case 'client:activate': {
        const id = values['client-id'];
        if (!id) return usage(`${command} needs --client-id <id>`);
        const found = await new ClientRepository(db).setActive(id, command === 'client:activate');
        if (!found) {
          process.stderr.write(`no client with id ${id}\n`);
          return 1;
        }
        process.stderr.write(`client ${id} ${command === 'client:activate' ? 'activated' : 'deactivated'}\n`);
        return 0;
      }
      case 'integrations:reseal': {
        const keys = loadIntegrationKeys();
        const cipher = new CredentialCipher(keys.INTEGRATIONS_ENCRYPTION_KEY, keys.INTEGRATIONS_PREVIOUS_KEYS);
        const count = await new IntegrationRepository(db, cipher, config.DATABASE_SCHEMA).reseal();
        const passwords = await new MailRepository(db, cipher).reseal();
        const secrets = await new WebhookRepository(db, config.DATABASE_SCHEMA, cipher).reseal();
        process.stderr.write(`re-sealed ${count} credential(s), ${passwords} mailbox password(s) and ${secrets} webhook secret(s) with key ${cipher.keyId}\n`);
        return 0;
      }
      default:
        return usage(`unknown command ${command ?? '(none)'}`);
    }
  } finally {
    await db.destroy();
  }
}

function usage(message: string): number {
  process.stderr.write(`${message}\nusage: db/cli.ts migrate|rollback|client:create --name N|client:deactivate --client-id ID|client:activate --client-id ID|integrations:reseal\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
