/** docs/reference/routes.md maps the OpenAPI document: every operation it serves, nothing it does not. */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { openApiDocument } from '../../functions/http/openapi'

const METHODS = ['get', 'put', 'post', 'patch', 'delete']
/** Served outside the OpenAPI document: the document itself, the health check, the console's pages. */
const OUTSIDE_OPENAPI = ['GET /health', 'GET /openapi.json', 'GET /console/…']

describe('the routes reference', () => {
  it('lists every operation of /openapi.json and no operation it does not serve', () => {
    const paths = (openApiDocument() as { paths: Record<string, Record<string, unknown>> }).paths
    const served = Object.entries(paths).flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((m) => METHODS.includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    )
    const listed = [...readFileSync('docs/reference/routes.md', 'utf8').matchAll(/^\| `((?:GET|PUT|POST|PATCH|DELETE) [^`]+)`/gm)].map(
      (m) => m[1],
    )
    expect(served.length).toBeGreaterThan(25)
    expect(listed.filter((r) => !OUTSIDE_OPENAPI.includes(r)).sort()).toEqual([...served].sort())
  })
})
