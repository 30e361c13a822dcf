/**
 * `npm start`'s embedded stores on a thread of their own (functions/emulator-thread.ts, issue 21):
 * they answer while the thread that started them is blocked, close cleanly with their data kept,
 * and a failure — at start or later — is an error, never a hang. Real dynalite and s3rver on
 * 127.0.0.1; the only crash that is staged is the thread's own termination (a real `terminate()`,
 * what an uncaught error in the thread ends in).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { afterAll, describe, expect, it } from 'vitest'
import { type EmulatorThread, startEmulatorThread } from '../../functions/emulator-thread'
import { S3BlobStore } from '../../lib/stores/aws/blob-store'
import { type AwsClients, destroyAwsClients, makeAwsClients } from '../../lib/stores/aws/clients'
import { ensureBucket, ensureTable } from '../../lib/stores/aws/provision'
import { TEST_CREDENTIALS, TEST_REGION } from '../support/aws'

const dirs: string[] = []
const fresh = () => {
  const dir = mkdtempSync(join(tmpdir(), 'server-tools-emu-thread-'))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const onDisk = (dir: string) => ({ s3Directory: join(dir, 's3'), dynamoPath: join(dir, 'dynamodb') })
const clientsFor = (e: EmulatorThread): AwsClients =>
  makeAwsClients({ region: TEST_REGION, credentials: TEST_CREDENTIALS, dynamoEndpoint: e.dynamoEndpoint, s3Endpoint: e.s3Endpoint })
const TABLE = { name: 'kept', hashKey: { name: 'id', type: 'S' as const } }

/** A connection to `endpoint`'s port: 'open', or the error code it is refused with. */
const connect = (endpoint: string) =>
  new Promise<string>((resolve) => {
    const req = http.get(endpoint, (res) => {
      res.resume()
      resolve('open')
    })
    req.on('error', (e) => resolve((e as NodeJS.ErrnoException).code ?? e.message))
  })

/**
 * A ListTables sent from another thread while this one is blocked in Atomics.wait: the answer is
 * written to shared memory by that thread, so it can only arrive if the stores do not need this
 * thread's event loop. Returns the status the other thread saw (0: no answer while blocked).
 */
function listTablesWhileBlocked(endpoint: string, blockMs: number): { status: number; body: string } {
  const shared = new SharedArrayBuffer(4 + 4 + 4096)
  const flag = new Int32Array(shared, 0, 2)
  const client = new Worker(
    `
    const { workerData } = require('node:worker_threads')
    const http = require('node:http')
    const flag = new Int32Array(workerData.shared, 0, 2)
    const bytes = new Uint8Array(workerData.shared, 8)
    const req = http.request(workerData.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'DynamoDB_20120810.ListTables',
        authorization: 'AWS4-HMAC-SHA256 Credential=S3RVER/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
        'x-amz-date': '20260101T000000Z',
      },
    }, (res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => {
        bytes.set(Buffer.from(body).subarray(0, bytes.length))
        Atomics.store(flag, 1, Buffer.byteLength(body))
        Atomics.store(flag, 0, res.statusCode)
        Atomics.notify(flag, 0)
      })
    })
    req.end('{}')
    `,
    { eval: true, workerData: { shared, endpoint } },
  )
  // blocks this thread — the one that started the stores — until the answer or blockMs
  Atomics.wait(flag, 0, 0, blockMs)
  const status = Atomics.load(flag, 0)
  const body = Buffer.from(new Uint8Array(shared, 8, Math.min(4096, Atomics.load(flag, 1)))).toString()
  void client.terminate()
  return { status, body }
}

