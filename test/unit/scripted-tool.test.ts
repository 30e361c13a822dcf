import { describe, expect, it } from 'vitest'
import type { ToolOutcome } from '../../lib/calls/outcome'
import { success, toolError } from '../../lib/calls/outcome'
import type { ServerToolConfig } from '../../lib/config/server-tool'
import { parseServerTool } from '../../lib/config/server-tool'
import type { CascadeDocument } from '../../lib/documents/cascade'
import { ManualClock } from '../../lib/runtime/clock'
import { silentLogger } from '../../lib/runtime/logger'
import { QuickJsSandbox } from '../../lib/sandbox'
import { executeJavascriptTool } from '../../lib/tools/builtins/execute_javascript'
import type { FactoryEnv, InvocationContext, Tool, ToolSpec } from '../../lib/tools/contracts'
import { FactoryRegistry } from '../../lib/tools/registry'
import { type ScriptedParameters, ScriptedToolFactory } from '../../lib/tools/types/scripted'
import { FakeSiblings } from './sandbox/fakes'

const sandbox = new QuickJsSandbox()
const factory = new ScriptedToolFactory({ sandbox })
const types = new FactoryRegistry([factory])

/** Documents of one project, editable between calls (the cascade itself is tested elsewhere). */
class Documents {
  readonly files = new Map<string, string>()
  reads = 0
  async read(path: string): Promise<CascadeDocument | undefined> {
    this.reads++
    const body = this.files.get(path)
    return body === undefined ? undefined : { path, body, version: 1, source: 'project' }
  }
}

function env(documents = new Documents()): FactoryEnv {
  return { tenant: 'acme', project: 'p1', documents, log: silentLogger, clock: new ManualClock(), problem() {} }
}

function ctx(fake = new FakeSiblings({}), depth = 0): InvocationContext {
  return { tenant: 'acme', project: 'p1', subject: 'user-1', processId: 'proc-9', tools: fake.tools(depth), depth }
}

function parse(yaml: string, name: string): ServerToolConfig<ScriptedParameters> {
  const r = parseServerTool(yaml, name, { mode: 'write', types })
  if (!r.ok) throw new Error(JSON.stringify(r.issues))
  return r.config as unknown as ServerToolConfig<ScriptedParameters>
}

function writeIssues(parameters: Record<string, unknown>) {
  const yaml = JSON.stringify({ type: 'scripted', description: 'd', parameters })
  const r = parseServerTool(yaml, 'x', { mode: 'write', types })
  return r.ok ? [] : r.issues.map((i) => ({ pointer: i.pointer, message: i.message }))
}

async function single(config: ServerToolConfig<ScriptedParameters>, e = env()): Promise<ToolSpec> {
  const specs = await factory.create(config, e)
  expect(specs).toHaveLength(1)
  return specs[0]
}

const ADD_NUMBERS = `name: add_numbers
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

const JIRA_SUMMARY = `name: jira_summary
type: scripted
description: Summarise a Jira ticket via the configured 'jira_get_issue' tool.
parameters:
  inputs:
    - name: ticket
      type: string
      description: Jira ticket id, e.g. ABC-123
  scriptPath: scripts/jira_summary.js
