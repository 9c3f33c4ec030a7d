/* C ABI misuse beyond test_null.c: freed-then-NULLed handles, strings that are not UTF-8 in
 * every string argument, absurd sizes and values, invalid enumerated values (every enum
 * argument, boundaries and UINT32_MAX), settings of the wrong kind of probe, stale and foreign
 * ids. Every call returns a status (or its neutral value), out-parameters are untouched on
 * failure, and nothing crashes, leaks a descriptor or trips ASan, UBSan or valgrind. */
#include <limits.h>
#include <stdint.h>

#include "testutil.h"

/* Not UTF-8: a lone continuation byte, an overlong '/', a surrogate, a truncated sequence,
 * a code point above U+10FFFF, and a valid prefix followed by 0xff. */
static const char *const BAD_UTF8[] = {
    "\x80", "\xc0\xaf", "\xed\xa0\x80", "abc\xe2\x82", "\xf4\x90\x80\x80", "valid\xff",
};
#define N_BAD (sizeof BAD_UTF8 / sizeof BAD_UTF8[0])

/* A pointer value no call may write into an out-parameter on failure. */
#define SENTINEL_SPEC ((prober_spec *)(uintptr_t)0x5e5e)
#define SENTINEL_ENGINE ((prober_engine *)(uintptr_t)0x5e5e)

static int failures_named(prober_status st) {
  /* prober_last_error holds text for the failure just returned, NUL-terminated at len. */
  prober_str e = prober_last_error();
  return st != PROBER_OK && e.ptr != NULL && e.len > 0 && e.ptr[e.len] == '\0';
}

static void status_strings(void) {
  const uint32_t known[] = {0,   100, 101, 102, 103, 104, 105, 106, 107, 108,
                            109, 110, 111, 112, 113, 114, 115, 116, 117, 200, 900};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
    const char *s = prober_status_str(known[i]);
    CHECK(s != NULL && s[0] != '\0' && strcmp(s, "unknown status") != 0);
  }
  const uint32_t unknown[] = {1, 99, 118, 199, 201, 899, 901, 0x7fffffffu, UINT32_MAX};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    const char *s = prober_status_str(unknown[i]);
    CHECK(s != NULL && strcmp(s, "unknown status") == 0);
  }
}

