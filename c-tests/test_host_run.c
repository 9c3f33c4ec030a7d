/* Host-run probes through the C ABI: the engine announces each run (PROBER_EVENT_HOST_RUN), this
 * program (the host) completes it with prober_engine_complete_run, or lets it time out. */
#include "testutil.h"

#define MAX_EVENTS 256
static prober_event events[MAX_EVENTS];

/* What the test looks at of one drained event (views copied: they end at the next drain). */
typedef struct {
  uint32_t kind, role, result, reason;
  uint64_t target, tag;
  int has_outcome;
  char message[256], output[64];
} seen_event;

static void copy_view(char *dst, size_t cap, prober_str v) {
  size_t n = v.len < cap - 1 ? v.len : cap - 1;
  memcpy(dst, v.ptr, n);
  dst[n] = '\0';
}

/* Events drained and not looked at yet: a drain may bring more than the one waited for. */
static seen_event backlog[MAX_EVENTS];
static size_t backlog_next, backlog_len;

/* The next event of `kind` about `target`, running the engine until one arrives (30 s bound:
 * hangs only); events before it are passed over. */
static seen_event wait_for(prober_engine *e, uint32_t kind, uint64_t target) {
  double limit = now_s() + 30;
  for (;;) {
    while (backlog_next < backlog_len) {
      seen_event s = backlog[backlog_next++];
      if (s.kind != kind || s.target != target) continue;
      if (kind == PROBER_EVENT_STATE && !s.has_outcome) continue;
      return s;
    }
    if (now_s() >= limit) fprintf(stderr, "no event of kind %u about target %llu\n", kind, (unsigned long long)target);
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 50));
    size_t k = prober_engine_drain(e, events, MAX_EVENTS);
    backlog_next = backlog_len = 0;
    for (size_t i = 0; i < k; i++) {
      seen_event s = {events[i].kind, events[i].role, events[i].result, events[i].reason,
                      events[i].target, events[i].tag, events[i].has_outcome, {0}, {0}};
      copy_view(s.message, sizeof s.message, events[i].message);
      copy_view(s.output, sizeof s.output, events[i].output);
      backlog[backlog_len++] = s;
    }
  }
}

static prober_spec *host_run_spec(const char *label, uint32_t timeout_ms) {
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_host_run(label, &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, timeout_ms));
  CHECK_OK(prober_spec_set_period_ms(s, 50));
  CHECK_OK(prober_spec_set_thresholds(s, 1, 1));
  return s;
}

