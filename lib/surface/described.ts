/**
 * What a `tool_description` answer says of a tool that depends on the tool alone: its size as
 * rendered (what `describedBytes` charges), its code-mode declaration, and the UTF-8 JSON of its
 * long members. A tool object is one version of one tenant's document (lib/tools/service.ts keeps
 * expansions per document version; a write makes new objects), so kept per tool object these are
 * done once per version, never served stale after a write, and never shared between tenants. Every
 * answer was escaping and encoding its 1 MiB of descriptions again (issue 21 D2: 7.5 ms of the
 * shared thread per answer of 25 descriptions of 100,000 characters, whichever names or order).
 */
import { jsonBytes, WORK_BUDGETS } from '../config/expansion-budget'

const SLICE = WORK_BUDGETS.jsonRenderSlice.limit

import { RENDERED_MEMBER_MIN, type RenderedValue, renderedValueInSlices } from '../config/json-render'
import { BoundedCache } from '../runtime/bounded-cache'
import { codeDeclaration } from '../tools/code-declaration'
import type { Tool } from '../tools/contracts'
import { searchHintOf } from './discovery'

/** What the kept renderings may hold, all tenants together (default; SurfaceSettings.describedMemoBytes). */
export const DESCRIBED_MEMO_BYTES = 32 * 1024 * 1024

/** An entry's weight besides its renderings (the entry, the map's slot). */
const ENTRY_BYTES = 256

export interface DescribedParts {
  /** jsonBytes of [name, description, inputSchema, searchHint], up to describedBytes + 1 (more says "over"). */
  readonly measured: number
  /** Members of the answer's entry kept rendered (description, paramsSchema; declaration in code mode). */
  readonly rendered: Readonly<Record<string, RenderedValue>>
  readonly declaration?: string
  /** Whether the code-mode parts were asked for (a tool over the budget has no declaration all the same). */
  readonly coded: boolean
}

export class DescribedRenderings {
  private readonly cache: BoundedCache<Tool, DescribedParts>
  /** Tools measured and rendered since start (each a miss): tests count these, never time them. */
  renders = 0

  constructor(maxBytes = DESCRIBED_MEMO_BYTES) {
    this.cache = new BoundedCache(100_000, { maxBytes })
  }

  /** The parts of `tool`; `code` adds its declaration (a code-mode process asks for it, others never pay for it). */
  async of(tool: Tool, code: boolean): Promise<DescribedParts> {
    const kept = this.cache.get(tool)
    if (kept && (!code || kept.coded)) return kept
    this.renders++
    const measured =
      kept?.measured ?? jsonBytes([tool.name, tool.description, tool.inputSchema, searchHintOf(tool)], WORK_BUDGETS.describedBytes.limit)
    const rendered: Record<string, RenderedValue> = { ...kept?.rendered }
    // over the budget it is never described: nothing of it is rendered
    const fits = measured <= WORK_BUDGETS.describedBytes.limit
    if (fits && !kept) {
      if (tool.description.length >= RENDERED_MEMBER_MIN) rendered.description = await renderedValueInSlices(tool.description, SLICE)
      if (jsonBytes(tool.inputSchema, RENDERED_MEMBER_MIN) >= RENDERED_MEMBER_MIN)
        rendered.paramsSchema = await renderedValueInSlices(tool.inputSchema, SLICE)
    }
    let declaration: string | undefined = kept?.declaration
    if (code && fits && declaration === undefined) {
      declaration = codeDeclaration([tool]).text
      if (declaration.length >= RENDERED_MEMBER_MIN) rendered.declaration = await renderedValueInSlices(declaration, SLICE)
    }
    const parts: DescribedParts = {
      measured,
      rendered,
      coded: code || kept?.coded === true,
      ...(declaration !== undefined ? { declaration } : {}),
    }
    // each rendering counted twice: an MCP answer also keeps it escaped as the inside of a string (JsonAsText)
    let weight = ENTRY_BYTES + 2 * (declaration?.length ?? 0)
    for (const r of Object.values(rendered)) weight += 2 * r.json.byteLength
    this.cache.set(tool, parts, weight)
    return parts
  }

  /** Bytes the kept renderings weigh now. */
  get bytes(): number {
    return this.cache.bytes
  }
}
