/** Compression of payloads over a size threshold (brotli or deflate), before encryption. */
import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants as zlibConstants, deflateRaw, inflateRaw } from 'node:zlib';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { CodecConfigError, COMPRESSED_ENCODING, fromBytes, METADATA, metaString, toBytes, utf8 } from './payload-bytes';

/** Payloads at or below this size are not worth compressing (the deflate/brotli framing eats the gain). */
const DEFAULT_COMPRESSION_THRESHOLD_BYTES = 1024;

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
const compressors: Record<CompressionAlgorithm, { compress(b: Uint8Array): Promise<Buffer>; decompress(b: Uint8Array): Promise<Buffer> }> =
  {
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
    if (!(this.algorithm in compressors))
      throw new CodecConfigError(`compression algorithm '${String(this.algorithm)}': expected deflate-raw or brotli`);
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
