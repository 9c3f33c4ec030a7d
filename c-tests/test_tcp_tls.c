/* TCP with TLS and STARTTLS through the C ABI (issue 25). The handshakes themselves are
 * tested against a TLS server in prober-engine's tests/tcp_tls.rs; here: the setters, and
 * that a server that never speaks TLS fails the probe (the plain prober-target, and a
 * one-connection peer that says "220 go ahead" to STARTTLS and then closes). */
#include <pthread.h>

#include "testutil.h"

typedef struct {
  int listener;
  char got[16];
} starttls_peer;

static void *starttls_serve(void *arg) {
  starttls_peer *p = arg;
  int c = accept(p->listener, NULL, NULL);
  CHECK(c >= 0);
  size_t n = 0;
  while (n < 10) {
    ssize_t k = read(c, p->got + n, 10 - n);
    if (k <= 0) break;
    n += (size_t)k;
  }
  if (n == 10 && memcmp(p->got, "STARTTLS\r\n", 10) == 0)
    CHECK(write(c, "220 go ahead\r\n", 14) == 14);
  close(c); /* no TLS after all */
  return NULL;
}

int main(void) {
  target_server t = target_start();
  prober_spec *s = NULL;
  prober_outcome *o = NULL;

  /* TLS from the first byte against a plain HTTP server: the handshake never completes. */
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", t.port, &s));
  CHECK_OK(prober_spec_enable_tls(s));
  CHECK_OK(prober_spec_set_tls_server_name(s, "db.internal"));
  CHECK_OK(prober_spec_set_timeout_ms(s, 300));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_TIMEOUT);
  CHECK(str_eq(prober_outcome_message(o), "timeout after 300ms: connecting with TLS did not complete"));
  prober_outcome_free(o);
  prober_spec_free(s);

  /* STARTTLS: the go-ahead arrives, then the peer closes instead of shaking hands. */
  int port = 0;
  int l = listen_loopback(&port);
  starttls_peer peer = {.listener = l};
  pthread_t th;
  CHECK(pthread_create(&th, NULL, starttls_serve, &peer) == 0);
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", port, &s));
  CHECK_OK(prober_spec_set_tcp_send(s, (const uint8_t *)"STARTTLS\r\n", 10));
  CHECK_OK(prober_spec_set_tcp_expect(s, "^220 "));
  CHECK_OK(prober_spec_set_tcp_starttls(s, true));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  CHECK_OK(prober_check(s, &o));
  CHECK(pthread_join(th, NULL) == 0);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) != PROBER_REASON_BODY); /* the exchange matched */
  CHECK(str_has(prober_outcome_output(o), "220 go ahead"));
  prober_outcome_free(o);
  prober_spec_free(s);
  close(l);

  /* Kinds. */
  const char *argv[] = {"true"};
  CHECK_OK(prober_spec_new_exec(argv, 1, &s));
  CHECK_STATUS(prober_spec_set_tcp_starttls(s, true), PROBER_E_WRONG_KIND);
  prober_spec_free(s);
  CHECK_STATUS(prober_spec_set_tcp_starttls(NULL, true), PROBER_E_NULL);

  target_stop(&t);
  return 0;
}
