/** What the codecs share: the metadata they write and a payload's bytes as protobuf. */
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

/** Metadata keys and values we write; the key id is how a stored payload names its key. */
export const METADATA = {
  encoding: 'encoding',
  keyId: 'encryption-key-id',
  cipher: 'encryption-cipher',
  compression: 'compression',
} as const;
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const COMPRESSED_ENCODING = 'binary/compressed';

/** A malformed DURABLE_AGENT_ENCRYPTION_KEYS / DURABLE_AGENT_COMPRESS (or codec option). */
export class CodecConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CodecConfigError';
  }
}

export const utf8 = (s: string) => Buffer.from(s, 'utf8');
export const metaString = (p: Payload, key: string): string | undefined => {
  const v = p.metadata?.[key];
  return v ? Buffer.from(v).toString('utf8') : undefined;
};
export const toBytes = (p: Payload): Uint8Array => temporal.api.common.v1.Payload.encode(p).finish();
export const fromBytes = (b: Uint8Array): Payload => temporal.api.common.v1.Payload.decode(b);
