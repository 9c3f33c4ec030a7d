/* An old client: compiled against abi/prober.h (the header as it was when the ABI baseline was
 * taken), linked and run against the libprober.so.1 built from the tree. It must get the same
 * results as it did against the library of its own time: TCP, HTTP and exec checks, and an
 * engine's events drained in batches (which proves prober_event kept its size and layout).
 *
 * Usage: old_client PROBER_TARGET_BIN. Built and run by ci/abi-check.sh; exits 1 on the first
 * difference, naming it. Plain C11 and POSIX, nothing from the repository but the old header. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "prober.h"

extern char **environ;

static int checks;

#define CHECK(cond)                                                                         \
  do {                                                                                      \
    checks++;                                                                               \
    if (!(cond)) {                                                                          \
      prober_str e_ = prober_last_error();                                                  \
      fprintf(stderr, "old_client.c:%d: CHECK failed: %s (last error: %.*s)\n", __LINE__, \
              #cond, (int)e_.len, e_.ptr ? e_.ptr : "");                                    \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)
#define CHECK_OK(expr) CHECK((expr) == PROBER_OK)

static int str_eq(prober_str v, const char *s) {
  return v.ptr != NULL && v.len == strlen(s) && memcmp(v.ptr, s, v.len) == 0 && v.ptr[v.len] == '\0';
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A loopback listener of our own; *port receives its port. */
static int listen_loopback(int *port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(fd >= 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
  CHECK(listen(fd, 64) == 0);
  socklen_t len = sizeof a;
  CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
  *port = ntohs(a.sin_port);
  return fd;
}

typedef struct {
  pid_t pid;
  int stdin_fd;
  int port;
} target_server;

/* Starts prober-target (it prints its port, and serves until its stdin closes). */
static target_server target_start(const char *bin) {
  int in[2], out[2];
  CHECK(pipe(in) == 0 && pipe(out) == 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, in[1]);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  char *argv[] = {(char *)bin, NULL};
  target_server t = {0, -1, 0};
  CHECK(posix_spawn(&t.pid, bin, &fa, NULL, argv, environ) == 0);
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

/* One blocking check; returns the outcome (the caller frees it). */
static prober_outcome *check(prober_spec *s) {
  prober_outcome *o = NULL;
  CHECK_OK(prober_check(s, &o));
  CHECK(o != NULL);
  prober_spec_free(s);
  return o;
}

static void check_tcp(void) {
  int port = 0;
  int lfd = listen_loopback(&port);
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", port, &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  prober_outcome *o = check(s);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_NONE);
  prober_timings t;
  CHECK_OK(prober_outcome_timings(o, &t));
  CHECK(t.connect_us >= 0 && t.total_us >= t.connect_us && t.resolve_us == -1);
  prober_outcome_free(o);

  /* The same port once nobody listens: refused. */
  close(lfd);
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", port, &s));
  o = check(s);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_REFUSED);
  prober_outcome_free(o);

  CHECK(prober_spec_new_tcp("127.0.0.1", 0, &s) == PROBER_E_INVALID_PORT);
  CHECK(strcmp(prober_status_str(PROBER_E_INVALID_PORT), "") != 0);
  puts("old client: tcp ok");
}

static void check_http(const target_server *t) {
  char url[128];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/health", t->port);
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_OK(prober_spec_add_header(s, "X-Old-Client", "1"));
  prober_outcome *o = check(s);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(prober_outcome_http_status(o) == 200);
  prober_outcome_free(o);

  snprintf(url, sizeof url, "http://127.0.0.1:%d/status/503", t->port);
  CHECK_OK(prober_spec_new_http(url, &s));
  o = check(s);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_STATUS);
  CHECK(prober_outcome_http_status(o) == 503);
  prober_outcome_free(o);

  /* A redirect that is not followed is a Warning. */
  snprintf(url, sizeof url, "http://127.0.0.1:%d/loop", t->port);
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_OK(prober_spec_set_redirect_policy(s, PROBER_REDIRECT_NONE));
  o = check(s);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_WARNING);
  CHECK(prober_outcome_http_status(o) == 302);
  prober_outcome_free(o);
  puts("old client: http ok");
}