static void not_utf8(void) {
  prober_spec *http = NULL, *exec = NULL, *grpc = NULL;
  const char *argv[] = {"/bin/true"};
  CHECK_OK(prober_spec_new_http("https://127.0.0.1:1/", &http));
  CHECK_OK(prober_spec_new_exec(argv, 1, &exec));
  CHECK_OK(prober_spec_new_grpc("127.0.0.1", 1, "", &grpc));
  for (size_t i = 0; i < N_BAD; i++) {
    const char *bad = BAD_UTF8[i];
    prober_spec *out = SENTINEL_SPEC;
    CHECK_STATUS(prober_spec_new_http(bad, &out), PROBER_E_INVALID_UTF8);
    CHECK(failures_named(PROBER_E_INVALID_UTF8) && str_has(prober_last_error(), "not valid UTF-8"));
    CHECK_STATUS(prober_spec_new_tcp(bad, 80, &out), PROBER_E_INVALID_UTF8);
    CHECK_STATUS(prober_spec_new_grpc(bad, 80, "", &out), PROBER_E_INVALID_UTF8);
    CHECK_STATUS(prober_spec_new_grpc("127.0.0.1", 80, bad, &out), PROBER_E_INVALID_UTF8);
    const char *bad_first[] = {bad, "x"};
    const char *bad_last[] = {"/bin/echo", "ok", bad};
    CHECK_STATUS(prober_spec_new_exec(bad_first, 2, &out), PROBER_E_INVALID_UTF8);
    CHECK_STATUS(prober_spec_new_exec(bad_last, 3, &out), PROBER_E_INVALID_UTF8);
    CHECK(out == SENTINEL_SPEC);

    CHECK_STATUS(prober_spec_add_header(http, bad, "v"), PROBER_E_INVALID_UTF8);
    CHECK_STATUS(prober_spec_add_header(http, "X-A", bad), PROBER_E_INVALID_UTF8);
    CHECK_STATUS(prober_spec_set_env(exec, bad, "v"), PROBER_E_INVALID_UTF8);
    CHECK_STATUS(prober_spec_set_env(exec, "A", bad), PROBER_E_INVALID_UTF8);
    CHECK_STATUS(prober_spec_set_workdir(exec, bad), PROBER_E_INVALID_UTF8);
    CHECK_STATUS(prober_spec_set_tls_server_name(http, bad), PROBER_E_INVALID_UTF8);
    CHECK_STATUS(prober_spec_set_tls_verify(http, PROBER_TLS_VERIFY_CA_FILE, bad), PROBER_E_INVALID_UTF8);
    CHECK_STATUS(prober_spec_set_tls_client_cert(http, bad, "key.pem"), PROBER_E_INVALID_UTF8);
    CHECK_STATUS(prober_spec_set_tls_client_cert(http, "cert.pem", bad), PROBER_E_INVALID_UTF8);
    CHECK_STATUS(prober_spec_set_tls_server_name(grpc, bad), PROBER_E_INVALID_UTF8);
  }
  /* The refused setters changed nothing: the specs still run as before. */
  prober_outcome *o = NULL;
  CHECK_OK(prober_check(exec, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  prober_outcome_free(o);
  prober_spec_free(http);
  prober_spec_free(exec);
  prober_spec_free(grpc);
}

static void invalid_enums(void) {
  prober_spec *http = NULL, *tcp = NULL;
  CHECK_OK(prober_spec_new_http("http://127.0.0.1:1/", &http));
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 1, &tcp));
  /* Redirect policies are 0-3 (3: PROBER_REDIRECT_ANY_HOST), close policies 0-1, TLS
   * verification 0-2. */
  CHECK_OK(prober_spec_set_redirect_policy(http, PROBER_REDIRECT_ANY_HOST));
  CHECK_STATUS(prober_spec_set_tls_verify(http, 3, "ca.pem"), PROBER_E_INVALID_ENUM);
  const uint32_t bad_policy[] = {4, 5, 0x80000000u, UINT32_MAX};
  for (size_t i = 0; i < sizeof bad_policy / sizeof bad_policy[0]; i++) {
    CHECK_STATUS(prober_spec_set_redirect_policy(http, bad_policy[i]), PROBER_E_INVALID_ENUM);
    CHECK_STATUS(prober_spec_set_close_policy(tcp, bad_policy[i] - 1), PROBER_E_INVALID_ENUM);
    CHECK_STATUS(prober_spec_set_tls_verify(http, bad_policy[i], "ca.pem"), PROBER_E_INVALID_ENUM);
  }
  CHECK_STATUS(prober_spec_set_close_policy(tcp, 2), PROBER_E_INVALID_ENUM);
  /* Address families are 0-4 (4: PROBER_IP_FAMILY_PREFER_V6). */
  CHECK_OK(prober_spec_set_ip_family(tcp, PROBER_IP_FAMILY_PREFER_V6));
  const uint32_t bad_family[] = {5, 6, 0x80000000u, UINT32_MAX};
  for (size_t i = 0; i < sizeof bad_family / sizeof bad_family[0]; i++)
    CHECK_STATUS(prober_spec_set_ip_family(tcp, bad_family[i]), PROBER_E_INVALID_ENUM);
  CHECK_OK(prober_spec_set_ip_family(tcp, PROBER_IP_FAMILY_ANY));
  /* An invalid value is reported as such even on a probe of the wrong kind. */
  CHECK_STATUS(prober_spec_set_redirect_policy(tcp, UINT32_MAX), PROBER_E_INVALID_ENUM);
  const uint32_t bad_tls[] = {0, 1, 10, 11, 14, 120, 130, UINT32_MAX};
  for (size_t i = 0; i < sizeof bad_tls / sizeof bad_tls[0]; i++)
    CHECK_STATUS(prober_spec_set_tls_min_version(http, bad_tls[i]), PROBER_E_INVALID_TLS);
  CHECK_OK(prober_spec_set_tls_min_version(http, 13));

  prober_engine *e = SENTINEL_ENGINE;
  CHECK_STATUS(prober_engine_new_with_flags(4, &e), PROBER_E_INVALID);
  CHECK_STATUS(prober_engine_new_with_flags(UINT32_MAX, &e), PROBER_E_INVALID);
  CHECK(e == SENTINEL_ENGINE);
  CHECK_OK(prober_engine_new_with_flags(PROBER_ENGINE_EVERY_RUN, &e));
  uint64_t t = 0;
  CHECK_OK(prober_engine_add_target(e, &t));
  CHECK_OK(prober_spec_set_period_ms(tcp, 3600000));
  CHECK_OK(prober_engine_set_probe(e, t, PROBER_ROLE_READINESS, tcp));
  const uint32_t bad_role[] = {3, 4, 255, 0x80000000u, UINT32_MAX};
  for (size_t i = 0; i < sizeof bad_role / sizeof bad_role[0]; i++) {
    uint32_t r = 77;
    CHECK_STATUS(prober_engine_set_probe(e, t, bad_role[i], tcp), PROBER_E_INVALID_ENUM);
    CHECK_STATUS(prober_engine_clear_probe(e, t, bad_role[i]), PROBER_E_INVALID_ENUM);
    CHECK_STATUS(prober_engine_trigger(e, t, bad_role[i]), PROBER_E_INVALID_ENUM);
    CHECK_STATUS(prober_engine_published(e, t, bad_role[i], &r), PROBER_E_INVALID_ENUM);
    CHECK(r == 77);
  }
  prober_engine_free(e);
  prober_spec_free(http);
  prober_spec_free(tcp);
}

