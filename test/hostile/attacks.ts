/**
 * Every attack class `npm run bench -- hostile` floods while it times a victim tenant, one entry
 * each (bench/hostile.ts compares the victim's p50/p99 under each with its p50/p99 alone). Add a
 * class by exporting `attacks` from its rows file and spreading it here.
 */
import type { AttackClass } from './harness'
import { attacks as discovery } from './rows/discovery'
import { attacks as layerExport } from './rows/export'
import { attacks as modelsAndLimits } from './rows/models'
import { attacks as sharing } from './rows/sharing'
import { attacks as tenantWork } from './rows/tenant-work'

/**
 * Not an attack: another tenant calling `whoami` as fast as two connections go. What any flood
 * costs the victim through the one event loop, the floor the attack classes are read against.
 */
const ordinaryFlood: AttackClass = {
  name: 'reference: a flood of whoami (no attack)',
  async once(app, tenant) {
    const res = await app.call(tenant, 'POST', '/projects/p1/tools/whoami/invoke', { params: {} })
    await res.text()
    if (res.status !== 200) throw new Error(`whoami answered ${res.status}`)
  },
}

export const ATTACK_CLASSES: AttackClass[] = [ordinaryFlood, ...tenantWork, ...sharing, ...modelsAndLimits, ...discovery, ...layerExport]
