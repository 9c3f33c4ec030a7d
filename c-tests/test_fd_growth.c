/* 1,000 checks leave the descriptor count where it was; an engine keeps at most 64 reusable
 * sockets (none with PROBER_ENGINE_NO_SOCKET_REUSE) and closes them when freed. */
#include "testutil.h"

/* Submits n TCP checks, 32 in flight, and waits for all; returns how many succeeded. */
static int engine_checks(prober_engine *e, const prober_spec *s, int n) {
  static prober_event evs[64];
  int submitted = 0, done = 0, ok = 0;
  double limit = now_s() + 30;
  while (done < n) {
    CHECK(now_s() < limit);
    while (submitted < n && submitted - done < 32) CHECK_OK(prober_engine_submit(e, s, (uint64_t)submitted++));
    CHECK_OK(prober_engine_wait(e, 50));
    size_t k = prober_engine_drain(e, evs, 64);
    for (size_t i = 0; i < k; i++)
      if (evs[i].kind == PROBER_EVENT_CHECK) {
        done++;
        ok += evs[i].result == PROBER_RESULT_SUCCESS;
      }
  }
  return ok;
}

int main(void) {
  target_server t = target_start();
  char url[256];
  target_url(&t, "/ok", url, sizeof url);
  prober_spec *tcp = NULL, *http = NULL, *refused = NULL;
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", t.port, &tcp));
  CHECK_OK(prober_spec_new_http(url, &http));
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 1, &refused));
  prober_outcome *o = NULL;
  CHECK_OK(prober_check(tcp, &o)); /* warm-up */
  prober_outcome_free(o);
  int before = count_fds();
  for (int i = 0; i < 1000; i++) {
    prober_spec *s = i % 3 == 0 ? tcp : i % 3 == 1 ? http : refused;
    CHECK_OK(prober_check(s, &o));
    CHECK(prober_outcome_result(o) == (s == refused ? PROBER_RESULT_FAILURE : PROBER_RESULT_SUCCESS));
    prober_outcome_free(o);
  }
  int after = count_fds();
  if (after != before) fprintf(stderr, "fds before %d after %d\n", before, after);
  CHECK(after == before);

  /* Default engine: finished probes leave their sockets for reuse, at most 32 here (the most
   * ever in flight), and freeing the engine closes them. */
  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new(&e));
  int with_engine = count_fds();
  CHECK(engine_checks(e, tcp, 300) == 300);
  int kept = count_fds() - with_engine;
  if (kept < 1 || kept > 32) fprintf(stderr, "kept %d sockets\n", kept);
  CHECK(kept >= 1 && kept <= 32);
  prober_engine_free(e);
  CHECK(count_fds() == before);

  /* PROBER_ENGINE_NO_SOCKET_REUSE: every socket closed after its probe. */
  CHECK_OK(prober_engine_new_with_flags(PROBER_ENGINE_NO_SOCKET_REUSE, &e));
  with_engine = count_fds();
  CHECK(engine_checks(e, tcp, 300) == 300);
  if (count_fds() != with_engine) fprintf(stderr, "fds %d -> %d\n", with_engine, count_fds());
  CHECK(count_fds() == with_engine);
  prober_engine_free(e);
  CHECK(count_fds() == before);

  prober_spec_free(tcp);
  prober_spec_free(http);
  prober_spec_free(refused);
  target_stop(&t);
  puts("test_fd_growth: 1 passed, 0 failed");
  return 0;
}
