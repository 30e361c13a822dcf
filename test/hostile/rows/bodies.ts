/**
 * F3 and its class: request bodies shaped to make a parser work for everyone. Each is answered
 * with a 4xx naming the place, by a linear shape scan before any parser runs (lib/config/nesting.ts).
 */
import assert from 'node:assert/strict'
import type { HostileApp, HostileRowSet } from '../harness'

const INVOKE = '/projects/p1/tools/whoami/invoke'
const YAML = { 'content-type': 'application/yaml' }

async function problem(res: Response) {
  const text = await res.text()
  try {
    return {
      status: res.status,
      body: JSON.parse(text) as { detail?: string; errors?: { message: string; line?: number; column?: number }[] },
    }
  } catch {
    return { status: res.status, body: { detail: text } }
  }
}

async function expectRefused(res: Promise<Response>, status: number, where?: { line: number }) {
  const p = await problem(await res)
  assert.equal(p.status, status, JSON.stringify(p.body).slice(0, 400))
  if (where) assert.equal(p.body.errors?.[0]?.line, where.line, JSON.stringify(p.body).slice(0, 400))
  return p
}

export const rowSet: HostileRowSet = {
  name: 'hostile request bodies',
  rows: [
    {
      name: "F3: '[a' × 520,000 posted as JSON to an invoke route is a 400 naming line and column",
      async run(app: HostileApp) {
        const p = await expectRefused(app.call('mallory', 'POST', INVOKE, '[a'.repeat(520_000)), 400, { line: 1 })
        assert.match(p.body.errors![0].message, /nested deeper than 100 levels at line 1, column 201/)
      },
    },
    {
      name: 'F3: four 500 KB unbalanced bodies in parallel are four 400s',
      async run(app: HostileApp) {
        await Promise.all(Array.from({ length: 4 }, () => expectRefused(app.call('mallory', 'POST', INVOKE, '[a'.repeat(250_000)), 400)))
      },
    },
    {
      name: 'F3: a tool PUT as YAML nested 300,000 flow levels deep is a 422 naming the line',
      async run(app: HostileApp) {
        const body = `type: scripted\ndescription: deep\nparameters:\n  source: ${'['.repeat(300_000)}\n`
        await expectRefused(app.call('mallory', 'PUT', '/projects/p1/server-tools/deep', body, YAML), 422, { line: 4 })
      },
    },
    {
      name: 'variant: a recipe PUT as 200,000 compact block sequences (`- - - …`) is a 422',
      async run(app: HostileApp) {
        await expectRefused(
          app.call(
            'mallory',
            'PUT',
            '/projects/p1/documents/recipes/deep.yaml',
            `engine: default\nallowedToolsAdd:\n${'- '.repeat(200_000)}x\n`,
            YAML,
          ),
          422,
          { line: 3 },
        )
      },
    },
    {
      name: 'variant: a well-formed 900 KB JSON body nested 150,000 objects deep is a 400',
      async run(app: HostileApp) {
        await expectRefused(app.call('mallory', 'POST', INVOKE, `{"params":${'{"a":'.repeat(150_000)}1${'}'.repeat(150_001)}`), 400, {
          line: 1,
        })
      },
    },
    {
      name: 'variant: a 1 MB flat JSON body that is broken at its end is a 400 naming the column, never parsed as YAML',
      async run(app: HostileApp) {
        const body = `{"params":{"xs":[${Array.from({ length: 150_000 }, (_, i) => i).join(',')},]}}`
        const p = await expectRefused(app.call('mallory', 'POST', INVOKE, body), 400, { line: 1 })
        assert.match(p.body.errors![0].message, /unexpected '\]'/)
      },
    },
    {
      name: 'variant: a process spawn body sent as YAML nested 100,000 levels by indentation is a 400',
      async run(app: HostileApp) {
        // each level one space deeper: 100,000 levels would be 5 GB, so the scan meets it as far as 1 MB goes
        const body = `${Array.from({ length: 1400 }, (_, i) => `${' '.repeat(i)}a:`).join('\n')} 1\n`
        await expectRefused(app.call('mallory', 'POST', '/projects/p1/processes', body, YAML), 400, { line: 101 })
      },
    },
  ],
}
