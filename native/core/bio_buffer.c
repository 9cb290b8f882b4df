/* A BIO that reads ciphertext straight out of, and writes it straight into,
 * the caller's memory (a direct ByteBuffer or a pinned array): the only
 * copies are OpenSSL's own, into and out of its record buffer. Bytes written
 * while no output window is open go to a small per-engine spill queue. Once
 * OpenSSL hands it the sending keys (seal.c), it is given plaintext and
 * seals each record into the window or the queue itself. */
#include "tb.h"
#include "tb_alloc.h"
#include "seal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static BIO_METHOD *tb_method;
static pthread_once_t tb_method_once = PTHREAD_ONCE_INIT;

/* n bytes at the end of the queue, counted in it; NULL when it would pass
 * TB_SPILL_LIMIT or memory runs out (spill_failed says so). */
static uint8_t *spill_reserve(tb_io *io, size_t n) {
  size_t need;
  uint8_t *at;
  if (io->spill_off > 0 && io->spill_len > 0 && io->spill_off + io->spill_len + n > io->spill_cap) {
    memmove(io->spill, io->spill + io->spill_off, io->spill_len);
    io->spill_off = 0;
  } else if (io->spill_len == 0) {
    io->spill_off = 0;
  }
  need = io->spill_off + io->spill_len + n;
  if (need > TB_SPILL_LIMIT) {
    io->spill_failed = 1;
    return NULL;
  }
  if (need > io->spill_cap) {
    size_t cap = io->spill_cap ? io->spill_cap : 4096;
    uint8_t *nb;
    while (cap < need)
      cap *= 2;
    nb = tb_realloc(io->spill, cap);
    if (!nb) {
      io->spill_failed = 1;
      return NULL;
    }
    io->spill = nb;
    io->spill_cap = cap;
  }
  at = io->spill + io->spill_off + io->spill_len;
  io->spill_len += n;
  return at;
}

static int spill_append(tb_io *io, const uint8_t *p, size_t n) {
  uint8_t *at = spill_reserve(io, n);
  if (!at)
    return 0;
  memcpy(at, p, n);
  return 1;
}

/* Moves the last n bytes of the output window back to the front of the
 * queue: the caller's buffer holds whole records only, so the head of a
 * record OpenSSL wrote past the window's room, or the bytes of a call that
 * then failed, wait for the next wrap. */
int tb_io_unwrite(tb_io *io, size_t n) {
  const uint8_t *tail = io->out + io->out_pos - n;
  size_t queued = io->spill_len;
  uint8_t *q;
  if (n == 0)
    return 1;
  if (!spill_append(io, tail, n)) /* makes room; the order is fixed below */
    return 0;
  q = io->spill + io->spill_off;
  memmove(q + n, q, queued);
  memcpy(q, tail, n);
  io->out_pos -= n;
  return 1;
}

/* Copies the queued records that fit whole into the output window: a record
 * is never split across two wraps (the JSSE contract: whole records or
 * BUFFER_OVERFLOW). Returns the bytes copied. */
size_t tb_io_drain_records(tb_io *io) {
  size_t room = io->out_cap - io->out_pos, n = 0, rec;
  const uint8_t *q;
  int type;
  if (io->spill_len == 0)
    return 0; /* the queue may be unallocated */
  q = io->spill + io->spill_off;
  while (n < io->spill_len && tb_record_scan(q + n, io->spill_len - n, &rec, &type) == 1 && rec <= room - n)
    n += rec;
  if (n == 0 && tb_record_scan(q, io->spill_len, &rec, &type) != 1)
    n = io->spill_len < room ? io->spill_len : room; /* not records (cannot happen): never stall */
  if (n == 0)
    return 0;
  memcpy(io->out + io->out_pos, q, n);
  io->out_pos += n;
  io->spill_off += n;
  io->spill_len -= n;
  if (io->spill_len == 0)
    io->spill_off = 0;
  return n;
}

void tb_io_free(tb_io *io) {
  tb_seal_free(io->seal);
  io->seal = NULL;
  free(io->spill);
  io->spill = NULL;
  io->spill_cap = io->spill_len = io->spill_off = 0;
}

static int overlaps(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
  return a < b + bn && b < a + an;
}

/* One record's plaintext, sealed whole into the window when it fits there
 * (and the queue is empty, to keep the order), else into the queue. Never a
 * retry: OpenSSL 3.5 would retry a refused write from the buffer it first
 * passed, which a caller may have moved since. A record whose plaintext
 * shares memory with the window is sealed into the queue: sealing in place
 * at an offset would overwrite plaintext not read yet. */
