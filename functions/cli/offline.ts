/**
 * The service, in memory and offline, for `server-tools validate`: the same composition as the
 * deployed one (functions/deps.ts), so every document is judged by the code that will store it.
 * Nothing leaves the machine: name resolution and connections fail, so remote catalogs (MCP) are
 * simply not consulted.
 */
import { EgressClient } from '../../lib/egress/client'
import type { LayerFile } from '../../lib/layers/layer'
import { type LayerProblem, validateLayer } from '../../lib/layers/validate'
import { createMemoryDeps } from '../deps'

const offline = () => Promise.reject(new Error('server-tools validate runs offline'))

export async function validateOffline(input: {
  project: string
  files: readonly LayerFile[]
  tenantFiles?: readonly LayerFile[]
}): Promise<LayerProblem[]> {
  const deps = createMemoryDeps({
    egress: new EgressClient({ resolver: { resolve: offline }, connector: { send: offline } }),
    sandbox: { isolation: 'inline' },
    countUsage: false,
  })
  return validateLayer(deps, { tenant: 'local', ...input })
}
