import { MemoryAuditStore } from '../../../lib/stores/memory/audit-store'
import { auditStoreContract } from '../../contract/audit-store.contract'

auditStoreContract('memory', async () => new MemoryAuditStore())
