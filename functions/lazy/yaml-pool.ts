/**
 * The YAML parse workers (lib/config/yaml-pool.ts), loaded by the first text too long to parse
 * inline; its import of ./shared is explained there. A parse worker evaluates this chunk again.
 */
import './shared'

export * from '../../lib/config/yaml-pool'
