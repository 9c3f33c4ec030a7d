/* Fault isolation through the C ABI: a probe whose own code panics (the test-panic build's exec
 * argv[0] "prober-test-panic") ends that run as Unknown with PROBER_REASON_INTERNAL; the engine
 * is not poisoned, other targets keep their results, and one-shot checks report the same. */
#include "testutil.h"

#define MAX_EVENTS 1024
static prober_event events[MAX_EVENTS];

static int is_internal(uint32_t result, uint32_t reason, prober_str message) {
  return result == PROBER_RESULT_UNKNOWN && reason == PROBER_REASON_INTERNAL &&
         str_has(message, "the probe panicked: deliberate test panic");
}

int main(void) {
  target_server t = target_start();
  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new_with_flags(PROBER_ENGINE_EVERY_RUN, &e));

  uint64_t healthy = 0, hostile = 0;
  CHECK_OK(prober_engine_add_target(e, &healthy));
  CHECK_OK(prober_engine_add_target(e, &hostile));
  prober_spec *tcp = NULL;
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", (uint16_t)t.port, &tcp));
  CHECK_OK(prober_spec_set_period_ms(tcp, 20));
  CHECK_OK(prober_engine_set_probe(e, healthy, PROBER_ROLE_READINESS, tcp));
  /* Panics when the command's output arrives: the child, its pipe and pidfd are live then. */
  const char *argv[] = {"prober-test-panic", "ready", "/bin/sh", "-c", "echo hi; exec sleep 30"};
  prober_spec *bad = NULL;
  CHECK_OK(prober_spec_new_exec(argv, 5, &bad));
  CHECK_OK(prober_spec_set_timeout_ms(bad, 60000));
  CHECK_OK(prober_spec_set_period_ms(bad, 60000));
  CHECK_OK(prober_engine_set_probe(e, hostile, PROBER_ROLE_LIVENESS, bad));

  int panicked = 0, healthy_after = 0, healthy_failed = 0;
  double limit = now_s() + 30;
  while (!(panicked && healthy_after >= 5)) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 50));
    size_t k = prober_engine_drain(e, events, MAX_EVENTS);
    for (size_t i = 0; i < k; i++) {
      if (events[i].kind != PROBER_EVENT_RUN) continue;
      if (events[i].target == hostile && is_internal(events[i].result, events[i].reason, events[i].message))
        panicked = 1;
      if (events[i].target == healthy) {
        if (events[i].result != PROBER_RESULT_SUCCESS) healthy_failed++;
        if (panicked) healthy_after++;
      }
    }
  }
  CHECK(healthy_failed == 0);

  /* Not poisoned: one-shot submits still work, and a panicking one is reported, not fatal. */
  CHECK_OK(prober_engine_submit(e, tcp, 1));
  CHECK_OK(prober_engine_submit(e, bad, 2));
  int got_ok = 0, got_internal = 0;
  limit = now_s() + 30;
  while (!(got_ok && got_internal)) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 50));
    size_t k = prober_engine_drain(e, events, MAX_EVENTS);
    for (size_t i = 0; i < k; i++) {
      if (events[i].kind != PROBER_EVENT_CHECK) continue;
      if (events[i].tag == 1 && events[i].result == PROBER_RESULT_SUCCESS) got_ok = 1;
      if (events[i].tag == 2 && is_internal(events[i].result, events[i].reason, events[i].message)) got_internal = 1;
    }
  }
  CHECK_OK(prober_engine_remove_target(e, hostile));
  CHECK_OK(prober_engine_remove_target(e, healthy));
  prober_engine_free(e);

  /* The blocking check: the same outcome, PROBER_OK. */
  prober_outcome *o = NULL;
  CHECK_OK(prober_check(bad, &o));
  CHECK(is_internal(prober_outcome_result(o), prober_outcome_reason(o), prober_outcome_message(o)));
  prober_outcome_free(o);

  prober_spec_free(bad);
  prober_spec_free(tcp);
  target_stop(&t);
  puts("test_isolation: 3 passed, 0 failed");
  return 0;
}
