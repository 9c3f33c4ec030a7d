/* prober_result_name and prober_reason_name: the names the prober command prints, never NULL. */
#include "testutil.h"

static void check_name(const char *got, const char *want) {
  CHECK(got != NULL);
  if (strcmp(got, want) != 0) {
    fprintf(stderr, "name: got \"%s\", want \"%s\"\n", got, want);
    exit(1);
  }
}

int main(void) {
  check_name(prober_result_name(PROBER_RESULT_SUCCESS), "success");
  check_name(prober_result_name(PROBER_RESULT_WARNING), "warning");
  check_name(prober_result_name(PROBER_RESULT_FAILURE), "failure");
  check_name(prober_result_name(PROBER_RESULT_UNKNOWN), "unknown");
  check_name(prober_result_name(4), "invalid result");
  check_name(prober_reason_name(PROBER_REASON_NONE), "none");
  check_name(prober_reason_name(PROBER_REASON_REFUSED), "refused");
  check_name(prober_reason_name(PROBER_REASON_TOO_MANY_REDIRECTS), "too_many_redirects");
  check_name(prober_reason_name(PROBER_REASON_TLS), "tls");
  check_name(prober_reason_name(PROBER_REASON_INTERNAL), "internal");
  check_name(prober_reason_name(PROBER_REASON_RESOURCE), "resource");
  check_name(prober_reason_name(UINT32_MAX), "invalid reason");
  /* The same pointer every time: static, never freed. */
  CHECK(prober_reason_name(PROBER_REASON_DNS) == prober_reason_name(PROBER_REASON_DNS));

  /* An outcome's numbers print as words. */
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 1, &s));
  prober_outcome *o = NULL;
  CHECK_OK(prober_check(s, &o));
  check_name(prober_result_name(prober_outcome_result(o)), "failure");
  check_name(prober_reason_name(prober_outcome_reason(o)), "refused");
  prober_outcome_free(o);
  prober_spec_free(s);
  puts("test_names: 3 passed, 0 failed");
  return 0;
}
