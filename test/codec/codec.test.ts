/**
 * The payload codec without a server: encryption, rotation, tampering, pass-through, compression
 * and the environment format. Payloads go through the SDK's own encode/decode helpers, so the
 * chain runs in the order Temporal runs it (encode first → last, decode last → first).
 */
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { decode, encode } from '@temporalio/common/lib/internal-non-workflow';
import {
  codecFromEnv,
  CodecConfigError,
  COMPRESSED_ENCODING,
  CompressionCodec,
  createPayloadCodecs,
  describeCodecs,
  ENCRYPTED_ENCODING,
  EncryptionCodec,
  parseEncryptionKeys,
  type EncryptionKey,
} from '../../src/codec';
import { DurableAgentClient } from '../../src/client/client';
import { createWorker } from '../../src/worker/worker';

const key = (id: string): EncryptionKey => ({ id, key: randomBytes(32) });
const A = key('a');
const B = key('b');
const meta = (p: Payload, k: string) => (p.metadata?.[k] ? Buffer.from(p.metadata[k]).toString('utf8') : undefined);
const toPayload = (v: unknown) => defaultPayloadConverter.toPayload(v);
const fromPayload = (p: Payload) => defaultPayloadConverter.fromPayload(p);
const roundTrip = async (codecs: PayloadCodec[], v: unknown, readers = codecs) =>
  fromPayload((await decode(readers, await encode(codecs, [toPayload(v)])))[0]!);

describe('EncryptionCodec', () => {
  const codec = new EncryptionCodec({ current: A });
  const value = { role: 'user', content: 'the secret plan: PLAINTEXT-MARKER' };

  test('round-trips; the stored payload holds neither the value nor its encoding, and names its key', async () => {
    const [enc] = await codec.encode([toPayload(value)]);
    expect(meta(enc!, 'encoding')).toBe(ENCRYPTED_ENCODING);
    expect(meta(enc!, 'encryption-key-id')).toBe('a');
    expect(meta(enc!, 'encryption-cipher')).toBe('AES-256-GCM');
    expect(Buffer.from(enc!.data!).includes('PLAINTEXT-MARKER')).toBe(false);
    expect(Buffer.from(enc!.data!).includes('json/plain')).toBe(false);
    expect(fromPayload((await codec.decode([enc!]))[0]!)).toEqual(value);
  });

  test('a fresh IV per payload: the same value encrypts differently each time', async () => {
    const [x, y] = await codec.encode([toPayload(value), toPayload(value)]);
    expect(Buffer.from(x!.data!).subarray(0, 12).equals(Buffer.from(y!.data!).subarray(0, 12))).toBe(false);
    expect(Buffer.from(x!.data!).equals(Buffer.from(y!.data!))).toBe(false);
  });

  test('round-trips empty and binary payloads, and payloads without data', async () => {
    for (const v of [null, '', 0, [], new Uint8Array([0, 1, 255])]) expect(await roundTrip([codec], v)).toEqual(v);
    const bare: Payload = { metadata: { encoding: Buffer.from('binary/null') } };
    expect(fromPayload((await codec.decode(await codec.encode([bare])))[0]!)).toBeUndefined();
  });

  test.each([
    ['a ciphertext byte', (d: Buffer) => (d[20]! ^= 1)],
    ['the IV', (d: Buffer) => (d[0]! ^= 1)],
    ['the auth tag', (d: Buffer) => (d[d.length - 1]! ^= 1)],
  ])('tampering with %s fails authentication, naming the key id', async (_what, tamper) => {
    const [enc] = await codec.encode([toPayload(value)]);
    const data = Buffer.from(enc!.data!);
    tamper(data);
    await expect(codec.decode([{ ...enc!, data }])).rejects.toThrow(/key id 'a' failed authentication/);
  });

  test('relabelling a payload with another configured key id fails (the id is authenticated)', async () => {
    const both = new EncryptionCodec({ current: A, old: [{ id: 'b', key: A.key }] });
    const [enc] = await both.encode([toPayload(value)]);
    const relabelled = { ...enc!, metadata: { ...enc!.metadata, 'encryption-key-id': Buffer.from('b') } };
    await expect(both.decode([relabelled])).rejects.toThrow(/key id 'b' failed authentication/);
  });

  test('a truncated payload is rejected', async () => {
    const [enc] = await codec.encode([toPayload(value)]);
    await expect(codec.decode([{ ...enc!, data: enc!.data!.subarray(0, 10) }])).rejects.toThrow(/truncated/);
  });

  test('rotation: written with A, read with current B and old A; without A the error names A', async () => {
    const [enc] = await new EncryptionCodec({ current: A }).encode([toPayload(value)]);
    const rotated = new EncryptionCodec({ current: B, old: [A] });
    expect(fromPayload((await rotated.decode([enc!]))[0]!)).toEqual(value);
    const [fresh] = await rotated.encode([toPayload(value)]);
    expect(meta(fresh!, 'encryption-key-id')).toBe('b');
    await expect(new EncryptionCodec({ current: B }).decode([enc!])).rejects.toThrow(
      "payload encrypted with key id 'a', which is not configured (known: 'b')",
    );
  });

  test('payloads without encryption metadata (written before encryption was on) pass through unchanged', async () => {
    const plain = toPayload(value);
    const [out] = await codec.decode([plain]);
    expect(out).toBe(plain);
  });

  test('rejects keys of the wrong size and bad ids at construction', () => {
    expect(() => new EncryptionCodec({ current: { id: 'short', key: randomBytes(16) } })).toThrow(/'short': 16 bytes, expected 32/);
    expect(() => new EncryptionCodec({ current: { id: 'has space', key: randomBytes(32) } })).toThrow(CodecConfigError);
  });
});

