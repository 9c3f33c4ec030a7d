/* Multi-step TCP exchanges through the C ABI (issue 28, blackbox_exporter's query_response):
 * prober_spec_add_tcp_step against a one-connection IRC-like peer that checks the PONG it
 * receives carries the token of its PING (the `${1}` template), then the refusals. STARTTLS
 * between steps is tested against a TLS server in prober-engine's tests/tcp_steps.rs. */
#include <pthread.h>

#include "testutil.h"

typedef struct {
  int listener;
  bool close_after_ping;
  char pong[64];
} irc_peer;

/* One line, up to and with its '\n', NUL-terminated; false at EOF first. */
static bool read_line(int fd, char *buf, size_t cap) {
  size_t n = 0;
  while (n + 1 < cap) {
    ssize_t k = read(fd, buf + n, 1);
    if (k <= 0) return false;
    if (buf[n++] == '\n') break;
  }
  buf[n] = '\0';
  return true;
}

static void *irc_serve(void *arg) {
  irc_peer *p = arg;
  int c = accept(p->listener, NULL, NULL);
  CHECK(c >= 0);
  char line[64];
  if (read_line(c, line, sizeof line) && strcmp(line, "NICK prober\n") == 0) {
    const char *ping = ":irc.test NOTICE * :hello\r\nPING :tok-9$x\r\n";
    CHECK(write(c, ping, strlen(ping)) == (ssize_t)strlen(ping));
    if (!p->close_after_ping && read_line(c, p->pong, sizeof p->pong) &&
        strcmp(p->pong, "PONG tok-9$x $1\n") == 0) {
      const char *welcome = ":irc.test 001 prober :Welcome\r\n";
      CHECK(write(c, welcome, strlen(welcome)) == (ssize_t)strlen(welcome));
    }
  }
  close(c);
  return NULL;
}

typedef struct {
  int listener;
  char first[64];
} line_peer;

/* Says two lines at once, then records the first line it hears. */
static void *line_serve(void *arg) {
  line_peer *p = arg;
  int c = accept(p->listener, NULL, NULL);
  CHECK(c >= 0);
  const char *hello = "220\r\nready\r\n";
  CHECK(write(c, hello, strlen(hello)) == (ssize_t)strlen(hello));
  CHECK(read_line(c, p->first, sizeof p->first));
  close(c);
  return NULL;
}

typedef struct {
  int listener;
  const char *greeting;
  size_t greeting_len;
  char heard[64];
} bytes_peer;

/* Says a binary greeting (a '\n' inside), then records the line it hears. */
static void *bytes_serve(void *arg) {
  bytes_peer *p = arg;
  int c = accept(p->listener, NULL, NULL);
  CHECK(c >= 0);
  CHECK(write(c, p->greeting, p->greeting_len) == (ssize_t)p->greeting_len);
  if (!read_line(c, p->heard, sizeof p->heard)) p->heard[0] = '\0';
  close(c);
  return NULL;
}

/* prober_spec_add_tcp_step_expect_bytes: the greeting's 5 bytes, then HELLO as a line. */
static prober_outcome *run_bytes(bytes_peer *peer) {
  int port = 0;
  peer->listener = listen_loopback(&port);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, bytes_serve, peer) == 0);
  prober_spec *s = NULL;
  prober_outcome *o = NULL;
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", port, &s));
  CHECK_OK(prober_spec_add_tcp_step_expect_bytes(s, (const uint8_t *)"\x00\x01\nOK", 5,
                                                 (const uint8_t *)"HELLO", 5, PROBER_TCP_STEP_LINE));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  CHECK_OK(prober_check(s, &o));
  CHECK(pthread_join(th, NULL) == 0);
  close(peer->listener);
  prober_spec_free(s);
  return o;
}

static prober_outcome *run_irc(irc_peer *peer) {
  int port = 0;
  peer->listener = listen_loopback(&port);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, irc_serve, peer) == 0);
  prober_spec *s = NULL;
  prober_outcome *o = NULL;
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", port, &s));
  CHECK_OK(prober_spec_add_tcp_step(s, NULL, (const uint8_t *)"NICK prober\n", 12, false, false));
  /* A template: ${1} is the PING's token, $$ is one $. */
  const char *pong = "PONG ${1} $$1\n";
  CHECK_OK(prober_spec_add_tcp_step(s, "^PING :([^ ]+)$", (const uint8_t *)pong, strlen(pong), true,
                                    false));
  CHECK_OK(prober_spec_add_tcp_step(s, "^:[^ ]+ 001 ", NULL, 0, false, false));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  CHECK_OK(prober_check(s, &o));
  CHECK(pthread_join(th, NULL) == 0);
  close(peer->listener);
  prober_spec_free(s);
  return o;
}

