/* Exec probes inside another process's namespaces through the C ABI (issue 29): a process in
 * new UTS, mount and PID namespaces made by unshare, its host name seen by the probe; a
 * process that is gone; bad input. Needs root (CI runs as root): fails, never skips, without. */
#include <signal.h>
#include <sys/wait.h>

#include "testutil.h"

int main(void) {
  if (geteuid() != 0) {
    fprintf(stderr, "test_namespaces needs root (CI runs it as root); it does not skip\n");
    return 1;
  }
  /* The shell's own PID, as the host sees it (the host's /proc is still mounted inside), then
   * it becomes the sleep that holds the namespaces. */
  FILE *ns = popen("exec unshare --uts --mount --pid --fork sh -c "
                   "'hostname c-inside; read pid rest < /proc/self/stat; echo $pid; "
                   "exec sleep 1000000'",
                   "r");
  CHECK(ns != NULL);
  unsigned pid = 0;
  if (fscanf(ns, "%u", &pid) != 1 || pid == 0) {
    fprintf(stderr, "unshare could not make the namespaces; the test does not skip\n");
    return 1;
  }

  prober_spec *s = NULL;
  prober_outcome *o = NULL;
  const char *argv[] = {"hostname"};
  CHECK_OK(prober_spec_new_exec(argv, 1, &s));
  CHECK_OK(prober_spec_set_namespaces_of(s, pid));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(str_eq(prober_outcome_output(o), "c-inside\n"));
  prober_outcome_free(o);
  /* 0: on the host again. */
  CHECK_OK(prober_spec_set_namespaces_of(s, 0));
  CHECK_OK(prober_check(s, &o));
  CHECK(!str_eq(prober_outcome_output(o), "c-inside\n"));
  prober_outcome_free(o);

  kill((pid_t)pid, SIGKILL);
  pclose(ns);

  /* Gone: unknown, naming the process. */
  pid_t gone = fork();
  CHECK(gone >= 0);
  if (gone == 0) _exit(0);
  CHECK(waitpid(gone, NULL, 0) == gone);
  CHECK_OK(prober_spec_set_namespaces_of(s, (uint32_t)gone));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_UNKNOWN);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_SPAWN);
  char want[96];
  snprintf(want, sizeof want, "could not enter the namespaces of process %d: no such process",
           (int)gone);
  CHECK(str_eq(prober_outcome_message(o), want));
  prober_outcome_free(o);

  /* Bad input. */
  CHECK_STATUS(prober_spec_set_namespaces_of(s, (1u << 22) + 1), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_set_namespaces_of(NULL, 1), PROBER_E_NULL);
  prober_spec_free(s);
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 1, &s));
  CHECK_STATUS(prober_spec_set_namespaces_of(s, 1), PROBER_E_WRONG_KIND);
  prober_spec_free(s);
  return 0;
}
