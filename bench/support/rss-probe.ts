import fs from 'node:fs';

/**
 * Preloaded (node --import) into every measured process, ours and the
 * reference alike: on exit it writes the process's peak resident set size
 * (getrusage ru_maxrss, in KiB) to BENCH_RSS_FILE. That is the kernel's own
 * high-water mark, so no sampling can miss a short peak.
 */
const file = process.env.BENCH_RSS_FILE;
if (file) {
  process.on('exit', () => {
    fs.writeFileSync(file, String(process.resourceUsage().maxRSS));
  });
}
