/* Keep-alive HTTP probes through the C ABI (prober_spec_set_keep_alive), against a small
 * keep-alive server in this file that counts the connections it accepts and the requests that
 * asked it to close. */
#include <pthread.h>
#include <stdatomic.h>
#include <strings.h>

#include "testutil.h"

#define MAX_EVENTS 1024
static prober_event events[MAX_EVENTS];

typedef struct {
  int listener;
  atomic_int accepted;
  atomic_int requests;
  atomic_int close_requests;
} keep_server;

typedef struct {
  keep_server *server;
  int fd;
} keep_conn;

/* Answers every request on one connection with 200 "ok" until the client closes. */
static void *keep_serve_conn(void *arg) {
  keep_conn *c = arg;
  char buf[8192];
  size_t have = 0;
  for (;;) {
    char *end = NULL;
    while ((end = have ? strstr(buf, "\r\n\r\n") : NULL) == NULL) {
      if (have >= sizeof buf - 1) goto done;
      ssize_t k = read(c->fd, buf + have, sizeof buf - 1 - have);
      if (k <= 0) goto done;
      have += (size_t)k;
      buf[have] = 0;
    }
    size_t len = (size_t)(end - buf) + 4;
    atomic_fetch_add(&c->server->requests, 1);
    int asked_close = 0;
    for (size_t i = 0; i + 19 <= len; i++)
      if (strncasecmp(buf + i, "\r\nConnection: close", 19) == 0) asked_close = 1;
    if (asked_close) atomic_fetch_add(&c->server->close_requests, 1);
    const char *ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    if (write(c->fd, ok, strlen(ok)) != (ssize_t)strlen(ok)) goto done;
    if (asked_close) goto done;
    memmove(buf, buf + len, have - len);
    have -= len;
    buf[have] = 0;
  }
done:
  close(c->fd);
  free(c);
  return NULL;
}

static void *keep_accept(void *arg) {
  keep_server *s = arg;
  for (;;) {
    int fd = accept(s->listener, NULL, NULL);
    if (fd < 0) return NULL; /* the listener was shut down */
    atomic_fetch_add(&s->accepted, 1);
    keep_conn *c = malloc(sizeof *c);
    CHECK(c != NULL);
    c->server = s;
    c->fd = fd;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, keep_serve_conn, c) == 0);
    CHECK(pthread_detach(th) == 0);
  }
}

static void probe_runs(keep_server *s, int port, bool keep_alive, size_t n) {
  char url[128];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
  prober_spec *spec = NULL;
  CHECK_OK(prober_spec_new_http(url, &spec));
  CHECK_OK(prober_spec_set_keep_alive(spec, keep_alive));
  CHECK_OK(prober_spec_set_period_ms(spec, 20));
  CHECK_OK(prober_spec_set_thresholds(spec, 1, 1));
  prober_engine *e = NULL;
  CHECK_OK(prober_engine_new_with_flags(PROBER_ENGINE_EVERY_RUN, &e));
  uint64_t target = 0;
  CHECK_OK(prober_engine_add_target(e, &target));
  CHECK_OK(prober_engine_set_probe(e, target, PROBER_ROLE_READINESS, spec));
  prober_spec_free(spec);
  run_until_runs(e, events, MAX_EVENTS, n, 1);
  prober_engine_free(e);
  (void)s;
}

int main(void) {
  keep_server s = {0};
  int port = 0;
  s.listener = listen_loopback(&port);
  pthread_t acceptor;
  CHECK(pthread_create(&acceptor, NULL, keep_accept, &s) == 0);

  /* Keep-alive: one connection serves every run, and no request asks to close. */
  probe_runs(&s, port, true, 6);
  CHECK(atomic_load(&s.accepted) == 1);
  CHECK(atomic_load(&s.requests) >= 6);
  CHECK(atomic_load(&s.close_requests) == 0);

  /* Off (the default, and set off explicitly): a connection per run, each asking to close. */
  int before = atomic_load(&s.accepted);
  probe_runs(&s, port, false, 4);
  CHECK(atomic_load(&s.accepted) - before >= 4);
  CHECK(atomic_load(&s.close_requests) >= 4);

  /* Bad input: wrong kind, NULL. */
  prober_spec *tcp = NULL;
  CHECK_OK(prober_spec_new_tcp("127.0.0.1", port, &tcp));
  CHECK_STATUS(prober_spec_set_keep_alive(tcp, true), PROBER_E_WRONG_KIND);
  CHECK(str_has(prober_last_error(), "HTTP and gRPC probes only"));
  prober_spec_free(tcp);
  CHECK_STATUS(prober_spec_set_keep_alive(NULL, true), PROBER_E_NULL);
  /* gRPC takes the same option (kept HTTP/2 connections; tested against grpc-go in
   * prober-engine's tests/grpc_keep_alive.rs). */
  prober_spec *grpc = NULL;
  CHECK_OK(prober_spec_new_grpc("127.0.0.1", port, "", &grpc));
  CHECK_OK(prober_spec_set_keep_alive(grpc, true));
  prober_spec_free(grpc);

  shutdown(s.listener, SHUT_RDWR);
  CHECK(pthread_join(acceptor, NULL) == 0);
  close(s.listener);
  puts("test_keep_alive: 1 passed, 0 failed");
  return 0;
}
