export const BYTES_PER_MIB = 1024 * 1024;

/** "812 MiB" below 1 GiB, "7.9 GiB" above: the precision an estimate deserves. */
export function formatMiB(mib: number): string {
  if (mib < 1024) return `${Math.round(mib)} MiB`;
  const gib = mib / 1024;
  return `${gib < 100 ? gib.toFixed(1) : Math.round(gib).toString()} GiB`;
}

/** 21020682 -> "21.0M". */
export function formatCount(count: number): string {
  if (count >= 1e9) return `${(count / 1e9).toFixed(2)}B`;
  if (count >= 1e6) return `${(count / 1e6).toFixed(1)}M`;
  if (count >= 1e3) return `${(count / 1e3).toFixed(1)}K`;
  return String(count);
}