static void wrong_kinds(void) {
  prober_spec *http = NULL, *tcp = NULL, *exec = NULL, *grpc = NULL;
  const char *argv[] = {"true"};
  CHECK_OK(prober_spec_new_http("http://127.0.0.1:1/", &http));
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 1, &tcp));
  CHECK_OK(prober_spec_new_exec(argv, 1, &exec));
  CHECK_OK(prober_spec_new_grpc("127.0.0.1", 1, "svc", &grpc));
  prober_spec *not_http[] = {tcp, exec, grpc};
  for (int i = 0; i < 3; i++) {
    CHECK_STATUS(prober_spec_add_header(not_http[i], "X-A", "b"), PROBER_E_WRONG_KIND);
    CHECK_STATUS(prober_spec_set_redirect_policy(not_http[i], PROBER_REDIRECT_NONE), PROBER_E_WRONG_KIND);
  }
  prober_spec *not_exec[] = {http, tcp, grpc};
  for (int i = 0; i < 3; i++) {
    CHECK_STATUS(prober_spec_set_env(not_exec[i], "A", "b"), PROBER_E_WRONG_KIND);
    CHECK_STATUS(prober_spec_set_workdir(not_exec[i], "/"), PROBER_E_WRONG_KIND);
  }
  CHECK_STATUS(prober_spec_set_close_policy(exec, PROBER_CLOSE_FIN), PROBER_E_WRONG_KIND);
  /* TCP specs take TLS since issue 25 (test_tcp_tls.c): only exec refuses it. */
  prober_spec *no_tls[] = {exec};
  for (int i = 0; i < 1; i++) {
    CHECK_STATUS(prober_spec_enable_tls(no_tls[i]), PROBER_E_WRONG_KIND);
    CHECK_STATUS(prober_spec_set_tls_verify(no_tls[i], PROBER_TLS_VERIFY_SYSTEM, NULL), PROBER_E_WRONG_KIND);
    CHECK_STATUS(prober_spec_set_tls_server_name(no_tls[i], "a"), PROBER_E_WRONG_KIND);
    CHECK_STATUS(prober_spec_set_tls_client_cert(no_tls[i], "a", "b"), PROBER_E_WRONG_KIND);
    CHECK_STATUS(prober_spec_set_tls_min_version(no_tls[i], 12), PROBER_E_WRONG_KIND);
    CHECK_STATUS(prober_spec_set_tls_resumption(no_tls[i], true), PROBER_E_WRONG_KIND);
  }
  /* CA_FILE needs a file; the other modes ignore the pointer. */
  CHECK_STATUS(prober_spec_set_tls_verify(http, PROBER_TLS_VERIFY_CA_FILE, NULL), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_set_tls_verify(http, PROBER_TLS_VERIFY_CA_FILE, ""), PROBER_E_INVALID_TLS);
  CHECK_OK(prober_spec_set_tls_verify(http, PROBER_TLS_VERIFY_NONE, NULL));
  CHECK_STATUS(prober_spec_set_workdir(exec, ""), PROBER_E_INVALID);
  prober_spec_free(http);
  prober_spec_free(tcp);
  prober_spec_free(exec);
  prober_spec_free(grpc);
}

