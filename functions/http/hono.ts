/**
 * Every Hono app of the service routes with a LinearRouter, built for processes that start often
 * (Lambda): adding a route is an array push, and its match code is small. Hono's default (a
 * SmartRouter over RegExpRouter) compiles all routes into one pattern on the first request (~4 ms
 * of a cold start with these ~70 routes); a TrieRouter builds nodes as routes are added. Against
 * the TrieRouter, the LinearRouter measured 3.5 % less import and 2 % less CPU over the whole cold
 * start (bench/coldstart.ts, 60 rounds), and the warm manifest route 0.80–0.85× its plain route
 * instead of 0.85–0.91× — matching walks the routes, a few µs next to a route's work.
 *
 * Its one limit: a pattern may not combine a parameter with a trailing wildcard (it throws when a
 * request reaches such a route), so tail paths are `:path{.+}` and middleware that needs the
 * tenant reads it from the path (./auth.ts). test/http/routes.test.ts checks every pattern.
 */
import type { Env, Schema } from 'hono'
import { HonoBase, type HonoOptions } from 'hono/hono-base'
import { type Result, type Router, UnsupportedPathError } from 'hono/router'
import { checkOptionalParameter } from 'hono/utils/url'

// biome-ignore lint/complexity/noBannedTypes: the same default as Hono's own class, so the two stay interchangeable
export class Hono<E extends Env = Env, S extends Schema = {}, BasePath extends string = '/'> extends HonoBase<E, S, BasePath> {
  constructor(options: HonoOptions<E> = {}) {
    super(options)
    this.router = options.router ?? new RememberingLinearRouter()
  }
}

/** One part of a parameterised pattern: a literal (`/processes`) or a parameter, with its compiled pattern if it has one. */
type Part = { literal: string } | { name: string; pattern?: RegExp }

/** A route's pattern as matching reads it, parsed from the pattern string on the route's first match. */
type Shape =
  | { kind: 'any' }
  | { kind: 'static' }
  | { kind: 'star'; parts: string[]; endsWithStar: boolean; endsWithSlashStar: boolean }
  | { kind: 'labels'; parts: Part[]; slashes?: number }
  | { kind: 'unsupported' }

interface Route<T> {
  method: string
  path: string
  handler: T
  shape?: Shape
}

const SPLIT_PATH = /\/(:\w+(?:{(?:(?:{[\d,]+})|[^}])+})?)|\/[^/?]+|(\?)/g
const EMPTY_PARAMS: Record<string, string> = Object.create(null)
/** Methods whose route lists are kept; any other method (a client may send any token) walks every route, as before. */
const LISTED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/**
 * Hono's LinearRouter, matching exactly as it does (test/unit/router.test.ts compares the two on
 * every route of the app), minus the work it repeated on every request: it split each candidate
 * pattern with a regular expression, compiled a `RegExp` for each `{…}` parameter it tried and
 * walked the routes of every method. That was the largest single cost of a warm tool call in
 * process (~8 % of its CPU). Here a pattern is parsed once, on its first match (adding a route
 * stays an array push, so a cold start pays nothing more), and each method keeps the list of its
 * routes, rebuilt after an `add`.
 */
export class RememberingLinearRouter<T> implements Router<T> {
  name = 'RememberingLinearRouter'
  readonly #routes: Route<T>[] = []
  readonly #byMethod = new Map<string, Route<T>[]>()

  add(method: string, path: string, handler: T): void {
    for (const p of checkOptionalParameter(path) ?? [path]) this.#routes.push({ method, path: p, handler })
    this.#byMethod.clear()
  }

  match(method: string, path: string): Result<T> {
    const handlers: [T, Record<string, string>][] = []
    let slashes: number | undefined
    for (const route of this.#candidates(method)) {
      const shape = (route.shape ??= shapeOf(route.path))
      if (shape.kind === 'any') handlers.push([route.handler, EMPTY_PARAMS])
      else if (shape.kind === 'static') {
        if (route.path === path || `${route.path}/` === path) handlers.push([route.handler, EMPTY_PARAMS])
      } else if (shape.kind === 'star') {
        if (matchesStar(shape, path)) handlers.push([route.handler, EMPTY_PARAMS])
      } else if (shape.kind === 'labels') {
        // a pattern of plain segments matches only a path of as many (a trailing slash aside)
        if (shape.slashes !== undefined) {
          slashes ??= slashesIn(path)
          if (slashes !== shape.slashes && !(slashes === shape.slashes + 1 && path.charCodeAt(path.length - 1) === 47)) continue
        }
        const params = matchLabels(shape.parts, path)
        if (params) handlers.push([route.handler, params])
      } else throw new UnsupportedPathError()
    }
    return [handlers]
  }

