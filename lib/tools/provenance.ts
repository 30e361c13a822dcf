/**
 * Provenance of a configured name: the layer it resolves from and every outer layer it hides.
 * One rule for the admin views and the surface preview, so the console and the CLI never disagree.
 */
import type { ToolSource } from './contracts'

export interface Provenance {
  source: ToolSource
  /** Outer layers that also define the name, innermost first; they show again when `source` is deleted. */
  shadows: ToolSource[]
}

/** Innermost first: the cascade's order (spec §4). */
export const LAYER_ORDER: readonly ToolSource[] = ['project', 'tenant', 'bundled', 'builtin']

/** The provenance of a name defined in these layers (any order, duplicates ignored); undefined when none. */
export function provenanceOf(layers: Iterable<ToolSource>): Provenance | undefined {
  const present = new Set(layers)
  const ordered = LAYER_ORDER.filter((l) => present.has(l))
  return ordered.length ? { source: ordered[0], shadows: ordered.slice(1) } : undefined
}
