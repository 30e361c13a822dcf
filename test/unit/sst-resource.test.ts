/**
 * functions/sst-resource.ts reads the links as sst/resource does: the same environment, fed to
 * each in a fresh node process (both keep their state in globals), gives the same links and the
 * same error for a link that is not there.
 */
import { execFile } from 'node:child_process'
import { createCipheriv, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const dir = mkdtempSync(join(tmpdir(), 'server-tools-sst-resource-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The links as SST encrypts them into the bundle: AES-256-GCM under a zero nonce, the tag appended. */
function keyFile(links: object): { SST_KEY: string; SST_KEY_FILE: string } {
  const key = randomBytes(32)
  const cipher = createCipheriv('aes-256-gcm', key, Buffer.alloc(12, 0))
  const file = join(dir, 'resource.enc')
  writeFileSync(file, Buffer.concat([cipher.update(JSON.stringify(links)), cipher.final(), cipher.getAuthTag()]))
  return { SST_KEY: key.toString('base64'), SST_KEY_FILE: file }
}

async function linksSeenBy(module: string, env: Record<string, string>) {
  const probe = `
    const { Resource } = await import(${JSON.stringify(module)});
    const read = (name) => { try { return Resource[name] } catch (e) { return { error: e.message } } };
    process.stdout.write(JSON.stringify({ App: read('App'), Documents: read('Documents'), Blobs: read('Blobs'), Processes: read('Processes'), Missing: read('Missing'), has: 'Blobs' in Resource, keys: Object.keys(Resource).sort() }));`
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], {
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 30_000,
  })
  return JSON.parse(stdout) as Record<string, unknown>
}

describe('the links read without sst/resource', () => {
  it('are the links sst/resource reads from the variables, SST_RESOURCES_JSON and the encrypted file, with its error for a missing one', async () => {
    const env = {
      SST_RESOURCE_App: JSON.stringify({ name: 'server-tools', stage: 'test' }),
      SST_RESOURCE_Documents: JSON.stringify({ name: 'docs-table', type: 'sst.aws.Dynamo' }),
      SST_RESOURCES_JSON: JSON.stringify({ Blobs: { name: 'blobs-bucket', type: 'sst.aws.Bucket' } }),
      AWS_LAMBDA_FUNCTION_NAME: 'api',
      ...keyFile({ Processes: { name: 'processes-table', type: 'sst.aws.Dynamo' } }),
    }
    const ours = await linksSeenBy(pathToFileURL(join(import.meta.dirname, '../../functions/sst-resource.ts')).href, env)
    const sst = await linksSeenBy('sst/resource', env)
    expect(ours).toEqual(sst)
    // and the case is not vacuous: every source was read, and the missing link was refused
    expect(ours).toMatchObject({
      Documents: { name: 'docs-table' },
      Blobs: { name: 'blobs-bucket' },
      Processes: { name: 'processes-table' },
      Missing: { error: expect.stringContaining('"Missing" is not linked') },
    })
  })
})
