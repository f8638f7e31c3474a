/**
 * The payload codec (DESIGN D9): every payload Temporal stores — workflow input, activity results,
 * query answers, signals, the state carried through continue-as-new — is AES-256-GCM encrypted
 * (and optionally compressed first) by the workers and clients, so the server and its database
 * only ever hold ciphertext. Configured from the environment:
 *
 *   DURABLE_AGENT_ENCRYPTION_KEYS=id:base64key[,id:base64key…]   the first key encrypts; the rest
 *                                                                 still decrypt (rotation)
 *   DURABLE_AGENT_COMPRESS=1                                     compress payloads over 1 KiB
 *
 * Both sides of a deployment (every worker and every client) need the same keys. See
 * docs/ENCRYPTION.md for key generation and rotation.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants as zlibConstants, deflateRaw, inflateRaw } from 'node:zlib';
import { DefaultFailureConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

export const ENCRYPTION_KEYS_ENV = 'DURABLE_AGENT_ENCRYPTION_KEYS';
export const COMPRESS_ENV = 'DURABLE_AGENT_COMPRESS';

/** Metadata keys and values we write; the key id is how a stored payload names its key. */
export const METADATA = {
  encoding: 'encoding',
  keyId: 'encryption-key-id',
  cipher: 'encryption-cipher',
  compression: 'compression',
} as const;
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const COMPRESSED_ENCODING = 'binary/compressed';
const CIPHER = 'AES-256-GCM';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
/** Payloads at or below this size are not worth compressing (the deflate/brotli framing eats the gain). */
export const DEFAULT_COMPRESSION_THRESHOLD_BYTES = 1024;

/** A malformed DURABLE_AGENT_ENCRYPTION_KEYS / DURABLE_AGENT_COMPRESS (or codec option). */
export class CodecConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CodecConfigError';
  }
}

export interface EncryptionKey {
  id: string;
  /** 32 bytes. */
  key: Uint8Array;
}

export interface EncryptionKeys {
  /** Encrypts every new payload. */
  current: EncryptionKey;
  /** Still accepted for decrypting payloads written before a rotation. */
  old?: EncryptionKey[];
}

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * Parse `id:base64key[,id:base64key…]`; the first entry is the current key. An entry is named by
 * its position and id in errors, never by its key material.
 */
export function parseEncryptionKeys(value: string, source = ENCRYPTION_KEYS_ENV): EncryptionKeys {
  const entries = value.split(',').map((e) => e.trim());
  const keys: EncryptionKey[] = [];
  entries.forEach((entry, i) => {
    const where = `${source}: entry ${i + 1}`;
    if (entry === '') throw new CodecConfigError(`${where} is empty (expected id:base64key, entries separated by commas)`);
    const colon = entry.indexOf(':');
    if (colon < 0) throw new CodecConfigError(`${where} has no 'id:' prefix (expected id:base64key)`);
    const id = entry.slice(0, colon).trim();
    const b64 = entry.slice(colon + 1).trim();
    if (!KEY_ID.test(id)) throw new CodecConfigError(`${where} ('${id}'): the key id must be 1-64 characters of A-Z a-z 0-9 . _ -`);
    if (!BASE64.test(b64)) throw new CodecConfigError(`${where} ('${id}'): the key is not base64 (generate one with: openssl rand -base64 32)`);
    const key = Buffer.from(b64, 'base64');
    if (key.length !== KEY_BYTES) throw new CodecConfigError(`${where} ('${id}'): the key is ${key.length} bytes, expected ${KEY_BYTES} (openssl rand -base64 32)`);
    if (keys.some((k) => k.id === id)) throw new CodecConfigError(`${where} ('${id}'): the key id appears twice`);
    keys.push({ id, key });
  });
  return { current: keys[0]!, old: keys.slice(1) };
}