static void absurd_values(void) {
  prober_spec *out = SENTINEL_SPEC;
  const char *argv[] = {"true"};
  /* argc: refused before argv is read, so a short array is never overrun. */
  CHECK_STATUS(prober_spec_new_exec(argv, SIZE_MAX, &out), PROBER_E_INVALID_ARGV);
  CHECK_STATUS(prober_spec_new_exec(argv, SIZE_MAX / sizeof(char *), &out), PROBER_E_INVALID_ARGV);
  CHECK_STATUS(prober_spec_new_exec(argv, ((size_t)1 << 20) + 1, &out), PROBER_E_INVALID_ARGV);
  CHECK(out == SENTINEL_SPEC);
  /* The largest argc allowed, with a real array of that size. */
  size_t big = (size_t)1 << 20;
  const char **many = malloc(big * sizeof *many);
  CHECK(many != NULL);
  for (size_t i = 0; i < big; i++) many[i] = "x";
  many[0] = "true";
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_exec(many, big, &s));
  free(many);
  prober_spec_free(s);

  /* Ports. */
  const int32_t bad_ports[] = {0, -1, 65536, 70000, INT32_MIN, INT32_MAX};
  for (size_t i = 0; i < sizeof bad_ports / sizeof bad_ports[0]; i++) {
    CHECK_STATUS(prober_spec_new_tcp("127.0.0.1", bad_ports[i], &out), PROBER_E_INVALID_PORT);
    CHECK_STATUS(prober_spec_new_grpc("127.0.0.1", bad_ports[i], "", &out), PROBER_E_INVALID_PORT);
  }
  CHECK(out == SENTINEL_SPEC);

  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 65535, &s));
  /* Output limit: 1 byte to 64 MiB. */
  CHECK_STATUS(prober_spec_set_output_limit(s, 0), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_set_output_limit(s, ((size_t)64 << 20) + 1), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_set_output_limit(s, SIZE_MAX), PROBER_E_INVALID);
  CHECK_OK(prober_spec_set_output_limit(s, (size_t)64 << 20));
  CHECK_OK(prober_spec_set_output_limit(s, 1));
  /* Durations: timeout 1 ms to 24 h, period 1 ms to 7 days, delay up to 7 days. */
  CHECK_STATUS(prober_spec_set_timeout_ms(s, 0), PROBER_E_INVALID_DURATION);
  CHECK_STATUS(prober_spec_set_timeout_ms(s, 86400001u), PROBER_E_INVALID_DURATION);
  CHECK_STATUS(prober_spec_set_timeout_ms(s, UINT32_MAX), PROBER_E_INVALID_DURATION);
  CHECK_OK(prober_spec_set_timeout_ms(s, 86400000u));
  CHECK_STATUS(prober_spec_set_period_ms(s, 0), PROBER_E_INVALID_DURATION);
  CHECK_STATUS(prober_spec_set_period_ms(s, 604800001u), PROBER_E_INVALID_DURATION);
  CHECK_STATUS(prober_spec_set_period_ms(s, UINT32_MAX), PROBER_E_INVALID_DURATION);
  CHECK_OK(prober_spec_set_period_ms(s, 604800000u));
  CHECK_STATUS(prober_spec_set_initial_delay_ms(s, 604800001u), PROBER_E_INVALID_DURATION);
  CHECK_STATUS(prober_spec_set_initial_delay_ms(s, UINT32_MAX), PROBER_E_INVALID_DURATION);
  CHECK_OK(prober_spec_set_initial_delay_ms(s, 604800000u));
  CHECK_STATUS(prober_spec_set_thresholds(s, 0, 1), PROBER_E_INVALID_THRESHOLD);
  CHECK_STATUS(prober_spec_set_thresholds(s, 1, 0), PROBER_E_INVALID_THRESHOLD);
  CHECK_OK(prober_spec_set_thresholds(s, UINT32_MAX, UINT32_MAX));

  /* The engine takes the extreme schedule for readiness, refuses it for liveness. */
  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new(&e));
  uint64_t t = 0;
  CHECK_OK(prober_engine_add_target(e, &t));
  CHECK_OK(prober_engine_set_probe(e, t, PROBER_ROLE_READINESS, s));
  CHECK_STATUS(prober_engine_set_probe(e, t, PROBER_ROLE_LIVENESS, s), PROBER_E_INVALID_THRESHOLD);
  CHECK_STATUS(prober_engine_set_probe(e, t, PROBER_ROLE_STARTUP, s), PROBER_E_INVALID_THRESHOLD);
  /* A 7-day initial delay: nothing is due, the timeout says so without overflowing. */
  CHECK_OK(prober_engine_step(e));
  int64_t ms = prober_engine_timeout_ms(e);
  CHECK(ms == -1 || (ms > 0 && ms <= 604800000));
  CHECK(prober_engine_in_flight(e) == 0);
  /* Waits: -1 (forever) and more are allowed, anything below -1 is refused. */
  CHECK_STATUS(prober_engine_wait(e, -2), PROBER_E_INVALID_DURATION);
  CHECK_STATUS(prober_engine_wait(e, INT32_MIN), PROBER_E_INVALID_DURATION);
  CHECK_OK(prober_engine_wait(e, 0));
  prober_engine_free(e);
  prober_spec_free(s);

  /* Huge strings: a refusal or a spec, never a crash. */
  size_t n = (size_t)1 << 20;
  char *huge = malloc(n + 64);
  CHECK(huge != NULL);
  memset(huge, 'a', n + 63);
  huge[n + 63] = '\0';
  CHECK_STATUS(prober_spec_new_tcp(huge, 80, &out), PROBER_E_INVALID_HOST);
  CHECK_STATUS(prober_spec_new_grpc(huge, 80, "", &out), PROBER_E_INVALID_HOST);
  CHECK(out == SENTINEL_SPEC);
  memcpy(huge, "http://127.0.0.1:1/", 19);
  prober_status st = prober_spec_new_http(huge, &s);
  CHECK(st == PROBER_OK || st == PROBER_E_INVALID_URL);
  if (st == PROBER_OK) {
    CHECK_OK(prober_spec_add_header(s, "X-Huge", huge + 19));
    prober_spec_free(s);
  }
  free(huge);
  /* Header values with CR, LF or controls, names that are not tokens. */
  CHECK_OK(prober_spec_new_http("http://127.0.0.1:1/", &s));
  CHECK_STATUS(prober_spec_add_header(s, "X-A", "a\r\nInjected: 1"), PROBER_E_INVALID_HEADER);
  CHECK_STATUS(prober_spec_add_header(s, "X-A", "a\x01"), PROBER_E_INVALID_HEADER);
  CHECK_STATUS(prober_spec_add_header(s, "Bad Name", "v"), PROBER_E_INVALID_HEADER);
  CHECK_STATUS(prober_spec_add_header(s, "", "v"), PROBER_E_INVALID_HEADER);
  CHECK_STATUS(prober_spec_add_header(s, "X:Y", "v"), PROBER_E_INVALID_HEADER);
  prober_spec_free(s);
  const char *exe[] = {"true"};
  CHECK_OK(prober_spec_new_exec(exe, 1, &s));
  CHECK_STATUS(prober_spec_set_env(s, "A=B", "v"), PROBER_E_INVALID_ENV);
  CHECK_STATUS(prober_spec_set_env(s, "", "v"), PROBER_E_INVALID_ENV);
  prober_spec_free(s);
  const char *empty_cmd[] = {""};
  CHECK_STATUS(prober_spec_new_exec(empty_cmd, 1, &out), PROBER_E_INVALID_ARGV);
  CHECK(out == SENTINEL_SPEC);
}