  #candidates(method: string): Route<T>[] {
    if (!LISTED_METHODS.has(method)) return this.#routes.filter((r) => r.method === method || r.method === 'ALL')
    let list = this.#byMethod.get(method)
    if (!list) {
      list = this.#routes.filter((r) => r.method === method || r.method === 'ALL')
      this.#byMethod.set(method, list)
    }
    return list
  }
}

function shapeOf(path: string): Shape {
  if (path === '*' || path === '/*') return { kind: 'any' }
  const hasStar = path.includes('*')
  const hasLabel = path.includes(':')
  if (!hasStar && !hasLabel) return { kind: 'static' }
  if (hasStar && hasLabel) return { kind: 'unsupported' }
  if (hasStar) {
    const endsWithStar = path.endsWith('*')
    const endsWithSlashStar = path.endsWith('/*')
    return {
      kind: 'star',
      parts: (endsWithStar ? path.slice(0, endsWithSlashStar ? -2 : -1) : path).split('*'),
      endsWithStar,
      endsWithSlashStar,
    }
  }
  const raw = path.match(SPLIT_PATH) ?? []
  const parts = raw.map((part, j): Part => {
    if (part.charCodeAt(1) !== 58) return { literal: part }
    const name = part.slice(2)
    if (name.charCodeAt(name.length - 1) !== 125) return { name }
    const brace = name.indexOf('{')
    const next = raw[j + 1]
    // as Hono builds it: the next literal part, unescaped, is a lookahead of the parameter's pattern
    const lookahead = next && next[1] !== ':' && next[1] !== '*' ? `(?=${next})` : ''
    return { name: name.slice(0, brace), pattern: new RegExp(name.slice(brace + 1, -1) + lookahead, 'd') }
  })
  // each literal part is one `/segment` and each parameter without a pattern one more: a match uses
  // exactly one slash per part
  const plain = parts.every((p) => ('name' in p ? !p.pattern : p.literal.charCodeAt(0) === 47 && p.literal.indexOf('/', 1) === -1))
  return { kind: 'labels', parts, ...(plain ? { slashes: parts.length } : {}) }
}

function slashesIn(path: string): number {
  let n = 0
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 47) n++
  return n
}

function matchesStar(shape: Extract<Shape, { kind: 'star' }>, path: string): boolean {
  const { parts, endsWithStar, endsWithSlashStar } = shape
  const lastIndex = parts.length - 1
  let pos = 0
  for (let j = 0; j < parts.length; j++) {
    const part = parts[j]
    if (path.indexOf(part, pos) !== pos) return false
    pos += part.length
    if (j === lastIndex) {
      if (endsWithSlashStar) {
        if (pos !== path.length && path.charCodeAt(pos) !== 47) return false
      } else if (!endsWithStar && pos !== path.length && !(pos === path.length - 1 && path.charCodeAt(pos) === 47)) return false
    } else {
      const index = path.indexOf('/', pos)
      if (index === -1) return false
      pos = index
    }
  }
  return true
}

/** The parameter values of the route being matched, in pattern order (matching is synchronous: one buffer serves every match). */
const VALUES: string[] = []

/**
 * The route's parameters if `path` matches its parts. Values are kept in VALUES until the whole
 * pattern matched: most routes tried fail after a parameter or two (every route sits under
 * `/brain/:tenant`), and each used to allocate its parameter object first.
 */
function matchLabels(parts: Part[], path: string): Record<string, string> | undefined {
  const lastIndex = parts.length - 1
  let pos = 0
  let found = 0
  for (let j = 0; j < parts.length; j++) {
    if (pos === -1 || pos >= path.length) return undefined
    const part = parts[j]
    if ('name' in part) {
      if (path.charCodeAt(pos) !== 47) return undefined
      let value: string
      if (part.pattern) {
        const rest = path.slice(pos + 1)
        const m = part.pattern.exec(rest)
        const span = m?.indices?.[0]
        if (span?.[0] !== 0 || span[1] === 0) return undefined
        value = rest.slice(span[0], span[1])
        pos += span[1] + 1
      } else {
        let end = path.indexOf('/', pos + 1)
        if (end === -1) end = path.length
        if (end === pos + 1) return undefined
        value = path.slice(pos + 1, end)
        pos = end
      }
      VALUES[found++] = value
    } else {
      if (path.indexOf(part.literal, pos) !== pos) return undefined
      pos += part.literal.length
    }
    if (j === lastIndex && pos !== path.length && !(pos === path.length - 1 && path.charCodeAt(pos) === 47)) return undefined
  }
  const params: Record<string, string> = Object.create(null)
  let k = 0
  for (const part of parts) if ('name' in part) params[part.name] ||= VALUES[k++]
  return params
}