const utf8 = (s: string) => Buffer.from(s, 'utf8');
const metaString = (p: Payload, key: string): string | undefined => {
  const v = p.metadata?.[key];
  return v ? Buffer.from(v).toString('utf8') : undefined;
};
const toBytes = (p: Payload): Uint8Array => temporal.api.common.v1.Payload.encode(p).finish();
const fromBytes = (b: Uint8Array): Payload => temporal.api.common.v1.Payload.decode(b);

/**
 * AES-256-GCM over the whole encoded payload (metadata included, so the original encoding is
 * hidden too). Layout of `data`: 12-byte random IV ‖ ciphertext ‖ 16-byte tag. The key id is the
 * additional authenticated data, so a payload relabelled with another id fails to decrypt.
 */
export class EncryptionCodec implements PayloadCodec {
  private readonly current: EncryptionKey;
  private readonly byId: Map<string, EncryptionKey>;

  constructor(keys: EncryptionKeys) {
    for (const k of [keys.current, ...(keys.old ?? [])]) {
      if (!KEY_ID.test(k.id)) throw new CodecConfigError(`encryption key id '${k.id}': must be 1-64 characters of A-Z a-z 0-9 . _ -`);
      if (k.key.length !== KEY_BYTES) throw new CodecConfigError(`encryption key '${k.id}': ${k.key.length} bytes, expected ${KEY_BYTES}`);
    }
    this.current = keys.current;
    this.byId = new Map([...(keys.old ?? []), keys.current].map((k) => [k.id, k]));
  }

  get currentKeyId(): string {
    return this.current.id;
  }

  get oldKeyIds(): string[] {
    return [...this.byId.keys()].filter((id) => id !== this.current.id);
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.encrypt(p));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.decrypt(p));
  }

  private encrypt(p: Payload): Payload {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(utf8(this.current.id));
    const body = Buffer.concat([cipher.update(toBytes(p)), cipher.final()]);
    return {
      metadata: {
        [METADATA.encoding]: utf8(ENCRYPTED_ENCODING),
        [METADATA.cipher]: utf8(CIPHER),
        [METADATA.keyId]: utf8(this.current.id),
      },
      data: Buffer.concat([iv, body, cipher.getAuthTag()]),
    };
  }

  private decrypt(p: Payload): Payload {
    const keyId = metaString(p, METADATA.keyId);
    // Written before encryption was turned on (or by a codec-less client): readable as is.
    if (keyId === undefined) return p;
    const k = this.byId.get(keyId);
    if (!k) {
      const known = [...this.byId.keys()].map((id) => `'${id}'`).join(', ');
      throw new Error(
        `payload encrypted with key id '${keyId}', which is not configured (known: ${known}); add it to ${ENCRYPTION_KEYS_ENV} after the current key`,
      );
    }
    const data = p.data ?? new Uint8Array();
    if (data.length < IV_BYTES + TAG_BYTES) throw new Error(`payload encrypted with key id '${keyId}' is truncated (${data.length} bytes)`);
    const decipher = createDecipheriv('aes-256-gcm', k.key, data.subarray(0, IV_BYTES));
    decipher.setAAD(utf8(keyId));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new Error(`payload encrypted with key id '${keyId}' failed authentication: it was altered, or the key named '${keyId}' is not the key it was encrypted with`);
    }
    return fromBytes(plain);
  }
}

export type CompressionAlgorithm = 'deflate-raw' | 'brotli';

export interface CompressionOptions {
  /** Default brotli at quality 5: ~deflate's speed with a clearly better ratio on code and logs (bench/codec.ts). */
  algorithm?: CompressionAlgorithm;
  /** Only payloads larger than this are compressed (default 1 KiB). */
  thresholdBytes?: number;
  /** Never compress; only inflate payloads stored compressed (compression turned off later). */
  decodeOnly?: boolean;
}

