/* Unix sockets through the C ABI (issue 25): a connect check, HTTP over a Unix socket (a
 * one-connection HTTP peer on a socket file), errors. */
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "testutil.h"

typedef struct {
  int listener;
  char request[1024];
} http_peer;

/* Reads one request head, answers 200 "ok", then waits for the probe to close. */
static void *http_serve(void *arg) {
  http_peer *p = arg;
  int c = accept(p->listener, NULL, NULL);
  CHECK(c >= 0);
  size_t n = 0;
  while (n < sizeof p->request - 1 && !strstr(p->request, "\r\n\r\n")) {
    ssize_t k = read(c, p->request + n, sizeof p->request - 1 - n);
    if (k <= 0) break;
    n += (size_t)k;
    p->request[n] = 0;
  }
  const char *resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
  CHECK(write(c, resp, strlen(resp)) == (ssize_t)strlen(resp));
  char buf[64];
  while (read(c, buf, sizeof buf) > 0) {
  }
  close(c);
  return NULL;
}

static int unix_listen(const char *path) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  CHECK(fd >= 0);
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  unlink(path);
  CHECK(bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
  CHECK(listen(fd, 8) == 0);
  return fd;
}

int main(void) {
  char path[64];
  snprintf(path, sizeof path, "/tmp/prober-c-unix-%d.sock", (int)getpid());
  char http_path[64];
  snprintf(http_path, sizeof http_path, "/tmp/prober-c-unix-http-%d.sock", (int)getpid());
  int l = unix_listen(path);
  int hl = unix_listen(http_path);
  prober_spec *s = NULL;
  prober_outcome *o = NULL;

  /* A connect check, by path and in gRPC's naming. */
  CHECK_OK(prober_spec_new_unix(path, &s));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  prober_outcome_free(o);
  prober_spec_free(s);
  char url[96];
  snprintf(url, sizeof url, "unix://%s", path);
  CHECK_OK(prober_spec_new_unix(url, &s));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  prober_outcome_free(o);
  prober_spec_free(s);

  /* HTTP through the socket: the URL's host is the Host header. */
  http_peer peer = {.listener = hl};
  pthread_t th;
  CHECK(pthread_create(&th, NULL, http_serve, &peer) == 0);
  CHECK_OK(prober_spec_new_http("http://localhost/healthz", &s));
  CHECK_OK(prober_spec_set_unix_socket(s, http_path));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_SUCCESS);
  CHECK(str_eq(prober_outcome_output(o), "ok"));
  prober_outcome_free(o);
  prober_spec_free(s);
  CHECK(pthread_join(th, NULL) == 0);
  CHECK(strncmp(peer.request, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n", 40) == 0);
  close(hl);
  unlink(http_path);
  close(l);
  unlink(path);

  /* Gone: refused, in Go's words. */
  CHECK_OK(prober_spec_new_unix(path, &s));
  CHECK_OK(prober_check(s, &o));
  CHECK(prober_outcome_result(o) == PROBER_RESULT_FAILURE);
  CHECK(prober_outcome_reason(o) == PROBER_REASON_REFUSED);
  CHECK(str_has(prober_outcome_message(o), "connect: no such file or directory"));
  CHECK(str_has(prober_outcome_message(o), "dial unix /tmp/prober-c-unix-"));
  prober_outcome_free(o);
  prober_spec_free(s);

  /* Bad input. */
  CHECK_STATUS(prober_spec_new_unix("", &s), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_new_unix("unix://host/x", &s), PROBER_E_INVALID);
  CHECK_STATUS(prober_spec_new_unix(NULL, &s), PROBER_E_NULL);
  const char *argv[] = {"true"};
  CHECK_OK(prober_spec_new_exec(argv, 1, &s));
  CHECK_STATUS(prober_spec_set_unix_socket(s, path), PROBER_E_WRONG_KIND);
  prober_spec_free(s);
  return 0;
}