describe('CompressionCodec', () => {
  const log = Array.from({ length: 200 }, (_, i) => `2025-03-01T12:00:${String(i % 60).padStart(2, '0')}Z INFO request ${i} ok`).join('\n');

  test.each(['brotli', 'deflate-raw'] as const)('%s: compresses a payload over 1 KiB and round-trips it', async (algorithm) => {
    const codec = new CompressionCodec({ algorithm });
    const p = toPayload(log);
    const [enc] = await codec.encode([p]);
    expect(meta(enc!, 'encoding')).toBe(COMPRESSED_ENCODING);
    expect(meta(enc!, 'compression')).toBe(algorithm);
    expect(enc!.data!.length).toBeLessThan(p.data!.length / 3);
    expect(fromPayload((await codec.decode([enc!]))[0]!)).toBe(log);
  });

  test('a payload of exactly 1 KiB is left alone; one byte more is compressed', async () => {
    const codec = new CompressionCodec();
    const at = (n: number) => ({ metadata: { encoding: Buffer.from('binary/plain') }, data: Buffer.alloc(n, 'a') });
    const [small, big] = await codec.encode([at(1024), at(1025)]);
    expect(meta(small!, 'encoding')).toBe('binary/plain');
    expect(meta(big!, 'encoding')).toBe(COMPRESSED_ENCODING);
  });

  test('incompressible data is stored as is (compression would make it bigger)', async () => {
    const p: Payload = { metadata: { encoding: Buffer.from('binary/plain') }, data: randomBytes(8192) };
    const [enc] = await new CompressionCodec().encode([p]);
    expect(enc).toBe(p);
  });

  test('decodes either algorithm whichever one it is configured to write; an unknown one is named', async () => {
    const [deflated] = await new CompressionCodec({ algorithm: 'deflate-raw' }).encode([toPayload(log)]);
    expect(fromPayload((await new CompressionCodec({ algorithm: 'brotli' }).decode([deflated!]))[0]!)).toBe(log);
    const odd = { ...deflated!, metadata: { ...deflated!.metadata, compression: Buffer.from('lz4') } };
    await expect(new CompressionCodec().decode([odd])).rejects.toThrow(/unknown algorithm 'lz4'/);
  });
});

describe('the codec chain', () => {
  test('compress then encrypt: the stored payload is encrypted, and compressed inside', async () => {
    const codecs = createPayloadCodecs({ keys: { current: A }, compress: true })!;
    expect(codecs.map((c) => c.constructor.name)).toEqual(['CompressionCodec', 'EncryptionCodec']);
    const big = 'x'.repeat(10_000);
    const [stored] = await encode(codecs, [toPayload(big)]);
    expect(meta(stored!, 'encryption-key-id')).toBe('a');
    expect(stored!.data!.length).toBeLessThan(200);
    const [inner] = await codecs[1]!.decode([stored!]);
    expect(meta(inner!, 'compression')).toBe('brotli');
    expect(fromPayload((await decode(codecs, [stored!]))[0]!)).toBe(big);
  });

  test('turning compression off later keeps compressed history readable: with keys, decode always inflates', async () => {
    const keys = `k1:${randomBytes(32).toString('base64')}`;
    const writer = codecFromEnv({ DURABLE_AGENT_ENCRYPTION_KEYS: keys, DURABLE_AGENT_COMPRESS: '1' })!;
    const reader = codecFromEnv({ DURABLE_AGENT_ENCRYPTION_KEYS: keys })!;
    expect(await roundTrip(writer, 'y'.repeat(5000), reader)).toBe('y'.repeat(5000));
    // …and the reader itself no longer compresses.
    const [stored] = await encode(reader, [toPayload('z'.repeat(5000))]);
    const [inner] = await reader[1]!.decode([stored!]);
    expect(meta(inner!, 'encoding')).toBe('json/plain');
  });
});

