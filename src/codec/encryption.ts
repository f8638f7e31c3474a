/**
 * AES-256-GCM encryption of whole payloads, with named keys for rotation: the first key of
 * DURABLE_AGENT_ENCRYPTION_KEYS encrypts, the others still decrypt.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { CodecConfigError, ENCRYPTED_ENCODING, fromBytes, METADATA, metaString, toBytes, utf8 } from './payload-bytes';

export const ENCRYPTION_KEYS_ENV = 'DURABLE_AGENT_ENCRYPTION_KEYS';
const CIPHER = 'AES-256-GCM';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

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
    if (!BASE64.test(b64))
      throw new CodecConfigError(`${where} ('${id}'): the key is not base64 (generate one with: openssl rand -base64 32)`);
    const key = Buffer.from(b64, 'base64');
    if (key.length !== KEY_BYTES)
      throw new CodecConfigError(`${where} ('${id}'): the key is ${key.length} bytes, expected ${KEY_BYTES} (openssl rand -base64 32)`);
    if (keys.some((k) => k.id === id)) throw new CodecConfigError(`${where} ('${id}'): the key id appears twice`);
    keys.push({ id, key });
  });
  return { current: keys[0]!, old: keys.slice(1) };
}

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
      throw new Error(
        `payload encrypted with key id '${keyId}' failed authentication: it was altered, or the key named '${keyId}' is not the key it was encrypted with`,
      );
    }
    return fromBytes(plain);
  }
}