static void check_exec(void) {
  const char *true_argv[] = {"/bin/true"};
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_exec(true_argv, 1, &s));
  prober_outcome *o = check(s);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(prober_outcome_exit_code(o) == 0);
  prober_outcome_free(o);

  const char *false_argv[] = {"/bin/false"};
  CHECK_OK(prober_spec_new_exec(false_argv, 1, &s));
  o = check(s);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_EXIT_CODE);
  CHECK(prober_outcome_exit_code(o) == 1);
  prober_outcome_free(o);

  const char *echo_argv[] = {"/bin/echo", "old", "client"};
  CHECK_OK(prober_spec_new_exec(echo_argv, 3, &s));
  o = check(s);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(str_eq(prober_outcome_output(o), "old client\n"));
  CHECK(prober_outcome_output_total(o) == 11 && !prober_outcome_truncated(o));
  prober_outcome_free(o);
  puts("old client: exec ok");
}

#define NSUBMIT 8
#define CAP 64

/* A readiness target and NSUBMIT one-shot checks, drained CAP events at a time: every field of
 * every event in the array must be where the old header says, or the tags and kinds go wrong. */
static void check_engine(const target_server *t) {
  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new(&e));
  uint64_t target = 0;
  CHECK_OK(prober_engine_add_target(e, &target));
  char url[128];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/health", t->port);
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_http(url, &s));
  CHECK_OK(prober_spec_set_period_ms(s, 50));
  CHECK_OK(prober_engine_set_probe(e, target, PROBER_ROLE_READINESS, s));
  prober_spec_free(s);
  CHECK(prober_engine_set_probe(e, target, PROBER_ROLE_READINESS, NULL) == PROBER_E_NULL);

  const char *false_argv[] = {"/bin/false"};
  CHECK_OK(prober_spec_new_exec(false_argv, 1, &s));
  for (uint64_t tag = 1; tag <= NSUBMIT; tag++) CHECK_OK(prober_engine_submit(e, s, 1000 + tag));
  prober_spec_free(s);

  static prober_event ev[CAP];
  int initial = 0, success = 0, tags[NSUBMIT + 1] = {0}, checks_seen = 0;
  double limit = now_s() + 30;
  while (!(success && checks_seen == NSUBMIT)) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 100));
    size_t n = prober_engine_drain(e, ev, CAP);
    CHECK(n <= CAP);
    for (size_t i = 0; i < n; i++) {
      const prober_event *x = &ev[i];
      CHECK(x->message.ptr != NULL && x->message.ptr[x->message.len] == '\0');
      if (x->kind == PROBER_EVENT_STATE) {
        CHECK(x->target == target && x->role == PROBER_ROLE_READINESS && x->tag == 0);
        if (!x->has_outcome) {
          CHECK(x->result == PROBER_RESULT_FAILURE && x->timings.total_us == -1);
          initial++;
        } else {
          CHECK(x->result == PROBER_RESULT_SUCCESS && x->http_status == 200);
          CHECK(x->reason == PROBER_REASON_NONE && x->exit_code == -1);
          CHECK(x->timings.total_us >= 0 && (uint64_t)x->timings.total_us == x->duration_us);
          success++;
        }
      } else {
        CHECK(x->kind == PROBER_EVENT_CHECK);
        CHECK(x->tag > 1000 && x->tag <= 1000 + NSUBMIT && x->target == 0);
        CHECK(x->result == PROBER_RESULT_FAILURE && x->reason == PROBER_REASON_EXIT_CODE);
        CHECK(x->exit_code == 1 && x->has_outcome);
        tags[x->tag - 1000]++;
        checks_seen++;
      }
    }
  }
  CHECK(initial == 1 && success == 1);
  for (int i = 1; i <= NSUBMIT; i++) CHECK(tags[i] == 1);
  uint32_t published = 99;
  CHECK_OK(prober_engine_published(e, target, PROBER_ROLE_READINESS, &published));
  CHECK(published == PROBER_RESULT_SUCCESS);
  prober_engine_free(e);
  puts("old client: engine ok");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: old_client PROBER_TARGET_BIN\n");
    return 2;
  }
  /* The library is at least as new as the header, with the same ABI major. */
  CHECK(prober_abi_version() == PROBER_ABI_VERSION);
  CHECK(prober_version_num() >= (uint32_t)PROBER_VERSION_NUM);
  CHECK(prober_version_num() >> 16 == PROBER_VERSION_MAJOR);
  target_server t = target_start(argv[1]);
  check_tcp();
  check_http(&t);
  check_exec();
  check_engine(&t);
  close(t.stdin_fd);
  int st = 0;
  waitpid(t.pid, &st, 0);
  printf("old client (header %d.%d.%d) against libprober %s: %d checks passed\n", PROBER_VERSION_MAJOR,
         PROBER_VERSION_MINOR, PROBER_VERSION_PATCH, prober_version(), checks);
  return 0;
}
