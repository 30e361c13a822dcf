/**
 * `GET …/documents?bodies=true` carries bodies up to the documentBodies budget (issue 21, third
 * pass: 20 documents of 1 MB were one 19.5 MB answer); the CLI reads the omitted ones one by one.
 */
import { beforeEach, describe, expect, it } from 'vitest'
import { ApiError, ServerToolsClient } from '../../functions/cli/client'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { WORK_BUDGETS } from '../../lib/config/expansion-budget'
import { MemoryDocumentStore } from '../../lib/stores/memory/document-store'
import { client, tokenFor } from '../support/http'

const base = '/brain/acme/projects/p1'
const BUDGET = WORK_BUDGETS.documentBodies.limit
let app: ReturnType<typeof createApp>
let api: ReturnType<typeof client>
let token: string

interface Listed {
  path: string
  version: number
  bytes: number
  body?: string
  bodyOmitted?: boolean
}

/** Six notes of 600,000 bytes and a small one at the end: 3.6 MB, past the budget. */
async function seed() {
  for (let i = 0; i < 6; i++)
    expect((await api.put(`${base}/documents/notes/n${i}.md`, String(i).repeat(600_000), { 'content-type': 'text/markdown' })).status).toBe(
      201,
    )
  expect((await api.put(`${base}/documents/notes/z.md`, 'small', { 'content-type': 'text/markdown' })).status).toBe(201)
}

beforeEach(async () => {
  app = createApp(createMemoryDeps({}))
  token = await tokenFor('acme')
  api = client(app, token)
})

describe('a layer export (bodies=true)', () => {
  it('carries bodies in path order while they fit the budget; the others are listed with bodyOmitted', async () => {
    await seed()
    const { documents } = (await (await api.get(`${base}/documents?bodies=true`)).json()) as { documents: Listed[] }
    expect(documents.map((d) => [d.path, d.body !== undefined, d.bodyOmitted === true])).toEqual([
      ['notes/n0.md', true, false],
      ['notes/n1.md', true, false],
      ['notes/n2.md', true, false],
      ['notes/n3.md', false, true],
      ['notes/n4.md', false, true],
      ['notes/n5.md', false, true],
      ['notes/z.md', true, false],
    ])
    const carried = documents.reduce((a, d) => a + (d.body?.length ?? 0), 0)
    expect(carried).toBeLessThanOrEqual(BUDGET)
    expect(documents.every((d) => d.bytes > 0)).toBe(true)
  })

  it('lets the CLI client read every body, the omitted ones one request each', async () => {
    await seed()
    const requests: string[] = []
    const cli = new ServerToolsClient('http://st.test/brain/acme', token, async (url, init) => {
      requests.push(`${init?.method} ${new URL(String(url)).pathname}`)
      return app.request(new URL(String(url)).pathname + new URL(String(url)).search, init)
    })
    const docs = await cli.listLayer('p1', { bodies: true })
    expect(docs.map((d) => d.body?.length)).toEqual([600_000, 600_000, 600_000, 600_000, 600_000, 600_000, 5])
    expect(docs.map((d) => d.body?.[0])).toEqual(['0', '1', '2', '3', '4', '5', 's'])
    expect(requests).toEqual([
      'GET /brain/acme/projects/p1/documents',
      'GET /brain/acme/projects/p1/documents/notes/n3.md',
      'GET /brain/acme/projects/p1/documents/notes/n4.md',
      'GET /brain/acme/projects/p1/documents/notes/n5.md',
    ])
  })

  it('makes the CLI stop with a conflict when an omitted document changed after the listing', async () => {
    await seed()
    const cli = new ServerToolsClient('http://st.test/brain/acme', token, async (url, init) => {
      const path = new URL(String(url)).pathname
      // a writer gets in between the listing and the read of n3
      if (path.endsWith('/notes/n3.md'))
        await api.put(`${base}/documents/notes/n3.md`, 'changed', { 'content-type': 'text/markdown', 'if-match': '"1"' })
      return app.request(path + new URL(String(url)).search, init)
    })
    const failure = await cli.listLayer('p1', { bodies: true }).catch((e) => e)
    expect(failure).toBeInstanceOf(ApiError)
    expect((failure as ApiError).status).toBe(409)
    expect((failure as ApiError).message).toBe('notes/n3.md in p1 changed while the layer was read (listed at version 1); run again')
  })

  it('reads no body on a second export of unchanged documents, and reads a document again once it is written', async () => {
    /** Counts the bodies the store hands over: what an export had to read (blobs, on S3). */
    class CountingStore extends MemoryDocumentStore {
      bodiesRead = 0
      override async listSized(...args: Parameters<MemoryDocumentStore['listSized']>) {
        const docs = await super.listSized(...args)
        this.bodiesRead += docs.filter((d) => d.body !== undefined).length
        return docs
      }
    }
    const store = new CountingStore()
    const counted = client(createApp(createMemoryDeps({ store })), token)
    const note = (i: number, edit: string) => `note ${i}, ${edit}, of the read-count test `.padEnd(500_000, String(i))
    for (let i = 0; i < 3; i++)
      expect((await counted.put(`${base}/documents/reads/n${i}.md`, note(i, 'first'), { 'content-type': 'text/markdown' })).status).toBe(
        201,
      )
    const exported = async () => {
      const { documents } = (await (await counted.get(`${base}/documents?bodies=true&prefix=reads/`)).json()) as { documents: Listed[] }
      return documents.map((d) => d.body)
    }
    expect(await exported()).toEqual([note(0, 'first'), note(1, 'first'), note(2, 'first')])
    expect(store.bodiesRead).toBe(3)
    expect(await exported()).toEqual([note(0, 'first'), note(1, 'first'), note(2, 'first')])
    expect(store.bodiesRead).toBe(3)
    expect((await counted.put(`${base}/documents/reads/n1.md`, note(1, 'second'), { 'content-type': 'text/markdown' })).status).toBe(200)
    expect(await exported()).toEqual([note(0, 'first'), note(1, 'second'), note(2, 'first')])
    expect(store.bodiesRead).toBe(4)
  })
})
