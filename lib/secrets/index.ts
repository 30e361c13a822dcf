/** Secrets by reference (`${secret:NAME}`): the port, its local adapters, resolution and scrubbing. */
export * from './cached'
export * from './local'
export * from './memory'
export * from './ports'
export * from './references'
export * from './scrubber'
