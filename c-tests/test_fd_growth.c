/* 1,000 checks leave the descriptor count where it was. */
#include "testutil.h"

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
  prober_spec_free(tcp);
  prober_spec_free(http);
  prober_spec_free(refused);
  target_stop(&t);
  puts("test_fd_growth: 1 passed, 0 failed");
  return 0;
}
