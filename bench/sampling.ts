/** The milliseconds one piece of work took. */
export async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/**
 * Warm-up rounds, then `samples` rounds; each round runs every step once, the order rotating
 * between rounds so machine noise and ordering effects hit every side alike.
 */
export async function interleave(
  warmup: number,
  samples: number,
  steps: Array<() => Promise<number>>,
): Promise<number[][]> {
  const out = steps.map(() => [] as number[]);
  for (let round = 0; round < warmup + samples; round++) {
    for (let k = 0; k < steps.length; k++) {
      const index = (round + k) % steps.length;
      const ms = await steps[index]!();
      if (round >= warmup) out[index]!.push(ms);
    }
  }
  return out;
}
