/* A panic inside Rust comes back as PROBER_E_PANIC and the process goes on. */
#include "testutil.h"

/* The test-only hook of the test-panic build (never in a shipped library, so not in the
 * public header). */
prober_status prober__test_panic(void);

int main(void) {
  CHECK_STATUS(prober__test_panic(), PROBER_E_PANIC);
  CHECK(str_has(prober_last_error(), "panic"));
  /* The library still works afterwards. */
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 1, &s));
  prober_outcome *o = NULL;
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  prober_outcome_free(o);
  prober_spec_free(s);
  puts("test_panic: 1 passed, 0 failed");
  return 0;
}
