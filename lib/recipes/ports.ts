/**
 * The process record (DESIGN.md "Processes table"): what a spawn froze, and what the process
 * learned since (activations, reported phantoms). Adapters: lib/stores/memory/process-store.ts,
 * lib/stores/aws/process-store.ts; both pass test/contract/process-store.contract.ts.
 */

import type { ClientToolDeclaration } from '../surface/client-tools'

/** A keep / dropFirst rule resolved at spawn: exact names split a tool off its family. */
export interface RankRule {
  /** Named exactly in the recipe: each is its own demotion unit. */
  names: string[]
  /** Selected through an `@label` at spawn (frozen): rank the tool, keep its family whole. */
  selected: string[]
  /** `prefix*` patterns, matched per turn. */
  prefixes: string[]
}

export interface ProcessRecord {
  tenant: string
  project: string
  id: string
  recipe: string
  engine: string
  /** Usage role: the recipe name (spec §14.4). */
  role: string
  /** The engine's declared roles (descriptive). */
  roles: string[]
  /** Model chain, primary first (`instance/model`). */
  models: string[]
  /** The frozen allowed list `(engineDefault ∪ add) ∖ remove`, sorted; the floor is added per turn. */
  allowed: string[]
  /** Add entries that promote a tool the engine already allows to primary. */
  promoted: string[]
  /** Every tool the recipe's add list selected (triage tier "add"). */
  added: string[]
  /** Forced deferred by allowedToolsDefer (add beats defer). */
  deferred: string[]
  keep: RankRule
  dropFirst: RankRule
  activationTtlMs: number
  /** Tool name → epoch ms of its last activation or use. */
  activations: Record<string, number>
  /** Phantom tool names already reported for this process (spec §13.2 dedup), sorted. */
  phantomsReported: string[]
  createdAt: number
  createdBy: string
  /** Epoch ms after which the process is gone (invisible on read). */
  expiresAt: number
  /** Tools the backend declared (spec §7), in declaration order; absent = none. */
  clientTools?: ClientToolDeclaration[]
  /** Counts replacements of clientTools (the ETag of PUT …/client-tools); absent = 0. */
  clientToolsVersion?: number
  /**
   * The spawn's own `allowedTools` as written (names and `@label` selectors): it replaced the
   * engine's allow-set for this process (spec §11's per-process override). Absent = the engine's.
   */
  allowedToolsOverride?: string[]
  /** Set for an MCP session: the process ends after this long without a request (sliding expiry). */
  idleTtlMs?: number
  /** Manifest slots kept free for the client's own tools (spawn `reserve`, MCP `?reserve=`); absent = the deployment setting. */
  reserve?: number
  /** The recipe's `surface` (issue 27); absent = the endpoint profiles decide (lib/surface/surface.ts codeChoice). */
  surface?: 'code' | 'native'
  /** The recipe's `codeAllowDestructive`: `destructive` tools may be called from code; absent = refused. */
  codeAllowDestructive?: boolean
}

export interface ProcessKey {
  tenant: string
  project: string
  id: string
}

/**
 * A process as a caller names it: `subject` is the caller's token `sub`. A process belongs to the
 * subject that spawned it (`createdBy`); every route that reads, calls or changes one goes through
 * a key like this, so another subject of the same tenant finds nothing there (NOT_FOUND, exactly as
 * for an absent process: no probing which ids exist).
 */
export interface CallerProcessKey extends ProcessKey {
  subject: string
}

export interface ProcessStore {
  /** Writes a new process; CONFLICT when a live one has the id (one expired at `record.createdAt` is replaced). */
  create(record: ProcessRecord): Promise<void>
  /** The process, or undefined when absent or expired at `now`. */
  get(key: ProcessKey, now: number): Promise<ProcessRecord | undefined>
  /**
   * Stamps `at` on each name's activation (one atomic update: concurrent stamps of other names are
   * never lost) and sets the expiry to `expiresAt`. NOT_FOUND when absent or expired at `now`.
   */
  stampActivations(key: ProcessKey, names: string[], at: number, expiresAt: number, now: number): Promise<void>
  /**
   * Replaces the client tools (one atomic write) and returns their new version. With
   * `expectedVersion`, CONFLICT unless the stored version is that. NOT_FOUND when absent or expired.
   */
  setClientTools(
    key: ProcessKey,
    tools: ClientToolDeclaration[],
    opts: { expectedVersion?: number; expiresAt: number; now: number },
  ): Promise<number>
  /** Ends the process (an MCP session's DELETE). NOT_FOUND when absent or expired. */
  end(key: ProcessKey, now: number): Promise<void>
  /** Adds names to the reported phantoms; returns those that were not reported before. NOT_FOUND when absent or expired. */
  markPhantoms(key: ProcessKey, names: string[], now: number): Promise<string[]>
}
