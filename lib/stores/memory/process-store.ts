/** In-process ProcessStore with the same promises as the DynamoDB adapter. */
import { conflict, notFound, ServerToolsError } from '../../errors'
import type { ProcessKey, ProcessRecord, ProcessStore } from '../../recipes/ports'
import type { ClientToolDeclaration } from '../../surface/client-tools'

const id = (k: ProcessKey) => `${k.tenant}#${k.project}\u0000${k.id}`

export class MemoryProcessStore implements ProcessStore {
  private readonly items = new Map<string, ProcessRecord>()

  async create(record: ProcessRecord) {
    checkItemSize(record)
    const existing = this.items.get(id(record))
    // an expired record is replaced (as the DynamoDB store's condition does)
    if (existing && existing.expiresAt > record.createdAt) throw conflict(`process '${record.id}' already exists`)
    this.items.set(id(record), frozenCopy(record))
  }

  /** The frozen parts (what spawn decided) are shared; what updates change is copied. */
  async get(key: ProcessKey, now: number) {
    const rec = this.items.get(id(key))
    return rec && rec.expiresAt > now
      ? { ...rec, activations: { ...rec.activations }, phantomsReported: [...rec.phantomsReported] }
      : undefined
  }

  async stampActivations(key: ProcessKey, names: string[], at: number, expiresAt: number, now: number) {
    const rec = this.live(key, now)
    for (const n of names) rec.activations[n] = at
    rec.expiresAt = expiresAt
  }

  async setClientTools(
    key: ProcessKey,
    tools: ClientToolDeclaration[],
    opts: { expectedVersion?: number; expiresAt: number; now: number },
  ) {
    const rec = this.live(key, opts.now)
    const version = rec.clientToolsVersion ?? 0
    if (opts.expectedVersion !== undefined && opts.expectedVersion !== version)
      throw conflict(`the client tools of process '${key.id}' are at version ${version}, not ${opts.expectedVersion}`)
    checkItemSize({ ...rec, clientTools: tools })
    rec.clientTools = structuredClone(tools)
    rec.clientToolsVersion = version + 1
    rec.expiresAt = opts.expiresAt
    return version + 1
  }

  async end(key: ProcessKey, now: number) {
    this.live(key, now)
    this.items.delete(id(key))
  }

  async markPhantoms(key: ProcessKey, names: string[], now: number) {
    const rec = this.live(key, now)
    const fresh = [...new Set(names)].filter((n) => !rec.phantomsReported.includes(n))
    rec.phantomsReported = [...rec.phantomsReported, ...fresh].sort()
    return fresh
  }

  private live(key: ProcessKey, now: number): ProcessRecord {
    const rec = this.items.get(id(key))
    if (!rec || rec.expiresAt <= now) throw notFound(`no process '${key.id}' in project '${key.project}' (it may have expired)`)
    return rec
  }
}

/** A copy whose spawn-time lists can be handed out without copying again: nobody can change them. */
function frozenCopy(r: ProcessRecord): ProcessRecord {
  const list = (xs: readonly string[]) => Object.freeze([...xs]) as string[]
  const rule = (x: ProcessRecord['keep']) => Object.freeze({ names: list(x.names), selected: list(x.selected), prefixes: list(x.prefixes) })
  return {
    ...r,
    roles: list(r.roles),
    models: list(r.models),
    allowed: list(r.allowed),
    promoted: list(r.promoted),
    added: list(r.added),
    deferred: list(r.deferred),
    keep: rule(r.keep),
    dropFirst: rule(r.dropFirst),
    activations: { ...r.activations },
    phantomsReported: [...r.phantomsReported],
  }
}

/** DynamoDB's item limit, so that a record this store takes is one the DynamoDB adapter takes too. */
const ITEM_LIMIT_BYTES = 400 * 1024

function checkItemSize(record: ProcessRecord) {
  if (Buffer.byteLength(JSON.stringify(record)) > ITEM_LIMIT_BYTES)
    throw new ServerToolsError(
      'TOO_LARGE',
      `the record would be larger than the ${ITEM_LIMIT_BYTES / 1024} KB one stored item may take in the processes table`,
    )
}