/* Events are drained only into the room given; cap 0 takes nothing. */
static void drain_bounds(void) {
  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new(&e));
  prober_spec *s = NULL;
  const char *argv[] = {"true"};
  CHECK_OK(prober_spec_new_exec(argv, 1, &s));
  for (uint64_t tag = 1; tag <= 3; tag++) CHECK_OK(prober_engine_submit(e, s, tag));
  /* The engine copied the spec: freeing it now changes nothing. */
  prober_spec_free(s);
  s = NULL;
  double limit = now_s() + 30;
  while (prober_engine_pending(e) < 3) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 50));
  }
  prober_event evs[8];
  memset(evs, 0xab, sizeof evs);
  CHECK(prober_engine_drain(e, evs, 0) == 0);
  CHECK(prober_engine_pending(e) == 3);
  unsigned char *raw = (unsigned char *)evs;
  for (size_t i = 0; i < sizeof evs; i++) CHECK(raw[i] == 0xab);
  CHECK(prober_engine_drain(e, evs, 1) == 1);
  CHECK(evs[0].kind == PROBER_EVENT_CHECK && evs[0].tag >= 1 && evs[0].tag <= 3);
  CHECK(evs[0].result == PROBER_RESULT_SUCCESS && evs[0].has_outcome);
  uint64_t seen = (uint64_t)1 << evs[0].tag;
  raw = (unsigned char *)&evs[1];
  for (size_t i = 0; i < sizeof evs - sizeof evs[0]; i++) CHECK(raw[i] == 0xab);
  /* More room than events: only the events present are written. */
  CHECK(prober_engine_drain(e, evs, 8) == 2);
  seen |= (uint64_t)1 << (evs[0].tag & 63);
  seen |= (uint64_t)1 << (evs[1].tag & 63);
  CHECK(seen == 0xe); /* tags 1, 2 and 3, in completion order */
  raw = (unsigned char *)&evs[2];
  for (size_t i = 0; i < 6 * sizeof evs[0]; i++) CHECK(raw[i] == 0xab);
  CHECK(prober_engine_drain(e, evs, 8) == 0);
  prober_engine_free(e);
}

