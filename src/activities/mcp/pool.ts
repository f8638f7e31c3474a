/**
 * The worker's MCP connections (ARCHITECTURE.md#mcp), keyed by server name, config as given and
 * cwd: sessions with the same config share one server process or HTTP session. A connection
 * that closed (a stdio server that died, an HTTP session that ended) is dropped and the next use
 * connects again. Every connection carries a `version` that changes when it is replaced or the
 * server says its tool list changed, so the workflow knows when to list tools again.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../../shared/mcp';
import { DURABLE_AGENT_VERSION } from '../../shared/version';

export interface McpConnection {
  client: Client;
  /** Changes when the connection is replaced or the server's tool list changed. */
  version: string;
  closed: boolean;
  /** The stdio server's process id (tests kill it). */
  pid?: number;
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 30_000;
let generation = 0;

export class McpPool {
  private readonly entries = new Map<string, Promise<McpConnection>>();

  /** The live connection for this server, connecting (again) if there is none. Rejects with the reason it cannot connect. */
  async get(key: string, config: McpServerConfig, cwd: string | undefined): Promise<McpConnection> {
    const existing = this.entries.get(key);
    if (existing) {
      const conn = await existing.catch(() => undefined);
      if (conn && !conn.closed) return conn;
      if (this.entries.get(key) === existing) this.entries.delete(key);
      else return this.get(key, config, cwd);
    }
    const connecting = connect(config, cwd);
    this.entries.set(key, connecting);
    connecting.catch(() => {
      if (this.entries.get(key) === connecting) this.entries.delete(key);
    });
    return connecting;
  }

  async closeAll(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map(async (p) => (await p.catch(() => undefined))?.close()));
  }
}

async function connect(config: McpServerConfig, cwd: string | undefined): Promise<McpConnection> {
  let stderr = '';
  let transport: Transport;
  if (config.type === 'stdio') {
    const stdio = new StdioClientTransport({
      command: config.command,
      args: config.args,
      // The SDK adds only PATH, HOME and the like to these: worker secrets do not leak to the server.
      env: config.env,
      stderr: 'pipe',
      ...(cwd ? { cwd } : {}),
    });
    stdio.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-2_000);
    });
    transport = stdio;
  } else {
    const url = new URL(config.url);
    const requestInit = { headers: config.headers };
    transport =
      config.type === 'http' ? new StreamableHTTPClientTransport(url, { requestInit }) : new SSEClientTransport(url, { requestInit });
  }
  const client = new Client({ name: 'durable-agent', version: DURABLE_AGENT_VERSION });
  const conn: McpConnection = {
    client,
    version: `${++generation}`,
    closed: false,
    close: async () => {
      conn.closed = true;
      await client.close().catch(() => undefined);
    },
  };
  client.onclose = () => {
    conn.closed = true;
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect(transport),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CONNECT_TIMEOUT_MS / 1000}s`)), CONNECT_TIMEOUT_MS);
      }),
    ]);
  } catch (e) {
    await client.close().catch(() => undefined);
    const msg = (e as Error).message || String(e);
    throw new Error(stderr.trim() ? `${msg} (stderr: ${stderr.trim().split('\n').slice(-3).join(' | ')})` : msg);
  } finally {
    clearTimeout(timer);
  }
  if (transport instanceof StdioClientTransport && transport.pid !== null) conn.pid = transport.pid;
  if (client.getServerCapabilities()?.tools?.listChanged) {
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      conn.version = `${++generation}`;
    });
  }
  return conn;
}
