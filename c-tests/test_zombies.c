/* Exec timeouts, one-shot and in an engine (also removed mid-run), leave no zombie and no fd. */
#include "testutil.h"

int main(void) {
  const char *argv[] = {"/bin/sh", "-c", "sleep 30 & exec sleep 30"};
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_exec(argv, 3, &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 50));
  int fds = count_fds();
  for (int i = 0; i < 20; i++) {
    prober_outcome *o = NULL;
    CHECK_OK(prober_check(s, &o));
    CHECK(prober_outcome_reason(o) == PROBER_REASON_TIMEOUT);
    prober_outcome_free(o);
  }
  CHECK(count_zombie_children() == 0);
  CHECK(count_fds() == fds);

  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new(&e));
  fds = count_fds();
  CHECK_OK(prober_spec_set_timeout_ms(s, 60000));
  uint64_t t = 0;
  CHECK_OK(prober_engine_add_target(e, &t));
  CHECK_OK(prober_engine_set_probe(e, t, PROBER_ROLE_LIVENESS, s));
  double limit = now_s() + 30;
  while (prober_engine_in_flight(e) == 0) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 10));
  }
  CHECK_OK(prober_engine_remove_target(e, t));
  CHECK(prober_engine_in_flight(e) == 0);
  /* The killed child is reaped by the library (at once or by its reaper thread). */
  limit = now_s() + 10;
  while (count_zombie_children() != 0) {
    CHECK(now_s() < limit);
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  CHECK(count_fds() == fds);
  prober_engine_free(e);
  prober_spec_free(s);
  puts("test_zombies: 1 passed, 0 failed");
  return 0;
}
