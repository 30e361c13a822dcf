/**
 * The read batcher (lib/stores/aws/dynamo/read-batcher.ts) against a DynamoDB stand-in on
 * 127.0.0.1 that answers the JSON protocol itself. A stand-in, not dynalite, because what is
 * tested here is DynamoDB leaving keys of a BatchGetItem unprocessed under load, which dynalite
 * never does; dynalite covers the rest (test/integration/storage-requests.test.ts counts the
 * batched read on the wire).
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { DynamoClient } from '../../../lib/stores/aws/dynamo/client'
import { ReadBatcher } from '../../../lib/stores/aws/dynamo/read-batcher'

const servers: Server[] = []
const clients: DynamoClient[] = []
afterAll(() => {
  for (const c of clients) c.destroy()
  for (const s of servers) s.close()
})

type Wire = Record<string, { S: string }>
const wire = (o: Record<string, string>): Wire => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, { S: v }]))

/**
 * A stand-in holding `items` per table; a BatchGetItem's first `unprocessedRounds` answers leave
 * all but its first key unprocessed. Records each request's operation and key count.
 */
async function standIn(items: Record<string, Record<string, string>[]>, unprocessedRounds: number) {
  const seen: { op: string; keys: number }[] = []
  let rounds = 0
  const find = (table: string, key: Wire) => items[table]?.find((i) => Object.entries(key).every(([k, v]) => i[k] === v.S))
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c) => {
      body += c
    })
    req.on('end', () => {
      const op = String(req.headers['x-amz-target']).split('.')[1]
      const input = JSON.parse(body)
      let out: object
      if (op === 'GetItem') {
        seen.push({ op, keys: 1 })
        const item = find(input.TableName, input.Key)
        out = item ? { Item: wire(item) } : {}
      } else {
        const requested = Object.entries(input.RequestItems as Record<string, { Keys: Wire[] }>)
        seen.push({ op, keys: requested.reduce((n, [, r]) => n + r.Keys.length, 0) })
        const leave = rounds++ < unprocessedRounds
        const responses: Record<string, Wire[]> = {}
        const unprocessed: Record<string, { Keys: Wire[] }> = {}
        let first = true
        for (const [table, r] of requested)
          for (const key of r.Keys) {
            if (leave && !first) (unprocessed[table] ??= { Keys: [] }).Keys.push(key)
            else {
              const item = find(table, key)
              if (item) (responses[table] ??= []).push(wire(item))
            }
            first = false
          }
        out = { Responses: responses, UnprocessedKeys: unprocessed }
      }
      const text = JSON.stringify(out)
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(text) }).end(text)
    })
  })
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const client = new DynamoClient({
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
  })
  clients.push(client)
  return { batcher: new ReadBatcher(client, async () => {}), seen }
}

const ITEMS = {
  processes: [{ scope: 'acme#p1', id: 'proc-1', role: 'coder' }],
  documents: [{ scope: 'acme', path: '~stamp', generation: 'g7' }],
}

describe('ReadBatcher', () => {
  it('sends reads issued in the same turn as one BatchGetItem across tables, and a lone read as a GetItem', async () => {
    const { batcher, seen } = await standIn(ITEMS, 0)
    const [proc, stamp, absent] = await Promise.all([
      batcher.getItem<{ role: string }>('processes', { scope: 'acme#p1', id: 'proc-1' }),
      batcher.getItem<{ generation: string }>('documents', { scope: 'acme', path: '~stamp' }),
      batcher.getItem('documents', { scope: 'other', path: '~stamp' }),
    ])
    expect([proc?.role, stamp?.generation, absent]).toEqual(['coder', 'g7', undefined])
    expect((await batcher.getItem<{ role: string }>('processes', { scope: 'acme#p1', id: 'proc-1' }))?.role).toBe('coder')
    expect(seen).toEqual([
      { op: 'BatchGetItem', keys: 3 },
      { op: 'GetItem', keys: 1 },
    ])
  })

  it('asks again for the keys DynamoDB left unprocessed, and only for them', async () => {
    const { batcher, seen } = await standIn(ITEMS, 2)
    const [proc, stamp] = await Promise.all([
      batcher.getItem<{ role: string }>('processes', { scope: 'acme#p1', id: 'proc-1' }),
      batcher.getItem<{ generation: string }>('documents', { scope: 'acme', path: '~stamp' }),
    ])
    expect([proc?.role, stamp?.generation]).toEqual(['coder', 'g7'])
    // the first answer leaves the stamp unprocessed; the retry asks for the stamp alone
    expect(seen).toEqual([
      { op: 'BatchGetItem', keys: 2 },
      { op: 'BatchGetItem', keys: 1 },
    ])
  })

  it('answers the same key asked twice in one turn from one read of it', async () => {
    const { batcher, seen } = await standIn(ITEMS, 0)
    const key = { scope: 'acme', path: '~stamp' }
    const [a, b, c] = await Promise.all([
      batcher.getItem<{ generation: string }>('documents', key),
      batcher.getItem<{ generation: string }>('documents', key),
      batcher.getItem<{ role: string }>('processes', { scope: 'acme#p1', id: 'proc-1' }),
    ])
    expect([a?.generation, b?.generation, c?.role]).toEqual(['g7', 'g7', 'coder'])
    expect(seen).toEqual([{ op: 'BatchGetItem', keys: 2 }])
  })
})
