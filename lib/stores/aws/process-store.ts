/**
 * ProcessStore on DynamoDB. Table: `scope` (`<tenant>#<project>`, hash) + `id` (range). Expiry:
 * `expiresAt` (epoch seconds, the table's TTL attribute — deletion is DynamoDB's, eventually) and
 * `expiresAtMs`, which every read and update checks, so an expired process is invisible at once
 * (and on emulators without TTL). Activations are a map attribute updated per name in one
 * UpdateItem, so concurrent stamps of different tools never lose each other.
 *
 * A retried write whose first attempt was applied (its answer lost) answers as that attempt
 * would have: create and setClientTools carry a write id (./write-ids.ts); markPhantoms records
 * which write first reported each name; stamps are idempotent as they are; and an end whose
 * retry finds the process gone after an attempt that may have landed is taken as done (an end,
 * an expiry or a concurrent end all leave what the caller asked for: no process).
 */

import { conflict, notFound } from '../../errors'
import type { ProcessKey, ProcessRecord, ProcessStore, RankRule } from '../../recipes/ports'
import type { ClientToolDeclaration } from '../../surface/client-tools'
import type { DynamoClient } from './dynamo/client'
import type { ReadBatcher } from './dynamo/read-batcher'
import type { TableSpec } from './provision'
import { errorName, storeError } from './store-errors'
import { mayHaveLanded, newWriteId, writeIdClauses, writesSince } from './write-ids'

/** Table spec for provisioning (`npm start`, tests); sst.config.ts declares the same keys and TTL. */
export const processesTableSpec = (name: string): TableSpec => ({
  name,
  hashKey: { name: 'scope', type: 'S' },
  rangeKey: { name: 'id', type: 'S' },
  ttlAttribute: 'expiresAt',
})

/**
 * The record as stored: the TTL in epoch seconds beside the exact ms, phantoms as a string set,
 * client tools as JSON text (their schemas are arbitrary JSON; a map attribute would reshape them).
 */
interface ProcessItem extends Omit<ProcessRecord, 'phantomsReported' | 'expiresAt' | 'clientTools'> {
  scope: string
  phantoms?: Set<string>
  /** Phantom name → the write id of the markPhantoms call that first reported it. */
  phantomsBy?: Record<string, string>
  writeId?: string
  clientToolsJson?: string
  expiresAtMs: number
  expiresAt: number
}

const scopeOf = (k: { tenant: string; project: string }) => `${k.tenant}#${k.project}`
const LIVE = 'attribute_exists(#id) AND #exp > :now'

export class DynamoProcessStore implements ProcessStore {
  private readonly db: DynamoClient
  private readonly table: string
  private readonly reads?: ReadBatcher

  /** `reads`: a process read goes out with the other reads of its turn (the tenant's stamp) as one BatchGetItem. */
  constructor(opts: { dynamo: DynamoClient; tableName: string; reads?: ReadBatcher }) {
    this.db = opts.dynamo
    this.table = opts.tableName
    this.reads = opts.reads
  }

  async create(r: ProcessRecord) {
    const writeId = newWriteId()
    const item: ProcessItem = {
      writeId,
      phantomsBy: {},
      scope: scopeOf(r),
      id: r.id,
      tenant: r.tenant,
      project: r.project,
      recipe: r.recipe,
      engine: r.engine,
      role: r.role,
      roles: r.roles,
      models: r.models,
      allowed: r.allowed,
      promoted: r.promoted,
      added: r.added,
      deferred: r.deferred,
      keep: r.keep,
      dropFirst: r.dropFirst,
      activationTtlMs: r.activationTtlMs,
      activations: r.activations,
      ...(r.phantomsReported.length ? { phantoms: new Set(r.phantomsReported) } : {}),
      createdAt: r.createdAt,
      createdBy: r.createdBy,
      ...(r.clientTools?.length ? { clientToolsJson: JSON.stringify(r.clientTools), clientToolsVersion: r.clientToolsVersion ?? 1 } : {}),
      ...(r.reserve !== undefined ? { reserve: r.reserve } : {}),
      ...(r.surface !== undefined ? { surface: r.surface } : {}),
      ...(r.codeAllowDestructive !== undefined ? { codeAllowDestructive: r.codeAllowDestructive } : {}),
      ...(r.allowedToolsOverride ? { allowedToolsOverride: r.allowedToolsOverride } : {}),
      ...(r.idleTtlMs !== undefined ? { idleTtlMs: r.idleTtlMs } : {}),
      expiresAtMs: r.expiresAt,
      expiresAt: Math.ceil(r.expiresAt / 1000),
    }
    try {
      await this.send(() =>
        this.db.putItem({
          TableName: this.table,
          Item: item,
          // an expired record (TTL deletes it up to days later) is replaced: a stateless MCP client's
          // deterministic process id (functions/http/routes/mcp.ts) must be creatable again once it expired
          ConditionExpression: 'attribute_not_exists(#id) OR #exp <= :now',
          ExpressionAttributeNames: { '#id': 'id', '#exp': 'expiresAtMs' },
          ExpressionAttributeValues: { ':now': r.createdAt },
        }),
      )
    } catch (e) {
      if (errorName(e) !== 'ConditionalCheckFailedException') throw e
      if (mayHaveLanded(e) && writesSince(await this.rawItem(r), writeId) !== undefined) return
      throw conflict(`process '${r.id}' already exists`, e)
    }
  }

