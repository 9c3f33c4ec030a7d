/* prober_engine_cancel_check: a running one-shot command is killed and reaped at once, and its
 * check event still arrives, once, as Unknown/cancelled; other submits are untouched. */
#include "testutil.h"

int main(void) {
  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new(&e));
  CHECK(prober_engine_cancel_check(NULL, 1) == 0);
  char pidfile[64], script[160];
  snprintf(pidfile, sizeof pidfile, "/tmp/prober-c-cancel-%d", (int)getpid());
  unlink(pidfile);
  /* "$$$$": the kubelet's expansion leaves "$$", the shell's pid. */
  snprintf(script, sizeof script, "echo $$$$ > %s; exec sleep 30", pidfile);
  const char *slow[] = {"sh", "-c", script};
  const char *quick[] = {"true"};
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_exec(slow, 3, &s));
  CHECK_OK(prober_spec_set_timeout_ms(s, 20000));
  CHECK_OK(prober_engine_submit(e, s, 5));
  prober_spec_free(s);
  CHECK_OK(prober_spec_new_exec(quick, 1, &s));
  CHECK_OK(prober_engine_submit(e, s, 6));
  prober_spec_free(s);

  double limit = now_s() + 30;
  int pid = 0;
  while (pid <= 0) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 20));
    FILE *f = fopen(pidfile, "r");
    if (f != NULL) {
      if (fscanf(f, "%d", &pid) != 1) pid = 0;
      fclose(f);
    }
  }
  CHECK(prober_engine_cancel_check(e, 5) == 1);
  CHECK(prober_engine_cancel_check(e, 5) == 0);
  CHECK(prober_engine_cancel_check(e, 99) == 0);
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/%d", pid);
  while (access(proc, F_OK) == 0) {
    CHECK(now_s() < limit); /* killed and reaped: the pid disappears entirely */
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }

  prober_event ev[4];
  int cancelled = 0, quick_done = 0;
  while (!quick_done || !cancelled) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 50));
    size_t n = prober_engine_drain(e, ev, 4);
    for (size_t i = 0; i < n; i++) {
      CHECK(ev[i].kind == PROBER_EVENT_CHECK);
      if (ev[i].tag == 5) {
        CHECK(ev[i].result == PROBER_RESULT_UNKNOWN && ev[i].reason == PROBER_REASON_CANCELLED);
        cancelled++;
      } else {
        CHECK(ev[i].tag == 6 && ev[i].result == PROBER_RESULT_SUCCESS);
        quick_done++;
      }
    }
  }
  CHECK(cancelled == 1 && quick_done == 1 && prober_engine_in_flight(e) == 0);
  unlink(pidfile);
  prober_engine_free(e);
  puts("ok");
  return 0;
}
