/** MCP tool results as the text the model sees (ARCHITECTURE.md#mcp). */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** MCP content → the text the model sees: images and audio become placeholders. */
export function mcpResultText(result: Partial<CallToolResult>): string {
  const parts: string[] = [];
  for (const block of result.content ?? []) {
    if (block.type === 'text') parts.push(block.text);
    else if (block.type === 'image' || block.type === 'audio')
      parts.push(`[${block.type}: ${block.mimeType}, ${Math.round((block.data.length * 3) / 4)} bytes, not shown]`);
    else if (block.type === 'resource') {
      const r = block.resource;
      parts.push(
        'text' in r && typeof r.text === 'string'
          ? r.text
          : `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}, binary, not shown]`,
      );
    } else if (block.type === 'resource_link') parts.push(`[resource link: ${block.uri}${block.name ? ` (${block.name})` : ''}]`);
  }
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  return parts.join('\n');
}
