import { blobStoreContract } from '../contract/blob-store.contract'
import { documentStoreContract } from '../contract/document-store.contract'
import { MemoryBlobStore } from '../../lib/stores/memory/blob-store'
import { MemoryDocumentStore } from '../../lib/stores/memory/document-store'

documentStoreContract('memory', async (clock) => new MemoryDocumentStore(clock))
blobStoreContract('memory', async () => new MemoryBlobStore())
