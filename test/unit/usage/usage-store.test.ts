import { MemoryToolUsageStore } from '../../../lib/stores/memory/tool-usage-store'
import { toolUsageStoreContract } from '../../contract/tool-usage-store.contract'

toolUsageStoreContract('memory', async () => new MemoryToolUsageStore())
