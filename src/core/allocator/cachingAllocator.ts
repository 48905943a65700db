/**
 * PyTorch's CUDA caching allocator, replayed: what `torch.cuda.memory_reserved()` (and so
 * nvidia-smi, minus the CUDA context) shows for a sequence of tensor allocations and frees.
 *
 * The rules are those of c10/cuda/CUDACachingAllocator.cpp (PyTorch 1.x-2.x, default settings:
 * no max_split_size, no expandable segments):
 * - every request is rounded up to a multiple of 512 bytes;
 * - requests of at most 1 MiB are served from the small pool, whose segments are 2 MiB;
 *   larger ones from the large pool, whose segments are 20 MiB for requests under 10 MiB and the
 *   request rounded up to 2 MiB otherwise;
 * - a request takes the smallest cached free block of its pool that is large enough (best fit,
 *   lowest address on ties) and splits it when the rest is worth keeping (small pool: any rest of
 *   at least 512 bytes; large pool: a rest above 1 MiB);
 * - a freed block merges with free neighbours of its segment and stays cached: segments are not
 *   returned to the driver (no `empty_cache`), so reserved memory only grows, until
 * - a new segment would not fit in the GPU (`capacityBytes`, when given): then, as when cudaMalloc
 *   fails, the allocator returns its wholly free segments to the driver and tries again.
 * A static estimate feeds it the allocations it derives from a layer table (trainingStep.ts); a
 * CPU dry run can feed it a recorded trace through the same `AllocatorEvent`s.
 */

export const MIN_BLOCK_BYTES = 512;
export const SMALL_REQUEST_BYTES = 1024 * 1024;
export const SMALL_SEGMENT_BYTES = 2 * 1024 * 1024;
export const MEDIUM_REQUEST_BYTES = 10 * 1024 * 1024;
export const MEDIUM_SEGMENT_BYTES = 20 * 1024 * 1024;
export const LARGE_ROUNDING_BYTES = 2 * 1024 * 1024;

/** One step of a trace: a tensor of `bytes` comes to life under `id`, or the tensor `id` is freed. */
export type AllocatorEvent = { readonly kind: 'alloc'; readonly id: number; readonly bytes: number } | { readonly kind: 'free'; readonly id: number };

export interface AllocatorStats {
  /** Bytes the allocator holds from the driver (sum of its segments), now and at its highest. */
  readonly reservedBytes: number;
  readonly peakReservedBytes: number;
  /** Bytes handed out to live tensors (after rounding), now and at its highest. */
  readonly allocatedBytes: number;
  readonly peakAllocatedBytes: number;
  /** Segments held now. */
  readonly segments: number;
  /** A request did not fit in `capacityBytes` even with the cache given back: the run would stop with an out-of-memory error. */
  readonly outOfMemory: boolean;
}

interface Block {
  readonly segment: number;
  readonly small: boolean;
  address: number;
  size: number;
  free: boolean;
  prev: Block | null;
  next: Block | null;
}

/** The size a request is served at: a multiple of 512 bytes, at least 512. */
export function roundRequest(bytes: number): number {
  if (bytes <= MIN_BLOCK_BYTES) return MIN_BLOCK_BYTES;
  return Math.ceil(bytes / MIN_BLOCK_BYTES) * MIN_BLOCK_BYTES;
}

/** The size of the segment a (rounded) request that finds no cached block makes the allocator reserve. */
export function segmentBytes(rounded: number): number {
  if (rounded <= SMALL_REQUEST_BYTES) return SMALL_SEGMENT_BYTES;
  if (rounded < MEDIUM_REQUEST_BYTES) return MEDIUM_SEGMENT_BYTES;
  return Math.ceil(rounded / LARGE_ROUNDING_BYTES) * LARGE_ROUNDING_BYTES;
}

/** Free blocks of one pool, sorted by (size, address): best fit is a binary search. */
class FreeList {
  private readonly blocks: Block[] = [];

  add(block: Block): void {
    this.blocks.splice(this.lowerBound(block.size, block.address), 0, block);
  }

  remove(block: Block): void {
    const index = this.lowerBound(block.size, block.address);
    if (this.blocks[index] !== block) throw new Error('caching allocator: a free block is missing from its pool');
    this.blocks.splice(index, 1);
  }

  /** Free blocks that span their whole segment (nothing live in it). */
  wholeSegments(): Block[] {
    return this.blocks.filter((block) => block.prev === null && block.next === null);
  }

  /** The smallest block of at least `size` bytes (lowest address among equals), taken out of the list. */
  takeBestFit(size: number): Block | undefined {
    const index = this.lowerBound(size, -1);
    if (index >= this.blocks.length) return undefined;
    return this.blocks.splice(index, 1)[0];
  }

