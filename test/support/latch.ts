/**
 * A promise opened from outside (Node 20 has no `Promise.withResolvers`): tests hold a store
 * call or a read at `latch.opened` to order a race, then `open()` it.
 */
export function latch(): { opened: Promise<void>; open: () => void } {
  let open: () => void = () => {}
  const opened = new Promise<void>((r) => {
    open = r
  })
  return { opened, open }
}