/* Ids that are not (or no longer) this engine's. */
static void stale_and_foreign_ids(void) {
  prober_engine *a = NULL, *b = NULL;
  CHECK_OK(prober_engine_new(&a));
  CHECK_OK(prober_engine_new(&b));
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 1, &s));
  CHECK_OK(prober_spec_set_period_ms(s, 3600000));
  uint64_t ta = 0, tb = 0;
  CHECK_OK(prober_engine_add_target(a, &ta));
  CHECK_OK(prober_engine_add_target(b, &tb));
  CHECK_OK(prober_engine_add_target(b, &tb));
  uint32_t r = 77;
  const uint64_t bogus[] = {0, 1, UINT64_MAX, (uint64_t)1 << 32, ta + 1, ta + ((uint64_t)1 << 32), tb};
  for (size_t i = 0; i < sizeof bogus / sizeof bogus[0]; i++) {
    uint64_t id = bogus[i];
    if (id == ta) continue;
    CHECK_STATUS(prober_engine_set_probe(a, id, PROBER_ROLE_READINESS, s), PROBER_E_UNKNOWN_TARGET);
    CHECK_STATUS(prober_engine_clear_probe(a, id, PROBER_ROLE_READINESS), PROBER_E_UNKNOWN_TARGET);
    CHECK_STATUS(prober_engine_restart_target(a, id), PROBER_E_UNKNOWN_TARGET);
    CHECK_STATUS(prober_engine_remove_target(a, id), PROBER_E_UNKNOWN_TARGET);
    CHECK_STATUS(prober_engine_trigger(a, id, PROBER_ROLE_READINESS), PROBER_E_UNKNOWN_TARGET);
    CHECK_STATUS(prober_engine_published(a, id, PROBER_ROLE_READINESS, &r), PROBER_E_UNKNOWN_TARGET);
    CHECK(r == 77);
  }
  /* No probe for the role. */
  CHECK_STATUS(prober_engine_trigger(a, ta, PROBER_ROLE_LIVENESS), PROBER_E_NO_PROBE);
  CHECK_STATUS(prober_engine_published(a, ta, PROBER_ROLE_LIVENESS, &r), PROBER_E_NO_PROBE);
  CHECK(r == 77);
  /* Removed, then its index reused: the old id stays dead. */
  CHECK_OK(prober_engine_set_probe(a, ta, PROBER_ROLE_READINESS, s));
  CHECK_OK(prober_engine_remove_target(a, ta));
  uint64_t ta2 = 0;
  CHECK_OK(prober_engine_add_target(a, &ta2));
  CHECK(ta2 != ta);
  CHECK_STATUS(prober_engine_remove_target(a, ta), PROBER_E_UNKNOWN_TARGET);
  CHECK_STATUS(prober_engine_set_probe(a, ta, PROBER_ROLE_READINESS, s), PROBER_E_UNKNOWN_TARGET);
  CHECK_OK(prober_engine_set_probe(a, ta2, PROBER_ROLE_READINESS, s));
  prober_engine_free(a);
  prober_engine_free(b);
  prober_spec_free(s);
}

