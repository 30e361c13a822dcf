/**
 * The node HTTP server `npm start` serves the app on (functions/local.ts): @hono/node-server with
 * the deployment's connection timeouts and the lingering close for refused bodies. One function,
 * so a bench that measures the app as it is served (bench/observability.ts) serves it the same way.
 */
import { type ServerType, serve } from '@hono/node-server'
import { lingeringResponse } from './http/linger'
import { nodeServerOptions, nodeServerTimeoutsFromEnv } from './settings'

export async function serveNode(fetch: (request: Request) => Response | Promise<Response>, at: { port: number; hostname: string }) {
  // slow and idle connections are cut (functions/settings.ts, docs/operations/security.md); a
  // refusal that leaves a long body unread closes its connection by lingering (functions/http/linger.ts)
  const serverOptions = { ...nodeServerOptions(nodeServerTimeoutsFromEnv()), ServerResponse: lingeringResponse() }
  const server: ServerType = serve({ fetch, port: at.port, hostname: at.hostname, serverOptions })
  await new Promise<void>((res) => server.once('listening', () => res()))
  return server
}
