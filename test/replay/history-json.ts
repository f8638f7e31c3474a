/**
 * History ⇄ proto3 JSON (the format `temporal workflow show --output json` prints).
 *
 * Same as `historyToJSON`/`historyFromJSON` from @temporalio/common/lib/proto-utils, which fail
 * here with "type must be a Type": this install holds three copies of protobufjs 8 (under
 * @temporalio/common, /proto and /worker, because @grpc/proto-loader pins protobufjs 7 at the top
 * level), and common's protojson extension rejects the History type built by @temporalio/proto's
 * copy. We load the extension from the copy @temporalio/proto itself uses, whatever the layout.
 */
import { createRequire } from 'node:module';
import { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.History;
type IHistory = temporal.api.history.v1.IHistory;

interface ProtoJson {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
}

const fromProto = createRequire(require.resolve('@temporalio/proto'));
const protojson = fromProto('protobufjs/ext/protojson') as ProtoJson;
const { patchProtobufRoot } = fromProto('@temporalio/proto/lib/patch-protobuf-root') as {
  patchProtobufRoot<T>(root: T): T & { lookupType(name: string): unknown };
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const historyType = patchProtobufRoot(require('@temporalio/proto') as object).lookupType('temporal.api.history.v1.History');

/** A fetched History as proto3 JSON text. */
export function historyToJSON(history: IHistory): string {
  return JSON.stringify(protojson.toJson(historyType, temporal.api.history.v1.History.fromObject(history)), null, 1);
}

/** proto3 JSON (as written by historyToJSON) back to a History for Worker.runReplayHistories. */
export function historyFromJSON(json: unknown): History {
  const loaded = protojson.fromJson(historyType, json, { ignoreUnknownFields: true });
  if (!loaded) throw new TypeError('invalid history JSON');
  return loaded as History;
}