int main(void) {
  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new(&e));

  /* Completed in time: the announcement names the run, the worker publishes the host's result
   * with its output. */
  uint64_t t = 0;
  CHECK_OK(prober_engine_add_target(e, &t));
  prober_spec *s = host_run_spec("cat /tmp/healthy", 10000);
  CHECK_OK(prober_engine_set_probe(e, t, PROBER_ROLE_READINESS, s));
  prober_spec_free(s);
  seen_event run = wait_for(e, PROBER_EVENT_HOST_RUN, t);
  CHECK(run.role == PROBER_ROLE_READINESS && run.tag != 0 && !run.has_outcome);
  CHECK(strcmp(run.message, "cat /tmp/healthy") == 0);
  /* Readiness starts as Failure: Success is the first change, then the host's Failure. */
  CHECK_OK(prober_engine_complete_run(e, run.tag, PROBER_RESULT_SUCCESS, "ok\n", 3));
  seen_event st = wait_for(e, PROBER_EVENT_STATE, t);
  CHECK(st.result == PROBER_RESULT_SUCCESS && st.reason == PROBER_REASON_NONE && st.message[0] == '\0');
  CHECK(strcmp(st.output, "ok\n") == 0);
  run = wait_for(e, PROBER_EVENT_HOST_RUN, t);
  CHECK_OK(prober_engine_complete_run(e, run.tag, PROBER_RESULT_FAILURE, "no such file", 12));
  st = wait_for(e, PROBER_EVENT_STATE, t);
  CHECK(st.result == PROBER_RESULT_FAILURE && st.reason == PROBER_REASON_NONE);
  CHECK(strcmp(st.message, "host run \"cat /tmp/healthy\" failed") == 0);
  CHECK(strcmp(st.output, "no such file") == 0);
  /* A second completion of the same run: ignored, said and counted. */
  CHECK_STATUS(prober_engine_complete_run(e, run.tag, PROBER_RESULT_SUCCESS, NULL, 0), PROBER_E_RUN_ENDED);
  CHECK(str_has(prober_last_error(), "no longer in flight"));
  uint32_t published = 99;
  CHECK_OK(prober_engine_published(e, t, PROBER_ROLE_READINESS, &published));
  CHECK(published == PROBER_RESULT_FAILURE);

  /* Bad arguments. */
  CHECK_STATUS(prober_engine_complete_run(e, 12345, PROBER_RESULT_SUCCESS, NULL, 0), PROBER_E_UNKNOWN_RUN);
  CHECK_STATUS(prober_engine_complete_run(e, 12345, 77, NULL, 0), PROBER_E_INVALID_ENUM);
  CHECK_STATUS(prober_engine_complete_run(e, 12345, PROBER_RESULT_SUCCESS, NULL, 3), PROBER_E_NULL);
  CHECK_STATUS(prober_engine_complete_run(NULL, 1, PROBER_RESULT_SUCCESS, NULL, 0), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_new_host_run(NULL, &s), PROBER_E_NULL);
  CHECK_STATUS(prober_engine_get_host_run_stats(e, NULL), PROBER_E_NULL);

  /* Not completed in time: Failure with reason timeout, as any kind's timeout; the answer that
   * comes after is late. */
  uint64_t t2 = 0;
  CHECK_OK(prober_engine_add_target(e, &t2));
  s = host_run_spec("slow", 200);
  CHECK_OK(prober_engine_set_probe(e, t2, PROBER_ROLE_LIVENESS, s));
  prober_spec_free(s);
  seen_event slow = wait_for(e, PROBER_EVENT_HOST_RUN, t2);
  st = wait_for(e, PROBER_EVENT_STATE, t2);
  CHECK(st.result == PROBER_RESULT_FAILURE && st.reason == PROBER_REASON_TIMEOUT);
  CHECK(strcmp(st.message, "host run timed out: \"slow\" timed out after 200ms") == 0);
  CHECK_STATUS(prober_engine_complete_run(e, slow.tag, PROBER_RESULT_SUCCESS, "ok", 2), PROBER_E_RUN_ENDED);
  CHECK_OK(prober_engine_remove_target(e, t2));

  /* One-shot checks have no host to run them. */
  s = host_run_spec("x", 1000);
  CHECK_STATUS(prober_engine_submit(e, s, 1), PROBER_E_WRONG_KIND);
  CHECK(str_has(prober_last_error(), "one-shot"));
  prober_outcome *o = NULL;
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_UNKNOWN);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_UNSUPPORTED);
  prober_outcome_free(o);
  CHECK_STATUS(prober_spec_set_close_policy(s, PROBER_CLOSE_FIN), PROBER_E_WRONG_KIND);
  /* A kind that never connects refuses a namespace whatever the path, as exec does. */
  CHECK_STATUS(prober_spec_set_netns(s, "/proc/self/ns/net"), PROBER_E_WRONG_KIND);
  CHECK_STATUS(prober_spec_set_netns(s, "relative"), PROBER_E_WRONG_KIND);
  CHECK(str_has(prober_last_error(), "network namespace applies to"));
  prober_spec_free(s);

  prober_host_run_stats hs;
  memset(&hs, 0xff, sizeof hs);
  CHECK_OK(prober_engine_get_host_run_stats(e, &hs));
  CHECK(hs.announced >= 3 && hs.completed == 2 && hs.timed_out >= 1);
  CHECK(hs.late == 2 && hs.unknown == 1);
  CHECK(hs.reserved[0] == 0 && hs.reserved[1] == 0 && hs.reserved[2] == 0);

  prober_engine_free(e);
  puts("test_host_run: ok");
  return 0;
}
