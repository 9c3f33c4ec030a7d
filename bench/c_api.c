/*
 * c_api: tcp_oneshot's work through libprober's C engine, for ci/bench.sh.
 *
 *   c_api HOST PORT N CONC [LABEL]
 *
 * N TCP probes of HOST:PORT with CONC in flight on one engine, driven the way a C host would:
 * prober_engine_submit CONC specs, then prober_engine_wait + prober_engine_drain in batches,
 * submitting one more per PROBER_EVENT_CHECK until N have finished.
 *
 * Prints: BENCH scenario=LABEL(c_api) impl=prober n=... rate_per_s=... cpu_us_per_probe=...
 * (CPU from getrusage RUSAGE_SELF around the loop; rss_kb is ru_maxrss).
 * Build: cc -O2 -Iinclude bench/c_api.c target/release/libprober.a \
 *        -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
 */
#define _POSIX_C_SOURCE 200809L
#include <prober.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#define BATCH 256

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double us(struct timeval a, struct timeval b) {
    return (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_usec - a.tv_usec);
}

static void die(const char *what, prober_status rc) {
    prober_str e = prober_last_error();
    fprintf(stderr, "c_api: %s: %s (%.*s)\n", what, prober_status_str(rc), (int)e.len, e.ptr);
    exit(1);
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: c_api HOST PORT N CONC [LABEL]\n");
        return 64;
    }
    const char *host = argv[1];
    int port = atoi(argv[2]);
    unsigned long n = strtoul(argv[3], 0, 10);
    unsigned long conc = strtoul(argv[4], 0, 10);
    const char *label = argc > 5 ? argv[5] : "c_api";
    if (prober_abi_version() != PROBER_ABI_VERSION) {
        fprintf(stderr, "c_api: libprober ABI %u, header %d\n", prober_abi_version(), PROBER_ABI_VERSION);
        return 1;
    }

    prober_spec *spec;
    prober_status rc = prober_spec_new_tcp(host, port, &spec);
    if (rc) die("prober_spec_new_tcp", rc);
    prober_engine *e;
    if ((rc = prober_engine_new(&e))) die("prober_engine_new", rc);
    prober_event *evs = calloc(BATCH, sizeof *evs);
    if (!evs) return 1;

    unsigned long submitted = 0, done = 0, ok = 0;
    int reported = 0;
    struct rusage r0, r1;
    double t0 = now_s();
    getrusage(RUSAGE_SELF, &r0);
    for (; submitted < n && submitted < conc; submitted++)
        if ((rc = prober_engine_submit(e, spec, submitted))) die("prober_engine_submit", rc);
    while (done < n) {
        if ((rc = prober_engine_wait(e, -1))) die("prober_engine_wait", rc);
        size_t k;
        while ((k = prober_engine_drain(e, evs, BATCH)) > 0) {
            for (size_t i = 0; i < k; i++) {
                if (evs[i].kind != PROBER_EVENT_CHECK) continue;
                done++;
                if (evs[i].result == PROBER_RESULT_SUCCESS) ok++;
                else if (!reported++)
                    fprintf(stderr, "c_api: first failure: %.*s\n", (int)evs[i].message.len, evs[i].message.ptr);
                if (submitted < n) {
                    if ((rc = prober_engine_submit(e, spec, submitted))) die("prober_engine_submit", rc);
                    submitted++;
                }
            }
            if (k < BATCH) break;
        }
    }
    getrusage(RUSAGE_SELF, &r1);
    double wall = now_s() - t0;
    double user = us(r0.ru_utime, r1.ru_utime), sys = us(r0.ru_stime, r1.ru_stime);
    printf("BENCH scenario=%s impl=prober n=%lu ok=%lu fail=%lu wall_s=%.3f rate_per_s=%.1f "
           "cpu_us_per_probe=%.2f user_us_per_probe=%.2f sys_us_per_probe=%.2f cpu_pct=%.1f rss_kb=%ld conc=%lu\n",
           label, n, ok, n - ok, wall, n / wall, (user + sys) / n, user / n, sys / n,
           (user + sys) / 1e4 / wall, r1.ru_maxrss, conc);
    prober_engine_free(e);
    prober_spec_free(spec);
    free(evs);
    return 0;
}
