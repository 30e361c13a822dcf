/**
 * The tool types' runtimes, gathered: one module, so the first call or expansion of any of them
 * loads one chunk (functions/lazy/tool-runtimes.ts). The egress client is here because only these
 * runtimes, the LLM wire clients and the MCP connections send anything — all loaded on first use.
 */
export { EgressClient } from '../../../egress/client'
export * from './mcp'
export * from './prompt_template'
export * from './rest'
export * from './rest_api'