  private lowerBound(size: number, address: number): number {
    let low = 0;
    let high = this.blocks.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const block = this.blocks[mid]!;
      if (block.size < size || (block.size === size && block.address < address)) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/**
 * The largest request served as asked, 1 TiB: more than any GPU holds. A larger one (a layer with
 * 2^31 channels in a half-typed or fuzzed script) is served at this size, so that addresses and
 * sizes stay exact integers; the figure is far beyond the GPU either way.
 */
export const MAX_REQUEST_BYTES = 2 ** 40;

function heldRequest(bytes: number): number {
  if (Number.isNaN(bytes) || bytes <= 0) return 0;
  return Math.min(bytes, MAX_REQUEST_BYTES);
}

export interface CachingAllocatorOptions {
  /** What the allocator may reserve on the GPU (its memory less the CUDA context); unbounded when absent. */
  readonly capacityBytes?: number;
}

export class CachingAllocator {
  private readonly smallPool = new FreeList();
  private readonly largePool = new FreeList();
  private readonly live = new Map<number, Block>();
  private nextAddress = 0;
  private segmentCount = 0;
  private segmentsHeld = 0;
  private reserved = 0;
  private peakReserved = 0;
  private allocated = 0;
  private peakAllocated = 0;
  private overCapacity = false;
  private readonly capacityBytes: number;

  constructor(options: CachingAllocatorOptions = {}) {
    this.capacityBytes = options.capacityBytes ?? Infinity;
  }

  /**
   * Allocates `bytes` for tensor `id` (an id may be reused once its tensor is freed). A request the
   * GPU cannot hold, even with the cache given back, is still served, and `stats().outOfMemory`
   * says the run would have stopped there.
   */
  malloc(id: number, bytes: number): void {
    if (!this.allocate(id, bytes, false)) throw new Error('caching allocator: unreachable');
  }

  /**
   * As `malloc`, but a request the GPU cannot hold is refused (false) and nothing changes but the
   * cache given back: what cuDNN does with a workspace it cannot get (it takes an algorithm that
   * needs less).
   */
  tryMalloc(id: number, bytes: number): boolean {
    return this.allocate(id, bytes, true);
  }

  private allocate(id: number, bytes: number, refuseOverCapacity: boolean): boolean {
    if (this.live.has(id)) throw new Error(`caching allocator: tensor ${id} is already allocated`);
    const size = roundRequest(heldRequest(bytes));
    const small = size <= SMALL_REQUEST_BYTES;
    const pool = small ? this.smallPool : this.largePool;
    let block = pool.takeBestFit(size);
    if (!block) {
      const wanted = segmentBytes(size);
      if (this.reserved + wanted > this.capacityBytes) {
        this.releaseCachedSegments();
        if (this.reserved + wanted > this.capacityBytes) {
          if (refuseOverCapacity) return false;
          this.overCapacity = true;
        }
      }
      block = this.newSegment(wanted, small);
    }
    const rest = block.size - size;
    if (small ? rest >= MIN_BLOCK_BYTES : rest > SMALL_REQUEST_BYTES) {
      const remaining: Block = { segment: block.segment, small, address: block.address + size, size: rest, free: true, prev: block, next: block.next };
      if (block.next) block.next.prev = remaining;
      block.next = remaining;
      block.size = size;
      pool.add(remaining);
    }
    block.free = false;
    this.live.set(id, block);
    this.allocated += block.size;
    this.peakAllocated = Math.max(this.peakAllocated, this.allocated);
    return true;
  }

  /** `release_cached_blocks`: every segment with nothing live in it goes back to the driver. */
  private releaseCachedSegments(): void {
    for (const pool of [this.smallPool, this.largePool]) {
      for (const block of pool.wholeSegments()) {
        pool.remove(block);
        this.reserved -= block.size;
        this.segmentsHeld--;
      }
    }
  }

  free(id: number): void {
    let block = this.live.get(id);
    if (!block) throw new Error(`caching allocator: tensor ${id} is not allocated`);
    this.live.delete(id);
    this.allocated -= block.size;
    const pool = block.small ? this.smallPool : this.largePool;
    block.free = true;
    if (block.prev?.free) block = absorbNext(pool, block.prev, true);
    if (block.next?.free) block = absorbNext(pool, block, false);
    pool.add(block);
  }

  apply(event: AllocatorEvent): void {
    if (event.kind === 'alloc') this.malloc(event.id, event.bytes);
    else this.free(event.id);
  }

  stats(): AllocatorStats {
    return { reservedBytes: this.reserved, peakReservedBytes: this.peakReserved, allocatedBytes: this.allocated, peakAllocatedBytes: this.peakAllocated, segments: this.segmentsHeld, outOfMemory: this.overCapacity };
  }

  private newSegment(bytes: number, small: boolean): Block {
    // Segments get disjoint address ranges, so blocks of different segments never look adjacent.
    const block: Block = { segment: this.segmentCount++, small, address: this.nextAddress, size: bytes, free: true, prev: null, next: null };
    this.nextAddress += bytes;
    this.segmentsHeld++;
    this.reserved += bytes;
    this.peakReserved = Math.max(this.peakReserved, this.reserved);
    return block;
  }
}

/**
 * Merges `block.next` into `block` (neighbours in one segment). The free one of them already in
 * the pool leaves it: `block` when `blockIsPooled`, else the next one.
 */
function absorbNext(pool: FreeList, block: Block, blockIsPooled: boolean): Block {
  const next = block.next!;
  pool.remove(blockIsPooled ? block : next);
  block.size += next.size;
  block.next = next.next;
  if (next.next) next.next.prev = block;
  return block;
}

/** Replays a whole trace on a fresh allocator. */
export function replayAllocations(events: Iterable<AllocatorEvent>): AllocatorStats {
  const allocator = new CachingAllocator();
  for (const event of events) allocator.apply(event);
  return allocator.stats();
}
