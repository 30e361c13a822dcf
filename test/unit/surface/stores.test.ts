import { MemoryObservedLimitStore } from '../../../lib/stores/memory/observed-limit-store'
import { MemoryProcessStore } from '../../../lib/stores/memory/process-store'
import { observedLimitStoreContract } from '../../contract/observed-limit-store.contract'
import { processStoreContract } from '../../contract/process-store.contract'

processStoreContract('memory', async () => new MemoryProcessStore())
observedLimitStoreContract('memory', async () => new MemoryObservedLimitStore())