describe('configuration from the environment', () => {
  const k32 = () => randomBytes(32).toString('base64');

  test('nothing set → undefined; compression only; keys only; both (compression first)', () => {
    expect(codecFromEnv({})).toBeUndefined();
    expect(codecFromEnv({ DURABLE_AGENT_ENCRYPTION_KEYS: '  ', DURABLE_AGENT_COMPRESS: '0' })).toBeUndefined();
    expect(codecFromEnv({ DURABLE_AGENT_COMPRESS: '1' })!.map((c) => c.constructor.name)).toEqual(['CompressionCodec']);
    const keysOnly = codecFromEnv({ DURABLE_AGENT_ENCRYPTION_KEYS: `k1:${k32()}` });
    expect(keysOnly!.map((c) => c.constructor.name)).toEqual(['CompressionCodec', 'EncryptionCodec']);
    expect(describeCodecs(keysOnly)).toBe("payloads encrypted with key 'k1'");
    const both = codecFromEnv({ DURABLE_AGENT_ENCRYPTION_KEYS: `k2:${k32()}, k1:${k32()}`, DURABLE_AGENT_COMPRESS: 'true' });
    expect(describeCodecs(both)).toBe("payloads compressed over 1024 bytes (brotli), encrypted with key 'k2' (also decrypting 'k1')");
  });

  test('the first entry is the current key; the others decrypt only', () => {
    const keys = parseEncryptionKeys(`new:${k32()},old1:${k32()},old2:${k32()}`);
    expect(keys.current.id).toBe('new');
    expect(keys.old!.map((k) => k.id)).toEqual(['old1', 'old2']);
  });

  test('accepts what `openssl rand -base64 32` prints (padded standard base64)', () => {
    const printed = 'q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=';
    expect(parseEncryptionKeys(`prod-2025:${printed}`).current.key).toHaveLength(32);
  });

  const secret = randomBytes(16).toString('base64');
  test.each([
    ['no id', `${k32()}`, /entry 1 has no 'id:' prefix/],
    ['a short key', `ok:${k32()},short:${secret}`, /entry 2 \('short'\): the key is 16 bytes, expected 32/],
    ['not base64', 'k1:not*base64!', /entry 1 \('k1'\): the key is not base64/],
    ['an empty entry', `k1:${k32()},,k2:${k32()}`, /entry 2 is empty/],
    ['a bad id', `k 1:${k32()}`, /entry 1 \('k 1'\): the key id must be/],
    ['an empty id', `:${k32()}`, /entry 1 \(''\): the key id must be/],
    ['a repeated id', `k1:${k32()},k1:${k32()}`, /entry 2 \('k1'\): the key id appears twice/],
  ])('rejects %s, naming the entry and never printing the key', (_what, value, message) => {
    let error: unknown;
    try {
      codecFromEnv({ DURABLE_AGENT_ENCRYPTION_KEYS: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CodecConfigError);
    expect((error as Error).message).toMatch(/^DURABLE_AGENT_ENCRYPTION_KEYS: /);
    expect((error as Error).message).toMatch(message);
    for (const part of value.split(/[,:]/).filter((s) => s.length >= 16)) expect((error as Error).message).not.toContain(part);
  });

  test('rejects a DURABLE_AGENT_COMPRESS that is not a flag', () => {
    expect(() => codecFromEnv({ DURABLE_AGENT_COMPRESS: 'fast' })).toThrow("DURABLE_AGENT_COMPRESS: expected 1 or 0, got 'fast'");
  });

  test('a malformed key fails worker and client start-up before they connect (nothing listens on the address)', async () => {
    const bad = { DURABLE_AGENT_ENCRYPTION_KEYS: `k1:${secret}` };
    await expect(DurableAgentClient.connect({ address: '127.0.0.1:1', env: bad })).rejects.toThrow(/entry 1 \('k1'\): the key is 16 bytes/);
    const saved = process.env.DURABLE_AGENT_ENCRYPTION_KEYS;
    process.env.DURABLE_AGENT_ENCRYPTION_KEYS = bad.DURABLE_AGENT_ENCRYPTION_KEYS;
    try {
      await expect(createWorker({ address: '127.0.0.1:1', log: () => undefined })).rejects.toThrow(/entry 1 \('k1'\): the key is 16 bytes/);
    } finally {
      if (saved === undefined) delete process.env.DURABLE_AGENT_ENCRYPTION_KEYS;
      else process.env.DURABLE_AGENT_ENCRYPTION_KEYS = saved;
    }
  });
});