static int seal_write(tb_io *io, const uint8_t *p, size_t n) {
  size_t len;
  int queued = 1;
  uint8_t *at;
  /* A key change or a record failed: what OpenSSL writes now (its alert
   * after a failed re-key, through the kTLS method it cannot leave) would go
   * out unsealed, so nothing does; p is not read. */
  if (tb_seal_failed(io->seal))
    return -1;
  len = tb_seal_len(io->seal, n);
  if (io->spill_len == 0 && io->out && io->out_cap - io->out_pos >= len &&
      !overlaps(p, n, io->out + io->out_pos, len)) {
    at = io->out + io->out_pos;
    io->out_pos += len;
    queued = 0;
  } else if (!(at = spill_reserve(io, len))) {
    return -1;
  }
  if (!tb_seal_record(io->seal, p, n, at)) {
    if (queued)
      io->spill_len -= len;
    else
      io->out_pos -= len;
    return -1;
  }
  io->written += len;
  return (int)n;
}

static int bio_write(BIO *b, const char *data, int len) {
  tb_io *io = BIO_get_data(b);
  const uint8_t *p = (const uint8_t *)data;
  size_t n = len > 0 ? (size_t)len : 0, direct = 0;
  BIO_clear_retry_flags(b);
  if (!io || len < 0)
    return -1;
  if (io->seal)
    return seal_write(io, p, n);
  /* Order matters: once anything is queued, later bytes queue behind it. */
  if (io->spill_len == 0 && io->out) {
    size_t room = io->out_cap - io->out_pos;
    direct = n < room ? n : room;
    memcpy(io->out + io->out_pos, p, direct);
    io->out_pos += direct;
  }
  if (direct < n && !spill_append(io, p + direct, n - direct))
    return -1;
  io->written += n;
  return len;
}

static int bio_read(BIO *b, char *out, int len) {
  tb_io *io = BIO_get_data(b);
  size_t avail, n;
  BIO_clear_retry_flags(b);
  if (!io || len <= 0)
    return 0;
  avail = io->in_len - io->in_pos;
  if (avail == 0) {
    BIO_set_retry_read(b);
    return -1;
  }
  n = (size_t)len < avail ? (size_t)len : avail;
  memcpy(out, io->in + io->in_pos, n);
  io->in_pos += n;
  return (int)n;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr) {
  tb_io *io = BIO_get_data(b);
  switch (cmd) {
  case BIO_CTRL_FLUSH:
    return 1;
  case BIO_CTRL_PENDING:
    return io ? (long)(io->in_len - io->in_pos) : 0;
  case BIO_CTRL_WPENDING:
    return io ? (long)io->spill_len : 0;
  case BIO_CTRL_GET_CLOSE:
    return BIO_get_shutdown(b);
  case BIO_CTRL_SET_CLOSE:
    BIO_set_shutdown(b, (int)num);
    return 1;
  case TB_BIO_CTRL_SET_KTLS:
    return io ? tb_seal_set_key(&io->seal, num, ptr) : 0;
  case BIO_CTRL_GET_KTLS_SEND:
    return io && io->seal;
  case TB_BIO_CTRL_SET_KTLS_TX_SEND_CTRL_MSG:
    tb_seal_set_type(io ? io->seal : NULL, (int)num);
    return 1;
  case TB_BIO_CTRL_CLEAR_KTLS_TX_CTRL_MSG:
    tb_seal_set_type(io ? io->seal : NULL, SSL3_RT_APPLICATION_DATA);
    return 1;
  default:
    return 0;
  }
}

static int bio_create(BIO *b) {
  BIO_set_init(b, 1);
  return 1;
}

static int bio_destroy(BIO *b) {
  /* The tb_io belongs to the engine, which frees it after SSL_free. */
  BIO_set_data(b, NULL);
  return 1;
}

static void make_method(void) {
  BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "tlsbridge-buffer");
  if (!m)
    return;
  if (!BIO_meth_set_write(m, bio_write) || !BIO_meth_set_read(m, bio_read) ||
      !BIO_meth_set_ctrl(m, bio_ctrl) || !BIO_meth_set_create(m, bio_create) ||
      !BIO_meth_set_destroy(m, bio_destroy)) {
    BIO_meth_free(m);
    return;
  }
  tb_method = m;
}

int tb_bio_init(void) {
  pthread_once(&tb_method_once, make_method);
  return tb_method != NULL;
}

BIO *tb_bio_new(tb_io *io) {
  BIO *b;
  if (!tb_bio_init())
    return NULL;
  b = BIO_new(tb_method);
  if (b)
    BIO_set_data(b, io);
  return b;
}
