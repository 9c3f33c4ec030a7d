/* Exec runs contained in a cgroup of their own through the C ABI (red-team finding 9): a
 * directory that is not a cgroup makes the run Unknown without running the command; NULL and
 * "" turn containment off again; bad input. (The containment itself, with a real cgroup v2
 * and a setsid process, is prober-exec's tests/containment.rs.) */
#include <sys/stat.h>

#include "testutil.h"

int main(void) {
  char dir[] = "/tmp/prober-c-cgroup-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char marker[64];
  snprintf(marker, sizeof marker, "%s/ran", dir);

  prober_spec *s = NULL;
  prober_outcome *o = NULL;
  const char *argv[] = {"touch", marker};
  CHECK_OK(prober_spec_new_exec(argv, 2, &s));
  CHECK_OK(prober_spec_set_exec_cgroup(s, dir));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_UNKNOWN);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_SPAWN);
  char want[96];
  snprintf(want, sizeof want, "could not create a cgroup for the command in %s: ", dir);
  prober_str msg = prober_outcome_message(o);
  CHECK(msg.len > strlen(want) && memcmp(msg.ptr, want, strlen(want)) == 0);
  prober_outcome_free(o);
  struct stat st;
  CHECK(stat(marker, &st) != 0); /* never run uncontained */

  /* NULL and "": off again, the command runs. */
  CHECK_OK(prober_spec_set_exec_cgroup(s, NULL));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  prober_outcome_free(o);
  CHECK(unlink(marker) == 0);
  CHECK_OK(prober_spec_set_exec_cgroup(s, dir));
  CHECK_OK(prober_spec_set_exec_cgroup(s, ""));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  prober_outcome_free(o);
  CHECK(unlink(marker) == 0);
  CHECK(rmdir(dir) == 0);

  /* Bad input. */
  CHECK_STATUS(prober_spec_set_exec_cgroup(s, "relative/dir"), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_set_exec_cgroup(NULL, "/sys/fs/cgroup"), PROBER_E_NULL);
  prober_spec_free(s);
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 1, &s));
  CHECK_STATUS(prober_spec_set_exec_cgroup(s, "/sys/fs/cgroup"), PROBER_E_WRONG_KIND);
  prober_spec_free(s);
  return 0;
}