describe("npm start's embedded stores on their own thread", () => {
  it('answer a DynamoDB call while the thread that started them is blocked', async () => {
    const emulators = await startEmulatorThread(onDisk(fresh()))
    try {
      // the stores' event loop is not this one: the answer arrives inside the block
      const answer = listTablesWhileBlocked(emulators.dynamoEndpoint, 20_000)
      expect(answer.status).toBe(200)
      expect(JSON.parse(answer.body)).toEqual({ TableNames: [] })
    } finally {
      await emulators.close()
    }
  })

  it('close cleanly — both ports refused afterwards — and a new start on the same DATA_DIR finds the item and the object', async () => {
    const dir = fresh()
    const first = await startEmulatorThread(onDisk(dir))
    const clients = clientsFor(first)
    await ensureTable(clients.dynamo, TABLE)
    await clients.dynamo.putItem({ TableName: TABLE.name, Item: { id: 'a', note: 'kept across a restart' } })
    await ensureBucket(clients.s3, 'kept-blobs')
    await new S3BlobStore({ s3: clients.s3, bucket: 'kept-blobs' }).put('k', 'blob kept')
    destroyAwsClients(clients)
    await first.close()
    expect(await connect(first.dynamoEndpoint)).toBe('ECONNREFUSED')
    expect(await connect(first.s3Endpoint)).toBe('ECONNREFUSED')

    // dynalite's leveldb released its lock, or this start would fail on it
    const second = await startEmulatorThread(onDisk(dir))
    const again = clientsFor(second)
    try {
      expect((await again.dynamo.getItem({ TableName: TABLE.name, Key: { id: 'a' } })).Item).toEqual({
        id: 'a',
        note: 'kept across a restart',
      })
      expect(await new S3BlobStore({ s3: again.s3, bucket: 'kept-blobs' }).get('k')).toBe('blob kept')
    } finally {
      destroyAwsClients(again)
      await second.close()
    }
  })

  it('fail to start with the reason when a port is taken, and leave nothing running', async () => {
    const squatter = http.createServer()
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r))
    const port = (squatter.address() as AddressInfo).port
    const dir = fresh()
    try {
      await expect(startEmulatorThread({ ...onDisk(dir), dynamoPort: port })).rejects.toThrow(
        /^the embedded stores did not start: .*EADDRINUSE/,
      )
      // the port was found taken before dynalite began to open its leveldb (which makes its directory):
      // nothing native was opening in the thread as it was ended (a worker terminated while leveldb
      // opened took a CI run's test process down)
      expect(existsSync(join(dir, 'dynamodb'))).toBe(false)
    } finally {
      await new Promise((r) => squatter.close(r))
    }
  })

  it('keep answering after clients go away in the middle of request bodies (dynalite threw on those)', async () => {
    const crashes: string[] = []
    const emulators = await startEmulatorThread(onDisk(fresh()), { onCrash: (e) => crashes.push(e.message) })
    try {
      const { port } = new URL(emulators.dynamoEndpoint)
      for (const [declared, sent] of [
        [100, '{"a":'],
        [5_000, `{"TableName":"${'x'.repeat(2_000)}`],
        [10, ''],
      ] as const) {
        await new Promise<void>((resolve) => {
          const socket = net.connect(Number(port), '127.0.0.1', () => {
            socket.write(
              `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\nContent-Length: ${declared}\r\n\r\n${sent}`,
              () => setTimeout(() => socket.destroy(), 50),
            )
          })
          socket.on('close', () => resolve())
        })
      }
      const clients = clientsFor(emulators)
      try {
        expect(await clients.dynamo.call('ListTables', {})).toEqual({ TableNames: [] })
      } finally {
        destroyAwsClients(clients)
      }
      expect(crashes).toEqual([])
    } finally {
      await emulators.close()
    }
  })

  it('after a crash, refuse store calls at once and say why once', async () => {
    const crashes: string[] = []
    const emulators = await startEmulatorThread(onDisk(fresh()), { onCrash: (e) => crashes.push(e.message) })
    const clients = clientsFor(emulators)
    try {
      await ensureTable(clients.dynamo, TABLE)
      await emulators.thread.terminate()
      await expect(clients.dynamo.getItem({ TableName: TABLE.name, Key: { id: 'a' } })).rejects.toMatchObject({
        message: expect.stringMatching(/ECONNREFUSED|connect/),
      })
      expect(crashes).toEqual([expect.stringMatching(/^the stores' thread ended/)])
    } finally {
      destroyAwsClients(clients)
      await emulators.close()
    }
  })

  it('serve DynamoDB only to the access key they were started with, when given one (npm start: the stamps are in its memory)', async () => {
    const key = { accessKeyId: 'local-only-this-process', secretAccessKey: 'embedded' }
    const emulators = await startEmulatorThread({ ...onDisk(fresh()), dynamoAccessKeyId: key.accessKeyId })
    const own = makeAwsClients({
      region: TEST_REGION,
      credentials: TEST_CREDENTIALS,
      dynamoCredentials: key,
      dynamoEndpoint: emulators.dynamoEndpoint,
    })
    const other = clientsFor(emulators)
    try {
      await ensureTable(own.dynamo, TABLE)
      await own.dynamo.putItem({ TableName: TABLE.name, Item: { id: 'a' } })
      await expect(other.dynamo.putItem({ TableName: TABLE.name, Item: { id: 'b' } })).rejects.toMatchObject({
        name: 'UnrecognizedClientException',
      })
      expect((await own.dynamo.getItem({ TableName: TABLE.name, Key: { id: 'b' } })).Item).toBeUndefined()
      expect((await own.dynamo.getItem({ TableName: TABLE.name, Key: { id: 'a' } })).Item).toEqual({ id: 'a' })
    } finally {
      destroyAwsClients(own)
      destroyAwsClients(other)
      await emulators.close()
    }
  })
})
