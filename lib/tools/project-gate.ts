/** The gate for calls outside any process: every tool the project can resolve. */
import type { ToolGate } from './dispatcher'
import type { ServerToolService } from './service'

export function projectGate(service: ServerToolService, tenant: string, project: string): ToolGate {
  return {
    resolve: (name) => service.lookup(tenant, project, name),
    names: async () => (await service.listAll(tenant, project)).tools.map((t) => t.name),
  }
}
