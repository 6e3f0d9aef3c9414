import fs from 'node:fs';

/**
 * Preloaded (node --import) into every measured process, ours and the
 * reference alike: on exit it writes the process's peak resident set size
 * (getrusage ru_maxrss, in KiB) to BENCH_RSS_FILE. That is the kernel's own
 * high-water mark, so no sampling can miss a short peak. After it, the CPU
 * time the process used (user + system, microseconds): on a shared machine it
 * varies far less than wall time.
 */
const file = process.env.BENCH_RSS_FILE;
if (file) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    fs.writeFileSync(file, `${usage.maxRSS} ${usage.userCPUTime + usage.systemCPUTime}`);
  });
}