  private async rawItem(key: ProcessKey): Promise<ProcessItem | undefined> {
    const Key = { scope: scopeOf(key), id: key.id }
    const reads = this.reads
    if (reads) return this.send(() => reads.getItem<ProcessItem>(this.table, Key))
    const out = await this.send(() => this.db.getItem<ProcessItem>({ TableName: this.table, Key, ConsistentRead: true }))
    return out.Item
  }

  async get(key: ProcessKey, now: number) {
    const item = await this.rawItem(key)
    if (!item || !(item.expiresAtMs > now)) return undefined
    return {
      tenant: item.tenant,
      project: item.project,
      id: item.id,
      recipe: item.recipe,
      engine: item.engine,
      role: item.role,
      roles: item.roles ?? [],
      models: item.models ?? [],
      allowed: item.allowed ?? [],
      promoted: item.promoted ?? [],
      added: item.added ?? [],
      deferred: item.deferred ?? [],
      keep: rule(item.keep),
      dropFirst: rule(item.dropFirst),
      activationTtlMs: item.activationTtlMs,
      activations: item.activations ?? {},
      phantomsReported: item.phantoms ? [...item.phantoms].sort() : [],
      createdAt: item.createdAt,
      createdBy: item.createdBy,
      expiresAt: item.expiresAtMs,
      ...(item.clientToolsJson ? { clientTools: JSON.parse(item.clientToolsJson) as ClientToolDeclaration[] } : {}),
      ...(item.clientToolsVersion !== undefined ? { clientToolsVersion: item.clientToolsVersion } : {}),
      ...(item.reserve !== undefined ? { reserve: item.reserve } : {}),
      ...(item.surface === 'code' || item.surface === 'native' ? { surface: item.surface } : {}),
      ...(item.codeAllowDestructive === true ? { codeAllowDestructive: true } : {}),
      ...(item.allowedToolsOverride ? { allowedToolsOverride: item.allowedToolsOverride } : {}),
      ...(item.idleTtlMs !== undefined ? { idleTtlMs: item.idleTtlMs } : {}),
    }
  }

  async setClientTools(
    key: ProcessKey,
    tools: ClientToolDeclaration[],
    opts: { expectedVersion?: number; expiresAt: number; now: number },
  ) {
    const expected = opts.expectedVersion
    const writeId = newWriteId()
    const names: Record<string, string> = {
      '#id': 'id',
      '#exp': 'expiresAtMs',
      '#ttl': 'expiresAt',
      '#tools': 'clientToolsJson',
      '#ver': 'clientToolsVersion',
    }
    const values: Record<string, unknown> = {
      ':tools': JSON.stringify(tools),
      ':exp': opts.expiresAt,
      ':ttl': Math.ceil(opts.expiresAt / 1000),
      ':one': 1,
      ':now': opts.now,
      ...(expected ? { ':expected': expected } : {}),
    }
    // only setClientTools shifts the write ids after create: `since` counts tool versions
    const ids = writeIdClauses(names, values, writeId)
    try {
      const out = await this.send(() =>
        this.db.updateItem({
          TableName: this.table,
          Key: { scope: scopeOf(key), id: key.id },
          ConditionExpression: `${
            expected === undefined ? LIVE : expected === 0 ? `${LIVE} AND attribute_not_exists(#ver)` : `${LIVE} AND #ver = :expected`
          } AND ${ids.condition}`,
          UpdateExpression: `SET #tools = :tools, #exp = :exp, #ttl = :ttl, ${ids.set.join(', ')} ADD #ver :one`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'UPDATED_NEW',
        }),
      )
      return out.Attributes?.clientToolsVersion as number
    } catch (e) {
      if (errorName(e) !== 'ConditionalCheckFailedException') throw e
      if (mayHaveLanded(e)) {
        const item = await this.rawItem(key)
        const since = writesSince(item, writeId)
        if (item && since !== undefined) return Number(item.clientToolsVersion) - since
      }
      // Tell a version mismatch from a missing process: one more read, only on the failure path.
      if (expected !== undefined && (await this.get(key, opts.now)))
        throw conflict(`the client tools of process '${key.id}' are not at version ${expected}`, e)
      throw notFound(`no process '${key.id}' in project '${key.project}' (it may have expired)`)
    }
  }

