/* A real container's network namespace through the C ABI (issue 29), run by ci/namespaces.sh
 * against the runc container of ci/runc-container.sh (not by ctest: it needs that container):
 *
 *   container_netns NETNS_PATH URL WANT_BODY
 *
 * NETNS_PATH is the container's /proc/PID/ns/net and URL a server on the container's own
 * 127.0.0.1. A one-shot check and an engine's target with the namespace set must both answer
 * 200 (the check with WANT_BODY in the body); the same URL from the host must not reach that server. Every
 * argument is required: a missing one fails the program, it never skips. Exit 0 when all hold. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prober.h"

static int failures;

#define EXPECT(cond, ...)                          \
  do {                                             \
    if (!(cond)) {                                 \
      fprintf(stderr, "FAILED: %s: ", #cond);      \
      fprintf(stderr, __VA_ARGS__);                \
      fputc('\n', stderr);                         \
      failures++;                                  \
    }                                              \
  } while (0)

static prober_spec *spec_for(const char *url, const char *netns) {
  prober_spec *s = NULL;
  if (prober_spec_new_http(url, &s) != PROBER_OK || prober_spec_set_timeout_ms(s, 3000) != PROBER_OK ||
      (netns && prober_spec_set_netns(s, netns) != PROBER_OK)) {
    prober_str e = prober_last_error();
    fprintf(stderr, "FAILED: spec for %s: %.*s\n", url, (int)e.len, e.ptr);
    exit(1);
  }
  return s;
}

static int body_has(const prober_outcome *o, const char *want) {
  prober_str out = prober_outcome_output(o);
  size_t n = strlen(want);
  for (size_t i = 0; n <= out.len && i + n <= out.len; i++)
    if (memcmp(out.ptr + i, want, n) == 0) return 1;
  return 0;
}

static void print(const char *what, const prober_outcome *o) {
  prober_str m = prober_outcome_message(o);
  printf("%s: %s reason=%s status=%d message=%.*s\n", what,
         prober_result_name(prober_outcome_result(o)), prober_reason_name(prober_outcome_reason(o)),
         prober_outcome_http_status(o), (int)m.len, m.ptr);
}

int main(int argc, char **argv) {
  if (argc != 4 || !*argv[1] || !*argv[2] || !*argv[3]) {
    fprintf(stderr, "usage: container_netns NETNS_PATH URL WANT_BODY (all required)\n");
    return 2;
  }
  const char *netns = argv[1], *url = argv[2], *want = argv[3];

  /* One-shot, inside. */
  prober_spec *s = spec_for(url, netns);
  prober_outcome *o = NULL;
  EXPECT(prober_check(s, &o) == PROBER_OK, "prober_check");
  print("check inside", o);
  EXPECT(prober_outcome_result(o) == PROBER_RESULT_SUCCESS, "inside: not a success");
  EXPECT(prober_outcome_http_status(o) == 200, "inside: status %d", prober_outcome_http_status(o));
  EXPECT(body_has(o, want), "inside: no \"%s\" in the body", want);
  prober_outcome_free(o);

  /* Through an engine: the submitted check's event. */
  prober_engine *e = NULL;
  EXPECT(prober_engine_new(&e) == PROBER_OK, "prober_engine_new");
  EXPECT(prober_engine_submit(e, s, 7) == PROBER_OK, "prober_engine_submit");
  prober_spec_free(s);
  int got = 0;
  /* The check's own timeout (3 s) ends it; the count bounds the loop should it not. */
  for (int turns = 0; !got && !failures && turns < 100; turns++) {
    EXPECT(prober_engine_wait(e, 1000) == PROBER_OK, "prober_engine_wait");
    prober_event ev[8];
    size_t n = prober_engine_drain(e, ev, 8);
    for (size_t i = 0; i < n; i++) {
      if (ev[i].kind != PROBER_EVENT_CHECK || ev[i].tag != 7) continue;
      printf("engine inside: %s reason=%s status=%u message=%.*s\n", prober_result_name(ev[i].result),
             prober_reason_name(ev[i].reason), ev[i].http_status, (int)ev[i].message.len,
             ev[i].message.ptr);
      EXPECT(ev[i].result == PROBER_RESULT_SUCCESS, "engine: not a success");
      EXPECT(ev[i].http_status == 200, "engine: status %u", ev[i].http_status);
      got = 1;
    }
  }
  EXPECT(got, "no event of the engine's check");
  prober_engine_free(e);

  /* The same URL from the host: the container's server is not there. */
  s = spec_for(url, NULL);
  EXPECT(prober_check(s, &o) == PROBER_OK, "prober_check");
  print("check on the host", o);
  EXPECT(!body_has(o, want), "the host reached the container's server");
  EXPECT(prober_outcome_result(o) != PROBER_RESULT_SUCCESS || prober_outcome_http_status(o) != 200,
         "the host got a 200");
  prober_outcome_free(o);
  prober_spec_free(s);

  if (failures) return 1;
  printf("container_netns: all checks passed\n");
  return 0;
}
