/* The HTTP side is deliberately minimal: one connection at a time, a short
 * read timeout so a client that never sends its request cannot stall the
 * probe's interval loop, and loopback by default. */
#include "prom_sink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int tb_prom_write_file(const char *path, const char *body, size_t len) {
  char tmp[4200];
  FILE *f;
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  f = fopen(tmp, "w");
  if (!f)
    return -1;
  if (fwrite(body, 1, len, f) != len || fclose(f) != 0) {
    unlink(tmp);
    return -1;
  }
  return rename(tmp, path);
}

int tb_prom_listen(const char *addr, int port) {
  struct sockaddr_in sa;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons((unsigned short)port);
  if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
    fprintf(stderr, "tlsbridge-probe: --prometheus-bind: '%s' is not an IPv4 address\n", addr);
    if (fd >= 0)
      close(fd);
    return -1;
  }
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
      bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 8)) {
    fprintf(stderr, "tlsbridge-probe: cannot listen on %s:%d: %s\n", addr, port, strerror(errno));
    if (fd >= 0)
      close(fd);
    return -1;
  }
  return fd;
}

void tb_prom_serve(int lfd, const char *body, size_t len) {
  char req[2048], head[256];
  struct timeval tv = {0, 200000};
  ssize_t n;
  int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
  int hl;
  if (c < 0)
    return;
  setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  n = recv(c, req, sizeof req - 1, 0);
  if (n > 0) {
    req[n] = 0;
    if (strncmp(req, "GET ", 4) == 0)
      hl = snprintf(head, sizeof head,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/openmetrics-text; "
                    "version=1.0.0; charset=utf-8\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                    len);
    else
      hl = snprintf(head, sizeof head, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n"
                                       "Connection: close\r\n\r\n");
    if (send(c, head, (size_t)hl, MSG_NOSIGNAL) == hl && strncmp(req, "GET ", 4) == 0)
      (void)!send(c, body, len, MSG_NOSIGNAL);
  }
  close(c);
}