const BROTLI_QUALITY = 5;
/** Far above any payload the server accepts (2 MiB by default); stops a crafted payload from inflating without bound. */
const MAX_INFLATED_BYTES = 256 * 2 ** 20;
const compressors: Record<CompressionAlgorithm, { compress(b: Uint8Array): Promise<Buffer>; decompress(b: Uint8Array): Promise<Buffer> }> = {
  'deflate-raw': {
    compress: promisify(deflateRaw),
    decompress: (b) => promisify(inflateRaw)(b, { maxOutputLength: MAX_INFLATED_BYTES }),
  },
  brotli: {
    compress: (b) =>
      promisify(brotliCompress)(b, {
        params: { [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: b.length },
      }),
    decompress: (b) => promisify(brotliDecompress)(b, { maxOutputLength: MAX_INFLATED_BYTES }),
  },
};

/**
 * Compresses the whole encoded payload when it is over the threshold and the result is smaller;
 * anything else passes through untouched. Runs on libuv's thread pool (async zlib), so a 2 MiB
 * prompt page does not stall the worker's event loop. Decoding accepts either algorithm.
 */
export class CompressionCodec implements PayloadCodec {
  readonly algorithm: CompressionAlgorithm;
  readonly thresholdBytes: number;

  constructor(opts: CompressionOptions = {}) {
    this.algorithm = opts.algorithm ?? 'brotli';
    if (!(this.algorithm in compressors)) throw new CodecConfigError(`compression algorithm '${String(this.algorithm)}': expected deflate-raw or brotli`);
    this.thresholdBytes = opts.decodeOnly ? Infinity : (opts.thresholdBytes ?? DEFAULT_COMPRESSION_THRESHOLD_BYTES);
  }

  encode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((p) => this.compress(p)));
  }

  decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((p) => this.decompress(p)));
  }

  private async compress(p: Payload): Promise<Payload> {
    if ((p.data?.length ?? 0) <= this.thresholdBytes) return p;
    const raw = toBytes(p);
    const packed = await compressors[this.algorithm].compress(raw);
    if (packed.length >= raw.length) return p;
    return { metadata: { [METADATA.encoding]: utf8(COMPRESSED_ENCODING), [METADATA.compression]: utf8(this.algorithm) }, data: packed };
  }

  private async decompress(p: Payload): Promise<Payload> {
    const algorithm = metaString(p, METADATA.compression);
    if (algorithm === undefined || metaString(p, METADATA.encoding) !== COMPRESSED_ENCODING) return p;
    const c = compressors[algorithm as CompressionAlgorithm];
    if (!c) throw new Error(`payload compressed with unknown algorithm '${algorithm}'`);
    return fromBytes(await c.decompress(p.data ?? new Uint8Array()));
  }
}

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
  if (opts.keys) codecs.push(new EncryptionCodec(typeof opts.keys === 'string' ? parseEncryptionKeys(opts.keys, 'encryption keys') : opts.keys));
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
 * Loaded by Temporal through `dataConverter.failureConverterPath` (the export must be named
 * `failureConverter`): moves an error's message and stack trace into an encoded payload, which the
 * codec then encrypts. Decoding needs nothing special — every failure converter reads them back.
 * Never give this path to a workflow bundle: this file uses node:crypto.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
export const ENCRYPTING_FAILURE_CONVERTER_PATH = __filename;

/** One line for a start-up log: what happens to payloads (never key material). */
export function describeCodecs(codecs: PayloadCodec[] | undefined): string {
  const parts: string[] = [];
  for (const c of codecs ?? []) {
    if (c instanceof CompressionCodec && c.thresholdBytes === Infinity) continue;
    if (c instanceof CompressionCodec) parts.push(`compressed over ${c.thresholdBytes} bytes (${c.algorithm})`);
    else if (c instanceof EncryptionCodec) parts.push(`encrypted with key '${c.currentKeyId}'${c.oldKeyIds.length ? ` (also decrypting ${c.oldKeyIds.map((id) => `'${id}'`).join(', ')})` : ''}`);
    else parts.push('encoded by a custom codec');
  }
  return parts.length ? `payloads ${parts.join(', ')}` : 'payloads not encrypted';
}
