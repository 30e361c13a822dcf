/**
 * The egress client as the composition root hands it out: built on the first outbound request or
 * check. Until then neither the client nor its guard and connector (node:http, node:https,
 * node:zlib) are loaded — a cold start that sends nothing never needs them (docs/operations/cold-start-and-latency.md).
 */
import type { EgressClient, EgressClientOptions } from './client'

/** What the tools, the LLM wire clients and the MCP connections use of the client. */
export type Egress = Pick<EgressClient, 'request' | 'check'>

/**
 * The client's code, loaded by the caller: the composition root owns the dynamic import, and so
 * where the bundle's chunks are cut (functions/lazy/).
 */
export type EgressModule = () => Promise<{ EgressClient: typeof EgressClient }>

/** One client for the container, constructed with `options` on first use; the guard's rules are the options' own. */
export function lazyEgress(load: EgressModule, options: EgressClientOptions): Egress {
  let client: Promise<EgressClient> | undefined
  const get = () => (client ??= load().then((m) => new m.EgressClient(options)))
  return {
    request: async (req) => (await get()).request(req),
    check: async (tenant, url) => (await get()).check(tenant, url),
  }
}
