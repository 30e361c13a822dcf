/** Scripted tools end to end: written as YAML over HTTP, invoked through the invoke route and a process. */
import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { client, tokenFor } from '../support/http'

const base = '/brain/acme/projects/p1'
let api: ReturnType<typeof client>

beforeEach(async () => {
  api = client(createApp(createMemoryDeps()), await tokenFor('acme'))
})

const ADD = `name: add_numbers
type: scripted
description: Add two numbers and return the sum.
enabled: true
parameters:
  engine: javascript
  timeoutMs: 1000
  inputs:
    - name: a
      type: number
      description: First operand
    - name: b
      type: number
      description: Second operand
  source: |
    a + b
`

describe('scripted tools over HTTP', () => {
  it('runs the spec example add_numbers through the invoke route', async () => {
    expect((await api.put(`${base}/server-tools/add_numbers`, ADD)).status).toBe(201)
    const body = await (await api.post(`${base}/tools/add_numbers/invoke`, { params: { a: 5, b: 7 } })).json()
    expect(body).toEqual({ isError: false, content: { value: 12, durationMs: expect.any(Number) } })
  })

  it('answers a write with timeoutMs above 30000 with 422 and the line', async () => {
    const res = await api.put(
      `${base}/server-tools/slow`,
      ADD.replace('timeoutMs: 1000', 'timeoutMs: 60000').replace('name: add_numbers\n', ''),
    )
    expect(res.status).toBe(422)
    expect((await res.json()).errors[0]).toMatchObject({ pointer: '/parameters/timeoutMs', line: 6 })
  })

  it('reads scriptPath through the cascade and lets the script call a sibling tool', async () => {
    await api.put(
      `${base}/documents/scripts/who.js`,
      'const me = vance.tools.call("whoami", {}); ({ tenant: me.tenant, doubled: n * 2 })',
      { 'content-type': 'text/javascript' },
    )
    await api.put(
      `${base}/server-tools/who`,
      'type: scripted\ndescription: Who, twice.\nparameters:\n  inputs: [{ name: n, type: integer }]\n  scriptPath: scripts/who.js\n',
    )
    const body = await (await api.post(`${base}/tools/who/invoke`, { params: { n: 21 } })).json()
    expect(body).toEqual({ isError: false, content: { value: { tenant: 'acme', doubled: 42 }, durationMs: expect.any(Number) } })
  })

  it('keeps a script inside the process surface: a sibling outside the frozen list is unknown', async () => {
    await api.put(`${base}/documents/engines/tight.yaml`, 'allowedTools: [tool_list, tool_description, probe]\n', {
      'content-type': 'application/yaml',
    })
    await api.put(`${base}/documents/recipes/tight.yaml`, 'engine: tight\n', { 'content-type': 'application/yaml' })
    await api.put(
      `${base}/server-tools/probe`,
      'type: scripted\ndescription: Probe whoami.\nprimary: true\nparameters:\n  inputs: []\n  source: vance.tools.has("whoami")\n',
    )
    const spawn = await api.post(`${base}/processes`, { recipe: 'tight' })
    expect(spawn.status).toBe(201)
    const { id } = await spawn.json()
    const inProcess = await (await api.post(`${base}/processes/${id}/tool-calls`, { name: 'probe', params: {} })).json()
    expect(inProcess).toEqual({ isError: false, content: { value: false, durationMs: expect.any(Number) } })
    const outside = await (await api.post(`${base}/tools/probe/invoke`, { params: {} })).json()
    expect(outside.content.value).toBe(true)
  })

  it('runs execute_javascript as a built-in with the same result shapes', async () => {
    const ok = await (await api.post(`${base}/tools/execute_javascript/invoke`, { params: { code: '[1,2,3].map((x) => x * x)' } })).json()
    expect(ok).toEqual({ isError: false, content: { value: [1, 4, 9], durationMs: expect.any(Number) } })
    const loop = await (
      await api.post(`${base}/tools/execute_javascript/invoke`, { params: { code: 'while (true) {}', timeoutMs: 200 } })
    ).json()
    expect(loop.isError).toBe(true)
    expect(loop.content.error).toMatch(/TIMEOUT|RESOURCE_EXHAUSTED/)
  })
})
