/* A small libprober host: probes a URL once, then watches it with a readiness worker for a few
 * seconds, printing each state change. Build against an installed copy (see README.md here). */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <prober.h>

static int fail(const char *what, prober_status rc) {
  prober_str e = prober_last_error();
  fprintf(stderr, "%s: %s (%.*s)\n", what, prober_status_str(rc), (int)e.len, e.ptr);
  return 2;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s http://HOST:PORT/PATH\n", argv[0]);
    return 64;
  }
  if (prober_abi_version() != PROBER_ABI_VERSION) {
    fprintf(stderr, "libprober ABI %u, header ABI %d\n", prober_abi_version(), PROBER_ABI_VERSION);
    return 2;
  }
  prober_spec *spec = NULL;
  prober_status rc = prober_spec_new_http(argv[1], &spec);
  if (rc) return fail("spec", rc);

  /* One-shot, blocking. */
  prober_outcome *o = NULL;
  if ((rc = prober_check(spec, &o))) return fail("check", rc);
  prober_str msg = prober_outcome_message(o);
  printf("check: result=%u status=%u duration=%lluus message=%.*s\n", prober_outcome_result(o),
         prober_outcome_http_status(o), (unsigned long long)prober_outcome_duration_us(o), (int)msg.len, msg.ptr);
  int ok = prober_outcome_result(o) == PROBER_RESULT_SUCCESS;
  prober_outcome_free(o);

  /* Periodic, in the host's own poll loop. */
  prober_engine *e = NULL;
  if ((rc = prober_engine_new(&e))) return fail("engine", rc);
  uint64_t target = 0;
  prober_engine_add_target(e, &target);
  prober_spec_set_period_ms(spec, 200);
  if ((rc = prober_engine_set_probe(e, target, PROBER_ROLE_READINESS, spec))) return fail("set_probe", rc);
  prober_spec_free(spec);
  time_t end = time(NULL) + 2;
  while (time(NULL) < end) {
    struct pollfd p = {prober_engine_fd(e), POLLIN, 0};
    int64_t t = prober_engine_timeout_ms(e);
    poll(&p, 1, t < 0 || t > 100 ? 100 : (int)t);
    prober_engine_step(e);
    prober_event ev[16];
    size_t n = prober_engine_drain(e, ev, 16);
    for (size_t i = 0; i < n; i++)
      if (ev[i].kind == PROBER_EVENT_STATE)
        printf("readiness -> %s\n", ev[i].result == PROBER_RESULT_SUCCESS ? "success" : "failure");
  }
  prober_engine_free(e);
  return ok ? 0 : 1;
}
