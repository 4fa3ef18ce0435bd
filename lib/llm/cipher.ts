// The cipher moved to lib/cipher.ts when mailbox passwords started using it too; this keeps the LLM imports stable.
export { CredentialCipher } from '../cipher';
export type { SealContext } from '../cipher';
