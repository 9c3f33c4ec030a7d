/* prober_engine_wakeup from a second thread interrupts a wait with no limit of its own. */
#include <pthread.h>

#include "testutil.h"

static void *waker(void *arg) {
  struct timespec ts = {0, 100 * 1000 * 1000};
  nanosleep(&ts, NULL);
  CHECK_OK(prober_engine_wakeup((prober_engine *)arg));
  return NULL;
}

int main(void) {
  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new(&e));
  /* With nothing scheduled, only a wake-up can end this wait; SIGALRM's default action kills
     the test if it never comes. */
  alarm(30);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, waker, e) == 0);
  double start = now_s();
  CHECK_OK(prober_engine_wait(e, -1));
  CHECK(now_s() - start < 20);
  CHECK(pthread_join(th, NULL) == 0);
  /* A wake-up before the wait makes it return at once. */
  CHECK_OK(prober_engine_wakeup(e));
  CHECK_OK(prober_engine_wait(e, -1));
  alarm(0);
  CHECK_STATUS(prober_engine_wait(e, -2), PROBER_E_INVALID_DURATION);
  prober_engine_free(e);
  puts("test_wakeup: 1 passed, 0 failed");
  return 0;
}
