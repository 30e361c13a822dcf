/**
 * Large JSON answers leave in slices (functions/http/json-answer.ts, issue 21 D2/D3): the bytes
 * of `c.json`, written a piece at a time, each piece rendered after the one before was taken.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { WORK_BUDGETS } from '../../lib/config/expansion-budget'
import { client, tokenFor } from '../support/http'

const base = '/brain/acme/projects/p1'
const SLICE = WORK_BUDGETS.jsonRenderSlice.limit

async function chunksOf(res: Response): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = []
  const reader = res.body!.getReader()
  for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value)
  return chunks
}

describe('large JSON answers', () => {
  it('sends a 900 KB layer export in pieces of at most two slices, the text one JSON.stringify would give', async () => {
    const app = createApp(createMemoryDeps({}))
    const api = client(app, await tokenFor('acme'))
    for (const [i, body] of ['a'.repeat(300_000), '"\\\n€'.repeat(100_000), 'c'.repeat(200_000)].entries())
      expect((await api.put(`${base}/documents/notes/n${i}.md`, body, { 'content-type': 'text/markdown' })).status).toBe(201)
    const res = await api.get(`${base}/documents?bodies=true`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json')
    const chunks = await chunksOf(res)
    const text = Buffer.concat(chunks).toString('utf8')
    const { documents } = JSON.parse(text) as { documents: { path: string; body: string }[] }
    expect(text).toBe(JSON.stringify({ documents }))
    expect(documents.map((d) => d.body.length)).toEqual([300_000, 400_000, 200_000])
    expect(Math.max(...chunks.map((c) => c.byteLength))).toBeLessThanOrEqual(2 * SLICE * 3)
    expect(chunks.length).toBeGreaterThanOrEqual(Math.floor(text.length / (2 * SLICE)))
  })

  it('sends an answer within one slice as one piece', async () => {
    const app = createApp(createMemoryDeps({}))
    const api = client(app, await tokenFor('acme'))
    const res = await api.get(`${base}/documents?bodies=true`)
    expect(res.headers.get('content-type')).toBe('application/json')
    const chunks = await chunksOf(res)
    expect(chunks.length).toBe(1)
    expect(JSON.parse(Buffer.from(chunks[0]).toString('utf8'))).toEqual({ documents: [] })
  })
})
