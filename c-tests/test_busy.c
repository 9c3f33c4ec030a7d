/* Two threads on one engine, against the rules: the overlapping call is refused with
   PROBER_E_BUSY, nothing is corrupted (run under ASan and valgrind by ci/c-tests.sh), and every
   submit that was accepted still delivers exactly one check event. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "testutil.h"

#define MAX_SUBMITS 400

static prober_engine *engine;
static prober_spec *spec;
static atomic_int stop_waiting;
static atomic_int busy_seen;
static atomic_int submitted;

/* Phase 1: blocks in prober_engine_wait (nothing scheduled) until told to stop; the main
   thread's step between two waits makes a wait of its own refused now and then. */
static void *waiter(void *arg) {
  (void)arg;
  while (!atomic_load(&stop_waiting)) {
    prober_status rc = prober_engine_wait(engine, -1);
    CHECK(rc == PROBER_OK || rc == PROBER_E_BUSY);
    /* Refused: the main thread is inside a call. Let it run rather than spin: under valgrind,
       which runs one thread at a time, a spinning retry here starved the main thread's return
       from a system call for minutes (seen once in six runs on a loaded machine). */
    if (rc == PROBER_E_BUSY) sched_yield();
  }
  return NULL;
}

/* Phase 2: steps, submits and adds targets as fast as it can, until this thread did its share
   and the other one was refused (bounded, so that a scheduler that never lets two calls
   overlap fails the check below instead of hanging). */
static void *hammer(void *arg) {
  uintptr_t id = (uintptr_t)arg;
  int ok = 0;
  for (unsigned i = 0; ok < 2000 || (atomic_load(&busy_seen) == 0 && i < 200000); i++) {
    prober_status rc;
    uint64_t target = 0;
    int submit = 0;
    if (i % 8 == 0 && atomic_load(&submitted) < MAX_SUBMITS) {
      submit = 1;
      rc = prober_engine_submit(engine, spec, id * 1000000 + i);
    } else if (i % 8 == 1) {
      rc = prober_engine_add_target(engine, &target);
      CHECK(rc != PROBER_OK || target != 0);
    } else {
      rc = prober_engine_step(engine);
    }
    if (rc == PROBER_OK) {
      ok++;
      if (submit) atomic_fetch_add(&submitted, 1);
    } else {
      CHECK_STATUS(rc, PROBER_E_BUSY);
      CHECK(str_has(prober_last_error(), "in use by another thread"));
      CHECK(target == 0); /* out-parameters are written only on success */
      atomic_fetch_add(&busy_seen, 1);
    }
  }
  return NULL;
}

int main(void) {
  alarm(120); /* SIGALRM's default action ends a hung test */
  target_server t = target_start();
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", t.port, &spec));
  CHECK_OK(prober_engine_new(&engine));
  CHECK(strcmp(prober_status_str(PROBER_E_BUSY), "engine in use by another thread") == 0);

  /* Phase 1: a call while another thread waits inside the engine is refused, every time. */
  pthread_t w;
  CHECK(pthread_create(&w, NULL, waiter, NULL) == 0);
  int refused = 0;
  while (refused < 3) {
    prober_status rc = prober_engine_step(engine);
    if (rc == PROBER_E_BUSY) {
      CHECK(str_has(prober_last_error(), "in use by another thread"));
      CHECK(prober_engine_pending(engine) == 0); /* 0 too, with the error recorded */
      CHECK(str_has(prober_last_error(), "in use by another thread"));
      refused++;
    } else {
      CHECK_OK(rc); /* the waiter was between two waits */
    }
  }
  /* The wake-up is the one call any thread may make meanwhile. */
  atomic_store(&stop_waiting, 1);
  CHECK_OK(prober_engine_wakeup(engine));
  /* (A wake-up that came before the waiter's next wait makes that wait return at once.) */
  CHECK(pthread_join(w, NULL) == 0);

  /* Phase 2: two threads hammering the engine. */
  pthread_t h[2];
  for (uintptr_t i = 0; i < 2; i++) CHECK(pthread_create(&h[i], NULL, hammer, (void *)(i + 1)) == 0);
  for (int i = 0; i < 2; i++) CHECK(pthread_join(h[i], NULL) == 0);
  CHECK(atomic_load(&busy_seen) > 0);

  /* Back to one thread: every accepted submit ends with exactly one check event. */
  static prober_event events[256];
  int checks = 0, want = atomic_load(&submitted);
  double limit = now_s() + 60;
  while (checks < want || prober_engine_in_flight(engine) > 0) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(engine, 50));
    size_t n = prober_engine_drain(engine, events, 256);
    for (size_t i = 0; i < n; i++) {
      if (events[i].kind != PROBER_EVENT_CHECK) continue;
      CHECK(events[i].result == PROBER_RESULT_SUCCESS);
      checks++;
    }
  }
  CHECK(checks == want);
  printf("test_busy: %d submits, %d calls refused as busy\n", want, atomic_load(&busy_seen));
  prober_engine_free(engine);
  prober_spec_free(spec);
  target_stop(&t);
  puts("test_busy: 2 passed, 0 failed");
  return 0;
}