  async end(key: ProcessKey, now: number) {
    try {
      await this.send(() =>
        this.db.deleteItem({
          TableName: this.table,
          Key: { scope: scopeOf(key), id: key.id },
          ConditionExpression: LIVE,
          ExpressionAttributeNames: { '#id': 'id', '#exp': 'expiresAtMs' },
          ExpressionAttributeValues: { ':now': now },
        }),
      )
    } catch (e) {
      if (errorName(e) !== 'ConditionalCheckFailedException') throw e
      // gone after an attempt that may have landed: our end (see the header)
      if (mayHaveLanded(e) && !(await this.rawItem(key))) return
      throw notFound(`no process '${key.id}' in project '${key.project}' (it may have expired)`)
    }
  }

  async stampActivations(key: ProcessKey, names: string[], at: number, expiresAt: number, now: number) {
    const unique = [...new Set(names)]
    const attrNames: Record<string, string> = { '#id': 'id', '#exp': 'expiresAtMs', '#ttl': 'expiresAt', '#act': 'activations' }
    const sets = unique.map((n, i) => {
      attrNames[`#n${i}`] = n
      return `#act.#n${i} = :at`
    })
    await this.update(key, {
      UpdateExpression: `SET ${[...sets, '#exp = :exp', '#ttl = :ttl'].join(', ')}`,
      ExpressionAttributeNames: attrNames,
      ExpressionAttributeValues: { ':at': at, ':exp': expiresAt, ':ttl': Math.ceil(expiresAt / 1000), ':now': now },
    })
  }

  async markPhantoms(key: ProcessKey, names: string[], now: number) {
    const unique = [...new Set(names)]
    if (!unique.length) return []
    // Each name remembers the call that first reported it, so a retried call whose first attempt
    // was applied still answers the names it added (an UPDATED_OLD answer would then say none).
    const writeId = newWriteId()
    const attrNames: Record<string, string> = { '#id': 'id', '#exp': 'expiresAtMs', '#ph': 'phantoms', '#pb': 'phantomsBy' }
    const firsts = unique.map((n, i) => {
      attrNames[`#n${i}`] = n
      return `#pb.#n${i} = if_not_exists(#pb.#n${i}, :wid)`
    })
    try {
      const out = await this.update(key, {
        UpdateExpression: `SET ${firsts.join(', ')} ADD #ph :names`,
        ExpressionAttributeNames: attrNames,
        ExpressionAttributeValues: { ':names': new Set(unique), ':now': now, ':wid': writeId },
        // the updated paths only: phantomsBy.<name> for each name, and the set
        ReturnValues: 'UPDATED_NEW',
      })
      const by = (out.Attributes?.phantomsBy as Record<string, string> | undefined) ?? {}
      return unique.filter((n) => by[n] === writeId)
    } catch (e) {
      // a process created before phantomsBy existed: its map is missing, and a nested SET refuses it
      if (errorName(e) !== 'ValidationException' || !/document path/i.test(String((e as Error).message))) throw e
      const out = await this.update(key, {
        UpdateExpression: 'ADD #ph :names',
        ExpressionAttributeNames: { '#id': 'id', '#exp': 'expiresAtMs', '#ph': 'phantoms' },
        ExpressionAttributeValues: { ':names': new Set(unique), ':now': now },
        ReturnValues: 'UPDATED_OLD',
      })
      const before = (out.Attributes?.phantoms as Set<string> | undefined) ?? new Set<string>()
      return unique.filter((n) => !before.has(n))
    }
  }

  private async update(
    key: ProcessKey,
    input: {
      UpdateExpression: string
      ExpressionAttributeNames: Record<string, string>
      ExpressionAttributeValues: Record<string, unknown>
      ReturnValues?: 'UPDATED_OLD' | 'UPDATED_NEW'
    },
  ) {
    try {
      return await this.send(() =>
        this.db.updateItem({ TableName: this.table, Key: { scope: scopeOf(key), id: key.id }, ConditionExpression: LIVE, ...input }),
      )
    } catch (e) {
      if (errorName(e) === 'ConditionalCheckFailedException')
        throw notFound(`no process '${key.id}' in project '${key.project}' (it may have expired)`)
      throw e
    }
  }

  private async send<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request()
    } catch (e) {
      throw storeError(e, 'the processes table')
    }
  }
}

const rule = (r: Partial<RankRule> | undefined): RankRule => ({
  names: r?.names ?? [],
  selected: r?.selected ?? [],
  prefixes: r?.prefixes ?? [],
})
