/* prober_engine_submit_with: each check's outcome goes to its own function, once, during
 * prober_engine_wait on the driving thread, with its views readable; never to the event queue.
 * A cancelled check calls its function; a refused submit (NULL function, bad spec) never does;
 * a call on the engine from within the function is refused as busy. */
#include "testutil.h"

struct waiter {
  int calls;
  uint64_t tag;
  uint32_t result, reason, kind;
  char output[128];
  prober_status reentry; /* what a call on the engine from within the function returned */
  prober_engine *engine;
};

static void done(void *user, const prober_event *ev) {
  struct waiter *w = user;
  w->calls++;
  w->kind = ev->kind;
  w->tag = ev->tag;
  w->result = ev->result;
  w->reason = ev->reason;
  size_t n = ev->output.len < sizeof w->output - 1 ? ev->output.len : sizeof w->output - 1;
  memcpy(w->output, ev->output.ptr, n);
  w->output[n] = 0;
  if (w->engine != NULL) w->reentry = prober_engine_trigger(w->engine, 1, PROBER_ROLE_LIVENESS);
}

int main(void) {
  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new(&e));
  const char *ok_argv[] = {"true"};
  const char *fail_argv[] = {"sh", "-c", "echo nope; exit 3"};
  const char *slow_argv[] = {"sleep", "30"};
  struct waiter ok = {0}, fail = {0}, slow = {0}, refused = {0};
  ok.engine = e;
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_exec(ok_argv, 1, &s));
  CHECK(prober_engine_submit_with(e, s, 1, NULL, &refused) == PROBER_E_NULL);
  CHECK(prober_engine_submit_with(NULL, s, 1, done, &refused) == PROBER_E_NULL);
  CHECK_OK(prober_engine_submit_with(e, s, 1, done, &ok));
  prober_spec_free(s);
  CHECK_OK(prober_spec_new_exec(fail_argv, 3, &s));
  CHECK_OK(prober_engine_submit_with(e, s, 2, done, &fail));
  prober_spec_free(s);
  CHECK_OK(prober_spec_new_exec(slow_argv, 2, &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 40000));
  CHECK_OK(prober_engine_submit_with(e, s, 3, done, &slow));
  prober_spec_free(s);

  double limit = now_s() + 30;
  prober_event ev[4];
  while (ok.calls == 0 || fail.calls == 0) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 50));
    CHECK(prober_engine_drain(e, ev, 4) == 0); /* nothing goes to the queue */
  }
  CHECK(ok.calls == 1 && ok.kind == PROBER_EVENT_CHECK && ok.tag == 1);
  CHECK(ok.result == PROBER_RESULT_SUCCESS);
  CHECK(ok.reentry == PROBER_E_BUSY);
  CHECK(fail.calls == 1 && fail.tag == 2 && fail.result == PROBER_RESULT_FAILURE);
  CHECK(strstr(fail.output, "nope") != NULL);

  CHECK(slow.calls == 0);
  CHECK(prober_engine_cancel_check(e, 3) == 1);
  CHECK(slow.calls == 1 && slow.result == PROBER_RESULT_UNKNOWN);
  CHECK(slow.reason == PROBER_REASON_CANCELLED);
  CHECK(prober_engine_drain(e, ev, 4) == 0);
  CHECK(refused.calls == 0 && ok.calls == 1 && fail.calls == 1);
  CHECK(prober_engine_in_flight(e) == 0);
  prober_engine_free(e);
  puts("ok");
  return 0;
}
