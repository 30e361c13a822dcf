import { rowSet } from './rows/lower-findings'
import { hostileSuite } from './suite'

hostileSuite(rowSet)
