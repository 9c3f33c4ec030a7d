/*
 * raw_spawn: the physical limit of ci/bench.sh's exec scenario on this machine.
 *
 *   raw_spawn N CONC PROG [ARG...]
 *
 * Runs PROG N times with CONC children alive at once: posix_spawn (glibc: clone(CLONE_VM |
 * CLONE_VFORK)) with what libprober also sets up for a command (its own process group, stdin
 * from /dev/null, stdout and stderr into one close-on-exec pipe), then waitpid for any child
 * and spawn the next. No output is read (the programs benchmarked write none).
 *
 * Prints: BENCH scenario=exec_oneshot impl=raw_spawn n=... rate_per_s=... cpu_us_per_probe=...
 * child_cpu_us_per_probe=... (CPU from getrusage RUSAGE_SELF / RUSAGE_CHILDREN around the loop).
 * Build: cc -O2 -o raw_spawn raw_spawn.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct child {
    pid_t pid;
    int pipe_rd;
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double us(struct timeval a, struct timeval b) {
    return (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_usec - a.tv_usec);
}

static int spawn_one(struct child *c, char **argv) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_adddup2(&fa, p[1], 2);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    int rc = posix_spawn(&c->pid, argv[0], &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        errno = rc;
        return -1;
    }
    c->pipe_rd = p[0];
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: raw_spawn N CONC PROG [ARG...]\n");
        return 64;
    }
    unsigned long n = strtoul(argv[1], 0, 10);
    unsigned conc = (unsigned)atoi(argv[2]);
    char **prog = argv + 3;
    struct child *kids = calloc(conc, sizeof *kids);
    if (!kids) return 1;

    struct rusage s0, s1, c0, c1;
    double t0 = now_s();
    getrusage(RUSAGE_SELF, &s0);
    getrusage(RUSAGE_CHILDREN, &c0);
    unsigned long started = 0, done = 0, ok = 0;
    unsigned alive = 0;
    for (unsigned i = 0; i < conc && started < n; i++) {
        started++;
        if (spawn_one(&kids[i], prog) < 0) { perror("posix_spawn"); done++; kids[i].pid = 0; continue; }
        alive++;
    }
    while (done < n && alive > 0) {
        int status;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            perror("waitpid");
            break;
        }
        unsigned i;
        for (i = 0; i < conc && kids[i].pid != pid; i++) {}
        if (i == conc) continue;
        close(kids[i].pipe_rd);
        kids[i].pid = 0;
        alive--;
        done++;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) ok++;
        while (started < n) {
            started++;
            if (spawn_one(&kids[i], prog) == 0) { alive++; break; }
            perror("posix_spawn");
            done++;
        }
    }
    getrusage(RUSAGE_SELF, &s1);
    getrusage(RUSAGE_CHILDREN, &c1);
    double wall = now_s() - t0;
    double user = us(s0.ru_utime, s1.ru_utime), sys = us(s0.ru_stime, s1.ru_stime);
    double child = us(c0.ru_utime, c1.ru_utime) + us(c0.ru_stime, c1.ru_stime);
    printf("BENCH scenario=exec_oneshot impl=raw_spawn n=%lu ok=%lu fail=%lu wall_s=%.3f rate_per_s=%.1f "
           "cpu_us_per_probe=%.2f user_us_per_probe=%.2f sys_us_per_probe=%.2f cpu_pct=%.1f rss_kb=%ld conc=%u "
           "child_cpu_us_per_probe=%.2f\n",
           done, ok, done - ok, wall, done / wall, (user + sys) / done, user / done, sys / done,
           (user + sys) / 1e4 / wall, s1.ru_maxrss, conc, child / done);
    return 0;
}
