import * as assert from 'node:assert/strict';
import { CachingAllocator, MAX_REQUEST_BYTES, replayAllocations, roundRequest, segmentBytes, type AllocatorEvent } from '../../../../src/core/allocator/cachingAllocator';

const MIB = 1024 * 1024;

function allocator(steps: readonly (readonly [number, number] | number)[]): CachingAllocator {
  const a = new CachingAllocator();
  for (const step of steps) {
    if (typeof step === 'number') a.free(step);
    else a.malloc(step[0], step[1]);
  }
  return a;
}

describe('caching allocator', () => {
  it('rounds requests to 512 bytes and picks the segment size by request size', () => {
    assert.equal(roundRequest(1), 512);
    assert.equal(roundRequest(513), 1024);
    assert.equal(segmentBytes(512), 2 * MIB);
    assert.equal(segmentBytes(MIB), 2 * MIB);
    assert.equal(segmentBytes(MIB + 512), 20 * MIB);
    assert.equal(segmentBytes(10 * MIB - 512), 20 * MIB);
    assert.equal(segmentBytes(10 * MIB), 10 * MIB);
    assert.equal(segmentBytes(11 * MIB), 12 * MIB);
  });

  it('serves small requests from one 2 MiB segment until it is full', () => {
    // 1 MiB + 1 MiB fill the first small segment; the third needs a second one.
    const a = allocator([[1, MIB], [2, MIB], [3, 100]]);
    assert.deepEqual(a.stats(), { reservedBytes: 4 * MIB, peakReservedBytes: 4 * MIB, allocatedBytes: 2 * MIB + 512, peakAllocatedBytes: 2 * MIB + 512, segments: 2, outOfMemory: false });
  });

  it('keeps a large block whole when the rest would be 1 MiB or less', () => {
    // 11 MiB takes a 12 MiB segment; the 1 MiB rest is not split off, so 12 MiB count as allocated.
    const a = allocator([[1, 11 * MIB]]);
    assert.equal(a.stats().reservedBytes, 12 * MIB);
    assert.equal(a.stats().allocatedBytes, 12 * MIB);
    // 5 MiB from a 20 MiB segment: the 15 MiB rest is split and serves the next 5 MiB and 9 MiB.
    const b = allocator([[1, 5 * MIB], [2, 5 * MIB], [3, 9 * MIB]]);
    assert.equal(b.stats().reservedBytes, 20 * MIB);
    assert.equal(b.stats().allocatedBytes, 20 * MIB);
  });

  it('reuses freed blocks, best fit first, and never gives memory back', () => {
    // Free 12 and 14 MiB blocks: 11 MiB takes the 12, 13 MiB the 14; nothing new is reserved.
    const a = allocator([[1, 12 * MIB], [2, 14 * MIB], 1, 2, [3, 11 * MIB], [4, 13 * MIB]]);
    assert.equal(a.stats().reservedBytes, 26 * MIB);
    assert.equal(a.stats().segments, 2);
    // The other order would have needed a third segment: 13 MiB fits only the 14 MiB block.
    const b = allocator([[1, 12 * MIB], [2, 14 * MIB], 1, 2, [3, 13 * MIB], [4, 13 * MIB]]);
    assert.equal(b.stats().reservedBytes, 40 * MIB);
    const c = allocator([[1, 30 * MIB], 1]);
    assert.equal(c.stats().reservedBytes, 30 * MIB);
    assert.equal(c.stats().allocatedBytes, 0);
  });

  it('merges a freed block with its free neighbours in the segment', () => {
    // Three 5 MiB blocks in one 20 MiB segment; freeing the first two leaves a 10 MiB hole that a 9 MiB request fits.
    const merged = allocator([[1, 5 * MIB], [2, 5 * MIB], [3, 5 * MIB], 1, 2, [4, 9 * MIB]]);
    assert.equal(merged.stats().reservedBytes, 20 * MIB);
    // The other order merges with the next block instead of the previous one.
    const mergedForward = allocator([[1, 5 * MIB], [2, 5 * MIB], [3, 5 * MIB], 2, 1, [4, 9 * MIB]]);
    assert.equal(mergedForward.stats().reservedBytes, 20 * MIB);
    // Freeing everything leaves one 20 MiB block: a 20 MiB request fits it.
    const whole = allocator([[1, 5 * MIB], [2, 5 * MIB], [3, 5 * MIB], 2, 1, 3, [4, 20 * MIB]]);
    assert.equal(whole.stats().reservedBytes, 20 * MIB);
    // Freeing only the first leaves two 5 MiB holes: 9 MiB needs a new segment.
    const split = allocator([[1, 5 * MIB], [2, 5 * MIB], [3, 5 * MIB], 1, [4, 9 * MIB]]);
    assert.equal(split.stats().reservedBytes, 40 * MIB);
  });

  it('does not merge blocks of different segments or pools', () => {
    // Two 12 MiB segments freed side by side stay two blocks: 20 MiB needs a third segment.
    const a = allocator([[1, 12 * MIB], [2, 12 * MIB], 1, 2, [3, 20 * MIB]]);
    assert.equal(a.stats().reservedBytes, 44 * MIB);
    // A freed small segment does not serve a large request.
    const b = allocator([[1, MIB], 1, [2, 2 * MIB]]);
    assert.equal(b.stats().reservedBytes, 22 * MIB);
  });

  it('records the peaks of a replayed trace', () => {
    const events: AllocatorEvent[] = [
      { kind: 'alloc', id: 1, bytes: 30 * MIB },
      { kind: 'free', id: 1 },
      { kind: 'alloc', id: 2, bytes: 10 * MIB },
      { kind: 'alloc', id: 3, bytes: 30 * MIB },
    ];
    // 10 MiB reuses part of the freed 30 MiB block (the rest, 20 MiB, is split off); 30 MiB needs a new segment.
    assert.deepEqual(replayAllocations(events), { reservedBytes: 60 * MIB, peakReservedBytes: 60 * MIB, allocatedBytes: 40 * MIB, peakAllocatedBytes: 40 * MIB, segments: 2, outOfMemory: false });
  });

  it('gives its wholly free segments back when the GPU has no room for a new one, as after a failed cudaMalloc', () => {
    // 100 MiB of GPU: 40 MiB freed and cached, 30 MiB live; 50 MiB more does not fit beside 70 MiB
    // reserved, so the cached 40 MiB segment goes back and the request gets a segment of its own.
    const a = new CachingAllocator({ capacityBytes: 100 * MIB });
    a.malloc(1, 40 * MIB);
    a.malloc(2, 30 * MIB);
    a.free(1);
    a.malloc(3, 50 * MIB);
    assert.deepEqual(a.stats(), { reservedBytes: 80 * MIB, peakReservedBytes: 80 * MIB, allocatedBytes: 80 * MIB, peakAllocatedBytes: 80 * MIB, segments: 2, outOfMemory: false });
    // Unbounded, the cache stays and reserved grows past the card.
    const unbounded = allocator([[1, 40 * MIB], [2, 30 * MIB], 1, [3, 50 * MIB]]);
    assert.equal(unbounded.stats().reservedBytes, 120 * MIB);
    // A segment split between a live and a free block cannot go back.
    const split = new CachingAllocator({ capacityBytes: 30 * MIB });
    split.malloc(1, 5 * MIB);
    split.malloc(2, 5 * MIB);
    split.free(2);
    assert.equal(split.tryMalloc(3, 16 * MIB), false);
    assert.equal(split.stats().reservedBytes, 20 * MIB);
  });

  it('refuses what does not fit when asked to try (a workspace), and flags a tensor that does not fit as out of memory', () => {
    const a = new CachingAllocator({ capacityBytes: 64 * MIB });
    a.malloc(1, 40 * MIB);
    assert.equal(a.tryMalloc(2, 30 * MIB), false);
    assert.equal(a.stats().outOfMemory, false);
    assert.equal(a.stats().reservedBytes, 40 * MIB);
    assert.equal(a.tryMalloc(3, 20 * MIB), true);
    a.free(3);
    a.malloc(4, 30 * MIB);
    assert.equal(a.stats().outOfMemory, true);
    assert.equal(a.stats().reservedBytes, 70 * MIB);
  });

  it('refuses a second allocation under a live id and a free of an unknown one', () => {
    const a = allocator([[1, 100]]);
    assert.throws(() => a.malloc(1, 100), /already allocated/);
    assert.throws(() => a.free(2), /not allocated/);
  });

  it('holds requests beyond any GPU at 1 TiB, so that the pools stay exact (a fuzzed layer of 2^31 channels)', () => {
    const a = new CachingAllocator();
    const huge = 4 * (2 ** 31 - 1) ** 2; // the fp32 weight of a Conv2d(2^31 - 1, 2^31 - 1, 1)
    for (let id = 1; id <= 20; id++) a.malloc(id, huge);
    a.malloc(21, Number.NaN);
    assert.equal(a.stats().allocatedBytes, 20 * MAX_REQUEST_BYTES + roundRequest(0));
    for (let id = 1; id <= 20; id += 2) a.free(id);
    for (let id = 22; id <= 31; id++) a.malloc(id, huge);
    assert.equal(a.stats().reservedBytes, 20 * MAX_REQUEST_BYTES + 2 * MIB);
    for (const id of [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]) a.free(id);
    assert.equal(a.stats().allocatedBytes, 0);
    assert.equal(a.stats().peakReservedBytes, 20 * MAX_REQUEST_BYTES + 2 * MIB);
  });
});