/* The freed-then-NULLed pattern: free, set to NULL, free again and keep calling. */
static void freed_then_nulled(void) {
  prober_spec *s = NULL;
  CHECK_OK(prober_spec_new_http("http://127.0.0.1:1/", &s));
  prober_spec *copy = NULL;
  CHECK_OK(prober_spec_clone(s, &copy));
  prober_spec_free(s);
  s = NULL;
  prober_spec_free(s);
  CHECK_STATUS(prober_spec_set_timeout_ms(s, 10), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_add_header(s, "A", "b"), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_enable_tls(s), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_clone(s, &s), PROBER_E_NULL);
  CHECK(s == NULL);
  /* The clone is independent of the freed original. */
  CHECK_OK(prober_spec_set_timeout_ms(copy, 200));
  prober_outcome *o = NULL;
  CHECK_OK(prober_check(copy, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  prober_outcome_free(o);
  o = NULL;
  prober_outcome_free(o);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_UNKNOWN);
  CHECK(prober_outcome_message(o).len == 0);
  prober_timings t;
  CHECK_STATUS(prober_outcome_timings(o, &t), PROBER_E_NULL);
  CHECK_OK(prober_check(copy, &o));
  CHECK_STATUS(prober_outcome_timings(o, NULL), PROBER_E_NULL);
  CHECK(!prober_outcome_cert_not_after(o, NULL));
  prober_outcome_free(o);
  o = NULL;

  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new(&e));
  uint64_t id = 0;
  CHECK_OK(prober_engine_add_target(e, &id));
  CHECK_OK(prober_engine_set_probe(e, id, PROBER_ROLE_READINESS, copy));
  CHECK_OK(prober_engine_submit(e, copy, 7));
  prober_spec_free(copy);
  copy = NULL;
  /* The engine runs its own copies. */
  double limit = now_s() + 30;
  while (prober_engine_pending(e) == 0) {
    CHECK(now_s() < limit);
    CHECK_OK(prober_engine_wait(e, 50));
  }
  prober_engine_free(e);
  e = NULL;
  prober_engine_free(e);
  uint64_t id2 = 42;
  CHECK_STATUS(prober_engine_add_target(e, &id2), PROBER_E_NULL);
  CHECK(id2 == 42);
  CHECK_STATUS(prober_engine_step(e), PROBER_E_NULL);
  CHECK_STATUS(prober_engine_wakeup(e), PROBER_E_NULL);
  CHECK(prober_engine_fd(e) == -1);
  prober_event ev;
  CHECK(prober_engine_drain(e, &ev, 1) == 0);
  CHECK(str_has(prober_last_error(), "engine is NULL"));
}

int main(void) {
  status_strings();
  not_utf8(); /* also warms up what the library creates once per process */
  int fds_before = count_fds();
  invalid_enums();
  wrong_kinds();
  absurd_values();
  drain_bounds();
  stale_and_foreign_ids();
  freed_then_nulled();
  CHECK(count_zombie_children() == 0);
  CHECK(count_fds() == fds_before);
  puts("test_misuse: 1 passed, 0 failed");
  return 0;
}
