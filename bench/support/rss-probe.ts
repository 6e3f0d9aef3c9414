import fs from 'node:fs';

/**
 * Preloaded (node --import) into every measured process, ours and the
 * reference alike: on exit it writes the process's peak resident set size
 * (getrusage ru_maxrss, in KiB) and its CPU time (user + system, µs) to
 * BENCH_RSS_FILE. Both are the kernel's own counts, so no sampling can miss a
 * short peak, and the CPU time is the process's alone, whatever else the machine runs.
 */
const file = process.env.BENCH_RSS_FILE;
if (file) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    fs.writeFileSync(file, `${usage.maxRSS} ${usage.userCPUTime + usage.systemCPUTime}`);
  });
}
