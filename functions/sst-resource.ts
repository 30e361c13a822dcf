/**
 * `Resource`: the links sst.config.ts declares, read as sst/resource reads them on Node
 * (sst@4.17.1, dist/resource/node.js: the SST_RESOURCE_* variables, SST_RESOURCES_JSON, and the
 * links SST encrypts into the bundle as SST_KEY_FILE under SST_KEY), through sst's own
 * `createResource`, so lookups and errors are sst's.
 *
 * Why not sst/resource itself: its Node entry imports `process`, `fs` and `crypto` as ES modules,
 * and an ES module import of a Node built-in builds the built-in's facade, which reads every
 * export, getters included — node:process's loads process.report and builds
 * allowedNodeEnvironmentFlags. That was 4–5 ms CPU of every cold start
 * (docs/operations/cold-start-and-latency.md); the built-ins taken with
 * `require` build no facade. test/unit/sst-resource.test.ts holds it to
 * sst/resource on the same environment, the encrypted file included.
 */
import { createRequire } from 'node:module'
import type { Resource as Links } from 'sst/resource'
import { createResource, loadResourceData, loadResourceEnvironment } from 'sst/resource/shared'

const builtin = createRequire(import.meta.url)

const state = globalThis as { SST_KEY_FILE_DATA?: Record<string, unknown> }

export const Resource: Links = createResource<Links>(() => {
  const environment: Record<string, string | undefined> = { ...process.env }
  loadResourceEnvironment(environment)
  if (environment.SST_RESOURCES_JSON) {
    try {
      loadResourceData(JSON.parse(environment.SST_RESOURCES_JSON))
    } catch (error) {
      console.error('Failed to parse SST_RESOURCES_JSON:', error)
    }
  }
  if (environment.SST_KEY_FILE && environment.SST_KEY && !state.SST_KEY_FILE_DATA) {
    const { createDecipheriv } = builtin('node:crypto') as typeof import('node:crypto')
    const encrypted = (builtin('node:fs') as typeof import('node:fs')).readFileSync(environment.SST_KEY_FILE)
    // AES-256-GCM under a zero nonce, the tag in the last 16 bytes: as SST writes the file
    const decipher = createDecipheriv('aes-256-gcm', Buffer.from(environment.SST_KEY, 'base64'), Buffer.alloc(12, 0))
    decipher.setAuthTag(encrypted.subarray(-16))
    const plain = Buffer.concat([decipher.update(encrypted.subarray(0, -16)), decipher.final()])
    loadResourceData(JSON.parse(plain.toString()))
  }
  if (state.SST_KEY_FILE_DATA) loadResourceData(state.SST_KEY_FILE_DATA)
})
