/** The p-quantile (0–1) of the values, by linear interpolation between the nearest ranks. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new Error('no samples');
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (sorted.length - 1) * p;
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low);
}

export const round = (value: number, digits = 2) => Number(value.toFixed(digits));
