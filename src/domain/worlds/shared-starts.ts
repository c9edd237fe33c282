import type { Catalogue } from '../../db/postgres/catalogue.js'
import { notFound, storageUnreachable } from '../../errors.js'

/** Starts kept at most, and their bytes together: a demo-sized world's start is 1.7 MB. */
const MAX_KEPT = 8
const MAX_KEPT_BYTES = 32 * 1024 * 1024

/**
 * Hosted worlds' starts (what a reset returns a world to), kept in the catalogue rather than in
 * each instance's memory beside every world: read when a reset needs one, by its digest, and the
 * latest few kept, so the many worlds made from one fixture share one copy and a reset of any of
 * them costs at most one question to PostgreSQL, not the start's megabytes.
 */
export class SharedStarts {
  /** By digest, the one used last at the end. */
  private readonly kept = new Map<string, Buffer>()
  /** Each world's start digest, once read (a world's start never changes). */
  private readonly digests = new Map<string, string>()
  private keptBytes = 0

  constructor (private readonly catalogue: Pick<Catalogue, 'startDigest' | 'startBody'>) {}

  /** Reads the world's start when called: 404 when the world was deleted, 503 when PostgreSQL cannot be reached. */
  of (worldId: string): () => Promise<Buffer> {
    return async () => {
      try {
        return await this.read(worldId)
      } catch (e) {
        throw storageUnreachable(e)
      }
    }
  }

  /** The world was deleted. */
  forget (worldId: string): void {
    this.digests.delete(worldId)
  }

  private async read (worldId: string): Promise<Buffer> {
    const digest = this.digests.get(worldId) ?? await this.catalogue.startDigest(worldId)
    if (digest === undefined) throw notFound(`World ${worldId} was deleted`)
    this.digests.set(worldId, digest)
    let body = this.kept.get(digest)
    if (body === undefined) {
      body = await this.catalogue.startBody(digest)
      if (body === undefined) throw notFound(`World ${worldId} was deleted`)
    } else {
      this.kept.delete(digest)
      this.keptBytes -= body.length
    }
    this.kept.set(digest, body)
    this.keptBytes += body.length
    for (const [oldest, bytes] of this.kept) {
      if (this.kept.size <= MAX_KEPT && this.keptBytes <= MAX_KEPT_BYTES) break
      this.kept.delete(oldest)
      this.keptBytes -= bytes.length
    }
    return body
  }
}
