/**
 * The payload codec (ARCHITECTURE.md#payload-codec), used by workers and clients alike: every
 * payload Temporal stores — workflow input, activity results, query answers, signals, the state
 * carried through continue-as-new — is AES-256-GCM encrypted (and optionally compressed first)
 * before it leaves the process, so the server and its database only ever hold ciphertext.
 * Configured from the environment:
 *
 *   DURABLE_AGENT_ENCRYPTION_KEYS=id:base64key[,id:base64key…]   the first key encrypts; the rest
 *                                                                 still decrypt (rotation)
 *   DURABLE_AGENT_COMPRESS=1                                     compress payloads over 1 KiB
 *
 * Both sides of a deployment (every worker and every client) need the same keys. See
 * docs/ENCRYPTION.md for key generation and rotation.
 */
import type { PayloadCodec } from '@temporalio/common';
import { CompressionCodec, type CompressionOptions } from './compression';
import { EncryptionCodec, ENCRYPTION_KEYS_ENV, parseEncryptionKeys, type EncryptionKeys } from './encryption';
import { CodecConfigError } from './payload-bytes';
import { ENCRYPTING_FAILURE_CONVERTER_MARK } from './failure-converter';

export * from './compression';
export * from './encryption';
export { CodecConfigError, COMPRESSED_ENCODING, ENCRYPTED_ENCODING } from './payload-bytes';

const COMPRESS_ENV = 'DURABLE_AGENT_COMPRESS';

export interface CodecOptions {
  /** `id:base64key,…` (as the env variable) or parsed keys; absent → no encryption. */
  keys?: string | EncryptionKeys;
  /** true or options → compress payloads over the threshold before encrypting. */
  compress?: boolean | CompressionOptions;
}

/**
 * The codec chain, compression first (encrypted bytes do not compress); undefined when neither is
 * on. With encryption on and compression off, payloads stored compressed earlier still inflate.
 */
export function createPayloadCodecs(opts: CodecOptions): PayloadCodec[] | undefined {
  const codecs: PayloadCodec[] = [];
  if (opts.compress) codecs.push(new CompressionCodec(opts.compress === true ? {} : opts.compress));
  else if (opts.keys) codecs.push(new CompressionCodec({ decodeOnly: true }));
  if (opts.keys)
    codecs.push(new EncryptionCodec(typeof opts.keys === 'string' ? parseEncryptionKeys(opts.keys, 'encryption keys') : opts.keys));
  return codecs.length > 0 ? codecs : undefined;
}

function parseFlag(name: string, value: string | undefined): boolean {
  const v = (value ?? '').trim().toLowerCase();
  if (v === '' || v === '0' || v === 'false' || v === 'no' || v === 'off') return false;
  if (v === '1' || v === 'true' || v === 'yes' || v === 'on') return true;
  throw new CodecConfigError(`${name}: expected 1 or 0, got '${value}'`);
}

/**
 * The codecs configured by DURABLE_AGENT_ENCRYPTION_KEYS / DURABLE_AGENT_COMPRESS, or undefined
 * when neither is set. Throws CodecConfigError on a malformed value — call it at start-up.
 */
export function codecFromEnv(env: Record<string, string | undefined> = process.env): PayloadCodec[] | undefined {
  const keys = env[ENCRYPTION_KEYS_ENV]?.trim();
  const compress = parseFlag(COMPRESS_ENV, env[COMPRESS_ENV]);
  return createPayloadCodecs({ ...(keys ? { keys: parseEncryptionKeys(keys) } : {}), compress });
}

/** Whether a codec chain encrypts (so failure messages should be moved into an encrypted payload too). */
export function encrypts(codecs: PayloadCodec[] | undefined): boolean {
  return codecs?.some((c) => c instanceof EncryptionCodec) ?? false;
}

/**
 * The module given as `failureConverterPath` when payloads are encrypted: to activity workers, and
 * to `bundleWorkflowCode` so that failures workflows raise are encrypted as well.
 */
export const ENCRYPTING_FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

/** Whether a workflow bundle was built with `failureConverterPath: ENCRYPTING_FAILURE_CONVERTER_PATH`. */
export function bundleEncryptsFailures(code: string): boolean {
  return code.includes(ENCRYPTING_FAILURE_CONVERTER_MARK);
}

/** One line for a start-up log: what happens to payloads (never key material). */
export function describeCodecs(codecs: PayloadCodec[] | undefined): string {
  const parts: string[] = [];
  for (const c of codecs ?? []) {
    if (c instanceof CompressionCodec && c.thresholdBytes === Infinity) continue;
    if (c instanceof CompressionCodec) parts.push(`compressed over ${c.thresholdBytes} bytes (${c.algorithm})`);
    else if (c instanceof EncryptionCodec)
      parts.push(
        `encrypted with key '${c.currentKeyId}'${c.oldKeyIds.length ? ` (also decrypting ${c.oldKeyIds.map((id) => `'${id}'`).join(', ')})` : ''}`,
      );
    else parts.push('encoded by a custom codec');
  }
  return parts.length ? `payloads ${parts.join(', ')}` : 'payloads not encrypted';
}
