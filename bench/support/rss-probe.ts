import fs from 'node:fs';

/**
 * Preloaded (node --import) into every measured process, ours and the
 * reference alike: on exit it writes the process's peak resident set size
 * (getrusage ru_maxrss, in KiB) and its CPU time (user + system, all threads, in
 * microseconds) to BENCH_RSS_FILE. Those are the kernel's own counters, so no
 * sampling can miss a short peak, and the CPU time barely moves with the load
 * other processes put on the machine.
 */
const file = process.env.BENCH_RSS_FILE;
if (file) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    fs.writeFileSync(file, `${usage.maxRSS} ${usage.userCPUTime + usage.systemCPUTime}`);
  });
}
