/** The code-defined layers: tool types (factories) and built-in tools. Both are read-only at run time. */
import type { TypeLookup } from '../config/server-tool'
import type { Tool, ToolFactory } from './contracts'

export class FactoryRegistry implements TypeLookup {
  private readonly factories = new Map<string, ToolFactory>()
  constructor(factories: ToolFactory[] = []) {
    for (const f of factories) this.register(f)
  }
  register(factory: ToolFactory) {
    if (this.factories.has(factory.typeId)) throw new Error(`tool type '${factory.typeId}' registered twice`)
    this.factories.set(factory.typeId, factory)
  }
  find(typeId: string) {
    return this.factories.get(typeId)
  }
  typeIds() {
    return [...this.factories.keys()].sort()
  }
  list(): ToolFactory[] {
    return this.typeIds().map((id) => this.factories.get(id)!)
  }
}

export class BuiltinRegistry {
  private readonly tools = new Map<string, Tool>()
  constructor(tools: Tool[] = []) {
    for (const t of tools) this.register(t)
  }
  register(tool: Tool) {
    if (this.tools.has(tool.name)) throw new Error(`built-in tool '${tool.name}' registered twice`)
    this.tools.set(tool.name, tool)
  }
  get(name: string) {
    return this.tools.get(name)
  }
  list(): Tool[] {
    return [...this.tools.values()].sort((a, b) => (a.name < b.name ? -1 : 1))
  }
}