`

const JIRA_SCRIPT = `const issue = vance.tools.call("jira_get_issue", { id: ticket });
({ summary: issue.summary, status: issue.status })
`

describe('the spec examples', () => {
  it('runs add_numbers with a=5 and b=7 to { value: 12, durationMs }', async () => {
    const tool = await single(parse(ADD_NUMBERS, 'add_numbers'))
    const outcome = await tool.invoke({ a: 5, b: 7 }, ctx())
    expect(outcome).toEqual({ isError: false, content: { value: 12, durationMs: expect.any(Number) } })
  })

  it('runs jira_summary from its scriptPath, calling the sibling jira_get_issue', async () => {
    const docs = new Documents()
    docs.files.set('scripts/jira_summary.js', JIRA_SCRIPT)
    const fake = new FakeSiblings({
      jira_get_issue: (p) => success({ id: p.id, summary: 'Login fails on Safari', status: 'In Progress', assignee: 'kim' }),
    })
    const tool = await single(parse(JIRA_SUMMARY, 'jira_summary'), env(docs))
    const outcome = await tool.invoke({ ticket: 'ABC-123' }, ctx(fake))
    expect(outcome).toEqual({
      isError: false,
      content: { value: { summary: 'Login fails on Safari', status: 'In Progress' }, durationMs: expect.any(Number) },
    })
    expect(fake.calls).toEqual([{ name: 'jira_get_issue', params: { id: 'ABC-123' }, depth: 1 }])
  })
})

describe('parameters at write', () => {
  it('accepts the minimal form: inputs and source, engine and timeout defaulted', () => {
    expect(writeIssues({ inputs: [], source: '1' })).toEqual([])
  })

  it('refuses an engine other than javascript', () => {
    expect(writeIssues({ engine: 'python', inputs: [], source: '1' })).toEqual([
      { pointer: '/parameters/engine', message: 'parameters.engine must be one of "javascript"' },
    ])
  })

  it('refuses a timeout above 30000 ms instead of clamping it, and one below 1 ms', () => {
    expect(writeIssues({ timeoutMs: 30_001, inputs: [], source: '1' })).toEqual([
      { pointer: '/parameters/timeoutMs', message: expect.stringMatching(/<= 30000/) },
    ])
    expect(writeIssues({ timeoutMs: 0, inputs: [], source: '1' })).toEqual([
      { pointer: '/parameters/timeoutMs', message: expect.stringMatching(/>= 1/) },
    ])
    expect(writeIssues({ timeoutMs: 1.5, inputs: [], source: '1' })).toEqual([
      { pointer: '/parameters/timeoutMs', message: expect.stringMatching(/integer/) },
    ])
    expect(writeIssues({ timeoutMs: 30_000, inputs: [], source: '1' })).toEqual([])
  })

  it('takes a script without inputs, whose tool then takes an empty object', async () => {
    expect(writeIssues({ source: '1' })).toEqual([])
    const spec = await single(config({ source: '41 + 1' }))
    expect(spec.inputSchema).toEqual(await single(config({ inputs: [], source: '41 + 1' })).then((s) => s.inputSchema))
  })

  it('names the field a nested typo was meant to be, and puts it before what it caused', () => {
    expect(writeIssues({ scriptpath: 'scripts/a.js' })).toEqual([
      { pointer: '/parameters/scriptpath', message: "parameters.scriptpath is not allowed here — did you mean 'scriptPath'?" },
    ])
    expect(writeIssues({ source: '1', inputs: [{ name: 'a', tpye: 'string' }] })).toEqual([
      { pointer: '/parameters/inputs/0/tpye', message: "parameters.inputs[0].tpye is not allowed here — did you mean 'type'?" },
      { pointer: '/parameters/inputs/0/type', message: 'parameters.inputs[0].type is required' },
    ])
  })

  it('requires exactly one of source and scriptPath', () => {
    expect(writeIssues({ inputs: [] })).toEqual([{ pointer: '/parameters', message: 'exactly one of source or scriptPath is required' }])
    expect(writeIssues({ inputs: [], source: '1', scriptPath: 'scripts/a.js' })).toEqual([
      { pointer: '/parameters/scriptPath', message: 'give either source or scriptPath, not both' },
    ])
  })

  it('refuses an input type outside the six JSON types and a name that is not an identifier', () => {
    expect(writeIssues({ inputs: [{ name: 'a', type: 'date' }], source: '1' })).toEqual([
      {
        pointer: '/parameters/inputs/0/type',
        message: expect.stringMatching(/must be one of "string", "number", "integer", "boolean", "object", "array"/),
      },
    ])
    expect(writeIssues({ inputs: [{ name: 'first-name', type: 'string' }], source: '1' })).toEqual([
      { pointer: '/parameters/inputs/0/name', message: expect.stringMatching(/pattern/) },
    ])
  })

  it('refuses the reserved name vance, duplicate names, reserved words and names of standard globals', () => {
    expect(writeIssues({ inputs: [{ name: 'vance', type: 'object' }], source: '1' })).toEqual([
      { pointer: '/parameters/inputs/0/name', message: "input name 'vance' is reserved" },
    ])
    expect(
      writeIssues({
        inputs: [
          { name: 'a', type: 'number' },
          { name: 'a', type: 'string' },
        ],
        source: '1',
      }),
    ).toEqual([{ pointer: '/parameters/inputs/1/name', message: "input name 'a' is declared twice" }])
    expect(writeIssues({ inputs: [{ name: 'class', type: 'string' }], source: '1' })).toEqual([
      { pointer: '/parameters/inputs/0/name', message: "input name 'class' is a JavaScript reserved word and can't be a variable" },
    ])
    expect(writeIssues({ inputs: [{ name: 'JSON', type: 'string' }], source: '1' })).toEqual([
      { pointer: '/parameters/inputs/0/name', message: "input name 'JSON' would hide the standard global JSON" },
    ])
  })

  it('generates the input schema from inputs, with required inputs by default and no required list when none is', async () => {
    const tool = await single({ ...parse(ADD_NUMBERS, 'add_numbers') })
    expect(tool.inputSchema).toEqual({
      type: 'object',
      properties: { a: { type: 'number', description: 'First operand' }, b: { type: 'number', description: 'Second operand' } },
      required: ['a', 'b'],
      additionalProperties: false,
    })
    const optional = await single(config({ inputs: [{ name: 'q', type: 'string', required: false }], source: 'q' }))
    expect(optional.inputSchema).toEqual({ type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false })
  })
})

function config(parameters: ScriptedParameters, name = 'tool_x'): ServerToolConfig<ScriptedParameters> {
  return {
    name,
    type: 'scripted',
    description: 'd',
    enabled: true,
    primary: false,
    labels: [],
    disabledSubTools: [],
    defaultDeferred: false,
    parameters,
  }
}

describe('invocation', () => {
  it('validates arguments before any script runs and names the input', async () => {
    const docs = new Documents()
    docs.files.set('scripts/s.js', 'a')
    const tool = await single(config({ inputs: [{ name: 'a', type: 'number' }], scriptPath: 'scripts/s.js' }), env(docs))
    expect(await tool.invoke({}, ctx())).toEqual({
      isError: true,
      content: { message: "Invalid arguments for 'tool_x': a is required.", errors: [{ pointer: '/a', message: 'a is required' }] },
    })
    expect(await tool.invoke({ a: 'five' }, ctx())).toMatchObject({
      isError: true,
      content: { message: "Invalid arguments for 'tool_x': a must be a number, got string." },
    })
    expect(await tool.invoke({ a: 1, extra: true }, ctx())).toMatchObject({
      isError: true,
      content: { message: "Invalid arguments for 'tool_x': extra is not allowed here." },
    })
    expect(docs.reads).toBe(0)
  })

  it('binds an absent optional input as null and passes objects and arrays through as JSON', async () => {
    const tool = await single(
      config({
        inputs: [
          { name: 'opt', type: 'string', required: false },
          { name: 'obj', type: 'object' },
          { name: 'arr', type: 'array' },
          { name: 'int', type: 'integer' },
          { name: 'flag', type: 'boolean' },
        ],
        source: '[opt, obj.k, arr.length, int + 1, !flag]',
      }),
    )
    const outcome = await tool.invoke({ obj: { k: 'v' }, arr: [1, 2], int: 41, flag: false }, ctx())
    expect(outcome).toMatchObject({ isError: false, content: { value: [null, 'v', 2, 42, true] } })
  })

  it('refuses an object input nested deeper than 64 levels', async () => {
    let deep: unknown = {}
    for (let i = 0; i < 70; i++) deep = { d: deep }
    const tool = await single(config({ inputs: [{ name: 'o', type: 'object' }], source: '1' }))
    expect(await tool.invoke({ o: deep as object }, ctx())).toMatchObject({
      isError: true,
      content: { message: "Invalid arguments for 'tool_x': o nests deeper than 64 levels." },
    })
  })

  it('reads scriptPath on every invocation, so an edit is live without reloading the tool', async () => {
    const docs = new Documents()
    docs.files.set('scripts/v.js', '"v1"')
    const tool = await single(config({ inputs: [], scriptPath: 'scripts/v.js' }), env(docs))
    expect(await tool.invoke({}, ctx())).toMatchObject({ content: { value: 'v1' } })
    docs.files.set('scripts/v.js', '"v2"')
    expect(await tool.invoke({}, ctx())).toMatchObject({ content: { value: 'v2' } })
    expect(docs.reads).toBe(2)
  })

  it('answers a tool error naming the path when the script is missing or empty', async () => {
    const docs = new Documents()
    const tool = await single(config({ inputs: [], scriptPath: 'scripts/gone.js' }), env(docs))
    expect(await tool.invoke({}, ctx())).toEqual({
      isError: true,
      content: {
        message: "Script 'scripts/gone.js' of tool 'tool_x' does not exist in project 'p1', the tenant layer or the bundled defaults.",
        path: 'scripts/gone.js',
      },
    })
    docs.files.set('scripts/gone.js', '  \n')
    expect(await tool.invoke({}, ctx())).toEqual({
      isError: true,
      content: { message: "Script 'scripts/gone.js' of tool 'tool_x' is empty.", path: 'scripts/gone.js' },
    })
  })

  it('answers { error, message } for a failing script', async () => {
    const tool = await single(config({ inputs: [], source: 'null.x' }))
    expect(await tool.invoke({}, ctx())).toEqual({
      isError: true,
      content: { error: 'GUEST_EXCEPTION', message: expect.stringMatching(/^TypeError: .*null.* \(line 1, column \d+\)$/) },
    })
  })

  it('applies its configured timeout', async () => {
    const fake = new FakeSiblings({ hang: () => new Promise<ToolOutcome>(() => {}) })
    const tool = await single(config({ inputs: [], source: 'vance.tools.call("hang", {})', timeoutMs: 30 }))
    expect(await tool.invoke({}, ctx(fake))).toEqual({
      isError: true,
      content: { error: 'TIMEOUT', message: 'the script did not finish within its 30 ms timeout' },
    })
  })

  it('exposes tenant, project and process to the script through vance.context', async () => {
    const tool = await single(config({ inputs: [], source: 'vance.context' }))
    expect(await tool.invoke({}, ctx())).toMatchObject({ content: { value: { tenant: 'acme', project: 'p1', processId: 'proc-9' } } })
  })

  it('ends self-recursion through siblings at the nesting limit with a clear error', async () => {
    // A tool that calls itself; the siblings enforce depth like the dispatcher does.
    // four nested levels may each start an engine (seconds on a loaded machine): the deadline is not what this tests
    const tool = await single(
      config({ inputs: [{ name: 'n', type: 'integer' }], source: 'vance.tools.call("loop", { n: n + 1 })', timeoutMs: 30_000 }, 'loop'),
    )
    const seen: number[] = []
    const fake: FakeSiblings = new FakeSiblings({
      loop: (p, depth) => {
        seen.push(depth)
        return tool.invoke(p, ctx(fake, depth))
      },
    })
    const outcome = await tool.invoke({ n: 0 }, ctx(fake))
    expect(outcome).toEqual({
      isError: true,
      content: {
        error: 'HOST_EXCEPTION',
        message: "sibling call to 'loop' refused: tools are already nested 4 deep, the most allowed is 4",
      },
    })
    expect(seen).toEqual([1, 2, 3, 4])
  })
})

describe('execute_javascript', () => {
  const tool: Tool = executeJavascriptTool(sandbox)

  it('is a non-primary built-in labelled code with code and an optional timeout', () => {
    expect(tool).toMatchObject({
      name: 'execute_javascript',
      source: 'builtin',
      typeId: 'builtin',
      primary: false,
      deferred: false,
      labels: ['code'],
    })
    expect(tool.inputSchema).toMatchObject({
      required: ['code'],
      additionalProperties: false,
      properties: { code: { type: 'string' }, timeoutMs: { type: 'integer', minimum: 1, maximum: 30000 } },
    })
  })

  it('runs code in the same sandbox with the same result shapes', async () => {
    expect(await tool.invoke({ code: '[1, 2, 3].map((x) => x * 2)' }, ctx())).toEqual({
      isError: false,
      content: { value: [2, 4, 6], durationMs: expect.any(Number) },
    })
    expect(await tool.invoke({ code: 'while (true) {}' }, ctx())).toEqual({
      isError: true,
      content: { error: 'RESOURCE_EXHAUSTED', message: expect.any(String) },
    })
  })

  it('calls siblings through vance', async () => {
    const fake = new FakeSiblings({ whoami: () => success({ tenant: 'acme' }), broken: () => toolError('down for maintenance') })
    expect(await tool.invoke({ code: 'vance.tools.call("whoami", {}).tenant' }, ctx(fake))).toMatchObject({ content: { value: 'acme' } })
    expect(await tool.invoke({ code: 'vance.tools.call("broken", {})' }, ctx(fake))).toEqual({
      isError: true,
      content: { error: 'HOST_EXCEPTION', message: 'down for maintenance' },
    })
  })

  it('validates its own arguments', async () => {
    expect(await tool.invoke({}, ctx())).toMatchObject({
      isError: true,
      content: { message: "Invalid arguments for 'execute_javascript': code is required." },
    })
    expect(await tool.invoke({ code: '1', timeoutMs: 60_000 }, ctx())).toMatchObject({
      isError: true,
      content: { message: expect.stringMatching(/timeoutMs must be <= 30000/) },
    })
  })

  it('applies the timeout it is given', async () => {
    const fake = new FakeSiblings({ hang: () => new Promise<ToolOutcome>(() => {}) })
    expect(await tool.invoke({ code: 'vance.tools.call("hang", {})', timeoutMs: 25 }, ctx(fake))).toEqual({
      isError: true,
      content: { error: 'TIMEOUT', message: 'the script did not finish within its 25 ms timeout' },
    })
  })
})
