/** Conditional writes (RFC 9110 §13) on server tools and raw documents, through the HTTP app. */
import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { client, tokenFor } from '../support/http'

const base = '/brain/acme/projects/p1'
const tool = `${base}/server-tools/my_doc`
const doc = `${base}/documents/notes/a.md`
const yaml = (description: string) => `type: doc_lookup\ndescription: ${description}\nparameters:\n  path: documents/getting-started.md\n`
const md = { 'content-type': 'text/markdown' }
let api: ReturnType<typeof client>

beforeEach(async () => {
  api = client(createApp(createMemoryDeps()), await tokenFor('acme'))
})

const putTool = (description: string, headers: Record<string, string> = {}) => api.put(tool, yaml(description), headers)
const descriptionNow = async () => (await (await api.get(tool)).json()).description

describe('If-Match', () => {
  it('answers 412, not 400, to well-formed entity-tags that name no version', async () => {
    await putTool('v1')
    for (const tag of ['"stale-0"', '"1234567890123456"', '"01"', '""', '"9", "stale"']) {
      const res = await putTool('changed', { 'if-match': tag })
      expect([tag, res.status]).toEqual([tag, 412])
    }
    expect(await descriptionNow()).toBe('v1')
  })

  it('answers 400 to a malformed If-Match and says what an entity-tag looks like', async () => {
    await putTool('v1')
    for (const value of ['1', '"1', 'W/1', '"a b"', ',', 'abc, "1"']) {
      const res = await putTool('changed', { 'if-match': value })
      expect([value, res.status]).toEqual([value, 400])
      expect((await res.json()).detail).toContain('quoted entity-tags')
    }
  })

  it('uses the strong comparison: a weak tag never matches, even of the current version', async () => {
    await putTool('v1')
    expect((await putTool('weak', { 'if-match': 'W/"1"' })).status).toBe(412)
    expect((await putTool('strong', { 'if-match': '"1"' })).status).toBe(200)
  })

  it('matches when any tag of a list names the current version', async () => {
    await putTool('v1')
    await putTool('v2')
    const res = await putTool('v3', { 'if-match': '"1", "2", "x"' })
    expect([res.status, res.headers.get('etag')]).toEqual([200, '"3"'])
    expect((await putTool('v4', { 'if-match': '"1", "2"' })).status).toBe(412)
  })

  it("takes '*' to mean the document exists: 412 for a missing one, 200 for any version", async () => {
    expect((await putTool('new', { 'if-match': '*' })).status).toBe(412)
    expect((await api.get(tool)).status).toBe(404)
    await putTool('v1')
    await putTool('v2')
    expect((await putTool('v3', { 'if-match': '*' })).status).toBe(200)
    expect(await descriptionNow()).toBe('v3')
  })

  it('is evaluated before If-None-Match: a missing document with If-Match "1" and If-None-Match * is not created', async () => {
    const res = await putTool('new', { 'if-match': '"1"', 'if-none-match': '*' })
    expect(res.status).toBe(412)
    expect((await api.get(tool)).status).toBe(404)
  })

  it('guards raw documents and deletes alike', async () => {
    expect((await api.put(doc, '# a', { ...md, 'if-match': '"1"' })).status).toBe(412)
    expect((await api.put(doc, '# a', md)).status).toBe(201)
    expect((await api.put(doc, '# b', { ...md, 'if-match': '"stale-0"' })).status).toBe(412)
    expect((await api.delete(doc, { 'if-match': '"stale-0"' })).status).toBe(412)
    expect((await api.delete(doc, { 'if-match': 'W/"1"' })).status).toBe(412)
    expect((await api.delete(doc, { 'if-match': '*' })).status).toBe(204)
    expect((await api.delete(doc, { 'if-match': '*' })).status).toBe(404)
  })
})

describe('If-None-Match', () => {
  it("with '*' creates only when absent", async () => {
    expect((await putTool('v1', { 'if-none-match': '*' })).status).toBe(201)
    expect((await putTool('v2', { 'if-none-match': '*' })).status).toBe(412)
  })

  it('with tags refuses the write when the current version is among them, weakly compared', async () => {
    await putTool('v1')
    expect((await putTool('v2', { 'if-none-match': 'W/"1"' })).status).toBe(412)
    expect((await putTool('v2', { 'if-none-match': '"1"' })).status).toBe(412)
    const res = await putTool('v2', { 'if-none-match': '"7", "stale"' })
    expect([res.status, res.headers.get('etag')]).toEqual([200, '"2"'])
  })

  it('with tags creates a missing document', async () => {
    expect((await putTool('v1', { 'if-none-match': '"1"' })).status).toBe(201)
  })

  it("with '*' on a delete is 412 for an existing document and 404 for a missing one", async () => {
    await putTool('v1')
    expect((await api.delete(tool, { 'if-none-match': '*' })).status).toBe(412)
    await api.delete(tool)
    expect((await api.delete(tool, { 'if-none-match': '*' })).status).toBe(404)
  })

  it('answers 400 to a malformed header', async () => {
    expect((await putTool('v1', { 'if-none-match': 'nope' })).status).toBe(400)
  })
})
