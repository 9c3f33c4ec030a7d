/* A host that does not drain: probing goes on, prober_engine_published follows the probed
 * command, the queue stays bounded (state changes coalesced per worker, run events dropped
 * oldest-first past 1024 and counted in prober_engine_get_stats), and the drain afterwards
 * gives each worker's latest state once. */
#include "testutil.h"

#define TARGETS 5
#define RUN_LIMIT 1024

static uint64_t targets[TARGETS];
static prober_event events[2 * RUN_LIMIT];

static int all_published(prober_engine *e, uint32_t want) {
  for (int i = 0; i < TARGETS; i++) {
    uint32_t r = 99;
    CHECK_OK(prober_engine_published(e, targets[i], PROBER_ROLE_READINESS, &r));
    if (r != want) return 0;
  }
  return 1;
}

static prober_engine_stats stats(prober_engine *e) {
  prober_engine_stats s;
  memset(&s, 0xff, sizeof s);
  CHECK_OK(prober_engine_get_stats(e, &s));
  return s;
}

/* Waits in the engine without draining; the queue never holds more than one state event per
 * worker, RUN_LIMIT run events and the runs of one wait (at most one per worker here; twice
 * that as a margin). */
static void step(prober_engine *e, double *limit) {
  CHECK(now_s() < *limit);
  CHECK_OK(prober_engine_wait(e, 50));
  prober_engine_stats s = stats(e);
  CHECK(s.pending_events == prober_engine_pending(e));
  CHECK(s.pending_events <= 3 * TARGETS + RUN_LIMIT);
}

int main(void) {
  char flag[64];
  snprintf(flag, sizeof flag, "/tmp/prober-c-backlog-%d", (int)getpid());
  unlink(flag);

  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new_with_flags(PROBER_ENGINE_EVERY_RUN, &e));
  CHECK_STATUS(prober_engine_get_stats(e, NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_engine_get_stats(NULL, &(prober_engine_stats){0}), PROBER_E_NULL);
  const char *argv[] = {"test", "-e", flag};
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_exec(argv, 3, &s));
  CHECK_OK(prober_spec_set_period_ms(s, 10));
  CHECK_OK(prober_spec_set_thresholds(s, 1, 1));
  for (int i = 0; i < TARGETS; i++) {
    CHECK_OK(prober_engine_add_target(e, &targets[i]));
    CHECK_OK(prober_engine_set_probe(e, targets[i], PROBER_ROLE_READINESS, s));
  }
  prober_spec_free(s);
  prober_engine_stats st = stats(e);
  CHECK(st.targets == TARGETS && st.dropped_events == 0 && st.reserved[0] == 0);

  /* Only a guard against a hang: more than 1024 runs must pile up, and under valgrind on a
   * loaded 2-core machine the engine managed fewer than that in 60 s. */
  double limit = now_s() + 300;
  /* The command fails (no file) while runs pile up undrained, until some are dropped. */
  while (stats(e).dropped_events == 0) step(e, &limit);
  FILE *f = fopen(flag, "w");
  CHECK(f != NULL);
  fclose(f);
  while (!all_published(e, PROBER_RESULT_SUCCESS)) step(e, &limit);
  CHECK(unlink(flag) == 0);
  while (!all_published(e, PROBER_RESULT_FAILURE)) step(e, &limit);

  uint64_t dropped = stats(e).dropped_events;
  size_t n = prober_engine_drain(e, events, sizeof events / sizeof events[0]);
  CHECK(n <= 3 * TARGETS + RUN_LIMIT && prober_engine_pending(e) == 0);
  size_t runs = 0;
  int state_seen[TARGETS] = {0};
  for (size_t i = 0; i < n; i++) {
    if (events[i].kind == PROBER_EVENT_RUN) {
      runs++;
      continue;
    }
    CHECK(events[i].kind == PROBER_EVENT_STATE);
    for (int t = 0; t < TARGETS; t++) {
      if (events[i].target != targets[t]) continue;
      /* The latest published value, from a run. */
      CHECK(events[i].result == PROBER_RESULT_FAILURE && events[i].has_outcome);
      CHECK(events[i].exit_code == 1);
      state_seen[t]++;
    }
  }
  for (int t = 0; t < TARGETS; t++) CHECK(state_seen[t] == 1);
  CHECK(runs >= RUN_LIMIT && runs <= RUN_LIMIT + 2 * TARGETS);
  CHECK(dropped > 0 && stats(e).dropped_events >= dropped);
  prober_engine_free(e);
  puts("ok");
  return 0;
}
