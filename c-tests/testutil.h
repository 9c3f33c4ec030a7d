/* Helpers shared by the C tests: checks, the prober-target server, loopback listeners, engine
 * loops, descriptor and zombie counts. */
#ifndef PROBER_TESTUTIL_H
#define PROBER_TESTUTIL_H

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "prober.h"

extern char **environ;

#define CHECK(cond)                                                                    \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      prober_str e_ = prober_last_error();                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %.*s)\n", __FILE__, __LINE__, \
              #cond, (int)e_.len, e_.ptr);                                             \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

#define CHECK_OK(expr) CHECK((expr) == PROBER_OK)
#define CHECK_STATUS(expr, want) CHECK((expr) == (want))

/* True when the view holds exactly `s`. */
static inline int str_eq(prober_str v, const char *s) {
  return v.len == strlen(s) && memcmp(v.ptr, s, v.len) == 0;
}

/* True when the view contains `s`. */
static inline int str_has(prober_str v, const char *s) {
  size_t n = strlen(s);
  if (n == 0) return 1;
  for (size_t i = 0; i + n <= v.len; i++)
    if (memcmp(v.ptr + i, s, n) == 0) return 1;
  return 0;
}

typedef struct {
  pid_t pid;
  int stdin_fd;
  int port;
} target_server;

/* Starts `argv` (found on PATH), a prober-target or a command that runs one, and reads the
 * port it prints; it serves until its stdin closes. */
static inline target_server target_start_argv(char *const argv[]) {
  int in[2], out[2];
  CHECK(pipe(in) == 0 && pipe(out) == 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, in[1]);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  target_server t = {0, -1, 0};
  CHECK(posix_spawnp(&t.pid, argv[0], &fa, NULL, argv, environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  char line[32] = {0};
  size_t got = 0;
  while (got < sizeof line - 1) {
    ssize_t n = read(out[0], line + got, 1);
    if (n <= 0 || line[got] == '\n') break;
    got += (size_t)n;
  }
  close(out[0]);
  t.stdin_fd = in[1];
  t.port = atoi(line);
  CHECK(t.port > 0);
  return t;
}

/* Starts prober-target; it serves until its stdin closes. */
static inline target_server target_start(void) {
  char *argv[] = {(char *)PROBER_TARGET_BIN, NULL};
  return target_start_argv(argv);
}

static inline void target_stop(target_server *t) {
  close(t->stdin_fd);
  int st = 0;
  waitpid(t->pid, &st, 0);
}

static inline void target_url(const target_server *t, const char *path, char *buf, size_t n) {
  snprintf(buf, n, "http://127.0.0.1:%d%s", t->port, path);
}

static inline int count_fds(void) {
  int n = 0;
  DIR *d = opendir("/proc/self/fd");
  CHECK(d != NULL);
  while (readdir(d) != NULL) n++;
  closedir(d);
  return n;
}

/* Children of this process that are zombies (exited, not reaped). */
static inline int count_zombie_children(void) {
  int n = 0;
  pid_t me = getpid();
  DIR *d = opendir("/proc");
  CHECK(d != NULL);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    char *rp = strrchr(buf, ')');
    if (!rp) continue;
    char state = 0;
    int ppid = 0;
    if (sscanf(rp + 2, "%c %d", &state, &ppid) == 2 && ppid == me && state == 'Z') n++;
  }
  closedir(d);
  return n;
}

static inline double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One-shot GET of a control URL of the target server (flips its health). */
static inline void target_control(const target_server *t, const char *path) {
  char url[256];
  target_url(t, path, url, sizeof url);
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_http(url, &s));
  prober_outcome *o = NULL;
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  prober_outcome_free(o);
  prober_spec_free(s);
}

/* A TCP listener on 127.0.0.1, on a free port (written to `port`), for a test's own peer. */
static inline int listen_loopback(int *port) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(l >= 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 64) == 0);
  socklen_t len = sizeof a;
  CHECK(getsockname(l, (struct sockaddr *)&a, &len) == 0);
  *port = ntohs(a.sin_port);
  return l;
}

/* Runs `e` until `n` run events arrived (or fails after 30 s: a hang, not a timing claim),
 * draining into `events` (`cap` entries); with `all_succeed`, every run must be a success.
 * Returns the runs seen. */
static inline size_t run_until_runs(prober_engine *e, prober_event *events, size_t cap, size_t n,
                                    int all_succeed) {
  double limit = now_s() + 30;
  size_t runs = 0;
  while (runs < n) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 50));
    size_t k = prober_engine_drain(e, events, cap);
    for (size_t i = 0; i < k; i++) {
      if (events[i].kind != PROBER_EVENT_RUN) continue;
      if (all_succeed) CHECK(events[i].result == PROBER_RESULT_SUCCESS);
      runs++;
    }
  }
  return runs;
}

#endif