int main(void) {
  prober_spec *s = NULL;

  irc_peer peer = {0};
  prober_outcome *o = run_irc(&peer);
  CHECK(str_eq(prober_outcome_message(o), ""));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(strcmp(peer.pong, "PONG tok-9$x $1\n") == 0);
  CHECK(str_has(prober_outcome_output(o), ":irc.test 001 prober :Welcome\r\n"));
  prober_outcome_free(o);

  /* The peer closes after its PING: the last step fails, named. */
  irc_peer closing = {.close_after_ping = true};
  o = run_irc(&closing);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_BODY);
  CHECK(str_has(prober_outcome_message(o), "step 3 of 3: no line matched \"^:[^ ]+ 001 \": the peer closed the connection"));
  prober_outcome_free(o);

  /* PROBER_TCP_STEP_LINE: "\n" after the expansion, nothing at all when it is empty (as
   * blackbox_exporter's send), so the peer's first line is the QUIT. */
  line_peer lp = {0};
  int port = 0;
  lp.listener = listen_loopback(&port);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, line_serve, &lp) == 0);
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", port, &s));
  CHECK_OK(prober_spec_add_tcp_step_with_flags(s, "^220 ?(.*)$", (const uint8_t *)"${1}", 4,
                                               PROBER_TCP_STEP_EXPAND | PROBER_TCP_STEP_LINE));
  CHECK_OK(prober_spec_add_tcp_step_with_flags(s, "^ready", (const uint8_t *)"QUIT", 4, PROBER_TCP_STEP_LINE));
  CHECK_OK(prober_spec_set_timeout_ms(s, 5000));
  CHECK_OK(prober_check(s, &o));
  CHECK(pthread_join(th, NULL) == 0);
  close(lp.listener);
  CHECK(str_eq(prober_outcome_message(o), ""));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(strcmp(lp.first, "QUIT\n") == 0);
  prober_outcome_free(o);
  CHECK_STATUS(prober_spec_add_tcp_step_with_flags(s, NULL, NULL, 0, 8), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "unknown TCP step flags 0x8"));
  prober_spec_free(s);

  /* Bytes, not lines: the expected ones let the step send; others fail it, named. */
  bytes_peer bp = {.greeting = "\x00\x01\nOK", .greeting_len = 5};
  o = run_bytes(&bp);
  CHECK(str_eq(prober_outcome_message(o), ""));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(strcmp(bp.heard, "HELLO\n") == 0);
  prober_outcome_free(o);
  bytes_peer other = {.greeting = "\x00\x02\nOK", .greeting_len = 5};
  o = run_bytes(&other);
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_BODY);
  CHECK(str_has(prober_outcome_message(o), "step 1 of 1: the bytes read differ from those expected"));
  CHECK(other.heard[0] == '\0');
  prober_outcome_free(o);
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 25, &s));
  CHECK_STATUS(prober_spec_add_tcp_step_expect_bytes(s, (const uint8_t *)"x", 0, NULL, 0, 0), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_add_tcp_step_expect_bytes(s, NULL, 1, NULL, 0, 0), PROBER_E_NULL);
  CHECK_STATUS(prober_spec_add_tcp_step_expect_bytes(s, (const uint8_t *)"x", 1, (const uint8_t *)"$1", 2,
                                                     PROBER_TCP_STEP_EXPAND),
               PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "a send template needs an expect"));
  prober_spec_free(s);

  /* Refusals leave the spec as it was. */
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 25, &s));
  CHECK_STATUS(prober_spec_add_tcp_step(s, NULL, (const uint8_t *)"$1", 2, true, false), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "a send template needs an expect"));
  CHECK_STATUS(prober_spec_add_tcp_step(s, "", NULL, 0, false, false), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_add_tcp_step(s, "(", NULL, 0, false, false), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_add_tcp_step(s, NULL, NULL, 3, false, false), PROBER_E_NULL);
  CHECK_OK(prober_spec_add_tcp_step(s, NULL, NULL, 0, false, true));
  CHECK_STATUS(prober_spec_add_tcp_step(s, NULL, NULL, 0, false, true), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "more than one STARTTLS step"));
  /* Steps and the single send/expect/STARTTLS: one or the other. */
  CHECK_STATUS(prober_spec_set_tcp_send(s, (const uint8_t *)"x", 1), PROBER_E_INVALID);
  CHECK(str_has(prober_last_error(), "TCP steps replace the single send, expect and STARTTLS"));
  prober_spec_free(s);
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", 25, &s));
  CHECK_OK(prober_spec_set_tcp_expect(s, "^220"));
  CHECK_STATUS(prober_spec_add_tcp_step(s, "^220", NULL, 0, false, false), PROBER_E_INVALID);
  prober_spec_free(s);

  const char *argv[] = {"true"};
  CHECK_OK(prober_spec_new_exec(argv, 1, &s));
  CHECK_STATUS(prober_spec_add_tcp_step(s, "x", NULL, 0, false, false), PROBER_E_WRONG_KIND);
  prober_spec_free(s);
  CHECK_STATUS(prober_spec_add_tcp_step(NULL, "x", NULL, 0, false, false), PROBER_E_NULL);
  return 0;
}
