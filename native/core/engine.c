/* The SSLEngine state machine over OpenSSL: wrap and unwrap with the exact
 * JSSE semantics (whole records in, nothing consumed on underflow or
 * overflow, FINISHED reported once), in one call each. */
#include "tb.h"
#include "tb_alloc.h"
#include "trace.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/err.h>

tb_engine *tb_engine_new(SSL_CTX *ctx, int client, tb_error *err) {
  tb_engine *e = tb_calloc(1, sizeof *e);
  BIO *bio;
  if (!e) {
    tb_err_set(err, TB_ERR_MEMORY, "out of memory creating an engine");
    return NULL;
  }
  tb_err_reset();
  e->ssl = SSL_new(ctx); /* takes a reference on ctx */
  if (!e->ssl) {
    tb_err_from_openssl(err, TB_ERR_SSL, "SSL_new failed");
    free(e);
    return NULL;
  }
  bio = tb_bio_new(&e->io);
  if (!bio || !SSL_set_ex_data(e->ssl, tb_engine_ex_index(), e)) {
    tb_err_from_openssl(err, TB_ERR_MEMORY, "cannot attach the buffer BIO");
    BIO_free(bio);
    SSL_free(e->ssl);
    free(e);
    return NULL;
  }
  SSL_set_bio(e->ssl, bio, bio);
  /* Each record is offered whole (wrap and unwrap bound the input window to
   * one record), so OpenSSL may take it in one BIO read instead of a header
   * read and a body read. */
  SSL_set_read_ahead(e->ssl, 1);
  e->verify_result = -1;
  e->alpn_choice_len = -1;
  e->key_left = UINT64_MAX;
  if (client) {
    e->flags |= TB_F_CLIENT;
    SSL_set_connect_state(e->ssl);
    SSL_set_verify(e->ssl, SSL_VERIFY_PEER, NULL);
    SSL_set_post_handshake_auth(e->ssl, 1); /* servers may ask for a certificate later (TLS 1.3) */
  } else {
    SSL_set_accept_state(e->ssl);
  }
  return e;
}

void tb_engine_free(tb_engine *e) {
  if (!e)
    return;
  tb_trace_close(e);
  if (e->ssl) {
    SSL_set_ex_data(e->ssl, tb_engine_ex_index(), NULL);
    /* An established connection freed without close_notify (an engine left
     * to the Cleaner, a peer that just hung up) keeps its session resumable,
     * as SunJSSE does and TLS 1.1+ allows (RFC 5246 7.2.1); SSL_free would
     * otherwise mark it not resumable and the next connection pays a full
     * handshake. A fatal alert has already removed the session. */
    if (SSL_is_init_finished(e->ssl) && !(e->flags & TB_F_FAILED))
      SSL_set_shutdown(e->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    SSL_free(e->ssl); /* drops the SSL_CTX reference */
  }
  sk_X509_pop_free(e->pending_chain, X509_free);
  tb_extensions_free(e);
  free(e->peer_key);
  tb_io_free(&e->io);
  OPENSSL_cleanse(&e->err, sizeof e->err);
  free(e);
}

void tb_engine_fail(tb_engine *e, int kind, const char *what) {
  tb_err_from_openssl(&e->err, kind, what);
  tb_trace_error(e);
  e->error_pending = 1;
  e->flags |= TB_F_FAILED | TB_F_IN_DONE | TB_F_OUT_CLOSING;
  e->task = TB_TASK_NONE;
}

void tb_engine_fail_msg(tb_engine *e, int kind, const char *msg) {
  ERR_clear_error();
  tb_err_set(&e->err, kind, "%s", msg);
  tb_trace_error(e);
  e->error_pending = 1;
  e->flags |= TB_F_FAILED | TB_F_IN_DONE | TB_F_OUT_CLOSING;
  e->task = TB_TASK_NONE;
}

static void open_out(tb_engine *e, uint8_t *dst, size_t cap) {
  e->io.out = dst;
  e->io.out_cap = cap;
  e->io.out_pos = 0;
}

static void close_windows(tb_engine *e) {
  e->io.out = NULL;
  e->io.out_cap = e->io.out_pos = 0;
  e->io.in = NULL;
  e->io.in_len = e->io.in_pos = 0;
}

/* Everything an unwrap of no bytes could act on: an error to throw, the
 * end of input, a handshake step or status to report, queued output (its
 * NEED_WRAP), a task, or plaintext OpenSSL kept from a record (KEPT, which
 * the unwrap that left it sets). */
static int idle_in(tb_engine *e) {
  return (e->flags & (TB_F_HS_DONE | TB_F_IN_DONE | TB_F_FAILED | TB_F_PHA | TB_F_FIN_PENDING | TB_F_KEPT)) ==
             TB_F_HS_DONE &&
         !e->error_pending && e->task == TB_TASK_NONE && e->io.spill_len == 0;
}

static int finish(tb_engine *e, tb_result *r, int status) {
  r->status = status;
  r->hs = tb_engine_hs_status(e, 1);
  r->idle_in = idle_in(e);
  close_windows(e);
  if (e->error_pending) {
    e->error_pending = 0;
    return -1;
  }
  return 0;
}

/* Per-record expansion bound used to decide whether a record fits in the
 * caller's buffer before asking OpenSSL to write it. */
static size_t record_overhead(tb_engine *e) {
  const SSL_CIPHER *c = SSL_get_current_cipher(e->ssl);
  if (c && SSL_CIPHER_is_aead(c))
    return TB_RECORD_HEADER + 1 + 8 + 16; /* type byte (1.3) or explicit nonce (1.2) + tag */
  return TB_RECORD_HEADER + 16 + 64 + 256;
}

/* The output window ends on a record boundary: the tail of a record that
 * did not fit (OpenSSL writes a record whole, past a short estimate, or a
 * KeyUpdate before the data) goes back to the queue for the next wrap. */
static int keep_whole_records(tb_engine *e) {
  size_t pos = 0, rec;
  int type;
  while (pos < e->io.out_pos && tb_record_scan(e->io.out + pos, e->io.out_pos - pos, &rec, &type) == 1)
    pos += rec;
  e->stats.bytes_out -= e->io.out_pos - pos; /* counted again when drained */
  if (tb_io_unwrite(&e->io, e->io.out_pos - pos))
    return 0;
  tb_engine_fail_msg(e, TB_ERR_SSL, "output exceeds the engine's queue: the caller is not draining wrap");
  return -1;
}

int tb_engine_wrap(tb_engine *e, const uint8_t *src, size_t srclen, uint8_t *dst, size_t dstcap,
                   tb_result *r) {
  size_t overhead;
  r->consumed = r->produced = 0;
  e->stats.calls++;
  if (e->error_pending)
    return finish(e, r, TB_CLOSED);
  open_out(e, dst, dstcap);
  if (e->io.spill_len > 0) {
    size_t n = tb_io_drain_records(&e->io);
    r->produced = n;
    e->stats.bytes_out += n;
    if (e->io.spill_len > 0)
      return finish(e, r, n == 0 ? TB_OVERFLOW : (tb_outbound_done(e) ? TB_CLOSED : TB_OK));
    if (e->flags & TB_F_OUT_CLOSING) {
      tb_shed_closed_out(e);
      return finish(e, r, TB_CLOSED);
    }
    if (!(e->flags & TB_F_HS_DONE) || (e->flags & TB_F_FIN_PENDING))
      return finish(e, r, TB_OK); /* a flight is out; let the caller see the new status */
  }
  if (e->flags & TB_F_OUT_CLOSING)
    return finish(e, r, TB_CLOSED);
  if (!(e->flags & TB_F_HS_DONE)) {
    int rc;
    if (e->task != TB_TASK_NONE)
      return finish(e, r, TB_OK);
    if (!(e->flags & TB_F_CLIENT) && !(e->flags & TB_F_STARTED)) {
      tb_engine_begin(e); /* a server speaks only after a ClientHello */
      return finish(e, r, TB_OK);
    }
    /* The flight goes to the queue, then out in whole records; on failure
     * the alert waits there for the next wrap, as this call throws. */
    e->io.out = NULL;
    rc = tb_hs_step(e);
    open_out(e, dst, dstcap);
    if (rc < 0)
      return finish(e, r, TB_OK);
    r->produced = tb_io_drain_records(&e->io);
    e->stats.bytes_out += r->produced;
    return finish(e, r, r->produced == 0 && e->io.spill_len > 0 ? TB_OVERFLOW : TB_OK);
  }
  overhead = record_overhead(e);
  while (r->consumed < srclen) {
    size_t chunk = srclen - r->consumed;
    size_t before = e->io.out_pos;
    int n;
    uint64_t t0;
    if (chunk > TB_MAX_PLAINTEXT)
      chunk = TB_MAX_PLAINTEXT;
    if (chunk > e->key_left) {
      chunk = tb_key_budget(e, chunk);
      if (chunk == 0) {
        if (e->flags & TB_F_FAILED)
          return finish(e, r, TB_CLOSED);
        break; /* the KeyUpdate is queued: it leaves before any byte under the new key */
      }
    }
    if (dstcap - e->io.out_pos < chunk + overhead) {
      if (r->consumed == 0 && e->io.out_pos == 0)
        return finish(e, r, TB_OVERFLOW);
      break;
    }
    tb_err_reset_shared();
    t0 = tb_io_clock();
    n = SSL_write(e->ssl, src + r->consumed, (int)chunk);
    tb_io_clock_add(&e->stats.ns_write, t0);
    if (n <= 0) {
      int se = tb_ssl_error(e->ssl, n);
      if (se == SSL_ERROR_WANT_READ || se == SSL_ERROR_WANT_WRITE)
        break;
      tb_engine_fail(e, TB_ERR_SSL, "SSL_write failed");
      tb_io_unwrite(&e->io, e->io.out_pos);
      return finish(e, r, TB_CLOSED);
    }
    r->consumed += (size_t)n;
    e->key_left -= (size_t)n;
    e->stats.app_out += (size_t)n;
    e->stats.records_out++;
    e->stats.bytes_out += e->io.out_pos - before;
    if (e->io.spill_len > 0)
      break; /* the estimate was short; the rest goes out on the next wrap */
  }
  if (e->io.spill_len > 0 && keep_whole_records(e) < 0)
    return finish(e, r, TB_CLOSED);
  r->produced = e->io.out_pos;
  return finish(e, r, TB_OK);
}

static int unwrap_app(tb_engine *e, const uint8_t *src, size_t srclen, uint8_t *dst, size_t dstcap,
                      tb_result *r);

/* An SSLv2-format record: 2-byte length with the top bit set; SunJSSE reads
 * 5 bytes (its header) before it judges one. */
static int sslv2_incomplete(const uint8_t *p, size_t avail) {
  return avail < TB_RECORD_HEADER || avail < ((((size_t)p[0] & 0x7f) << 8) | p[1]) + 2;
}

int tb_engine_unwrap(tb_engine *e, const uint8_t *src, size_t srclen, uint8_t *dst, size_t dstcap,
                     tb_result *r) {
  r->consumed = r->produced = 0;
  e->stats.calls++;
  if (e->error_pending)
    return finish(e, r, TB_CLOSED);
  if (e->flags & TB_F_IN_DONE)
    return finish(e, r, TB_CLOSED);
  if (e->flags & TB_F_HS_DONE) {
    int rc;
    if ((e->flags & TB_F_FIN_AT_UNWRAP) && e->io.spill_len == 0) {
      size_t rec;
      int type;
      e->flags &= ~TB_F_FIN_AT_UNWRAP;
      if (tb_record_scan(src, srclen, &rec, &type) == 0)
        return finish(e, r, TB_OK); /* FINISHED, nothing read */
    }
    rc = unwrap_app(e, src, srclen, dst, dstcap, r);
    /* Records go to OpenSSL one at a time and only into room for their
     * whole plaintext, so plaintext stays behind only when the destination
     * is full: SSL_pending is asked then alone, not on every call. */
    e->flags &= ~TB_F_KEPT;
    if (rc == 0 && r->produced == dstcap && SSL_pending(e->ssl) > 0) {
      e->flags |= TB_F_KEPT;
      r->idle_in = 0;
    }
    return rc;
  }
  if (e->task != TB_TASK_NONE)
    return finish(e, r, TB_OK);
  if ((e->flags & TB_F_CLIENT) && SSL_in_before(e->ssl)) {
    tb_engine_begin(e); /* unwrap begins the handshake too (SSLEngine javadoc) */
    return finish(e, r, TB_OK); /* NEED_WRAP: the ClientHello goes first */
  }
  if (!(e->flags & TB_F_STARTED))
    tb_engine_begin(e); /* a server's handshake starts with its first unwrap */
  for (;;) {
    size_t rec = 0, avail = srclen - r->consumed;
    int type = 0, rc, scan = tb_record_scan(src + r->consumed, avail, &rec, &type);
    if (scan == 0) {
      if (r->consumed == 0)
        return finish(e, r, TB_UNDERFLOW);
      break;
    }
    if (scan < 0) {
      if (src[r->consumed] & 0x80) {
        /* Judged whole, as SunJSSE does: a header or record that is not all
         * there yet is BUFFER_UNDERFLOW, not a verdict on a fragment. */
        if (sslv2_incomplete(src + r->consumed, avail)) {
          if (r->consumed == 0)
            return finish(e, r, TB_UNDERFLOW);
          break;
        }
        tb_engine_fail_msg(e, TB_ERR_PROTOCOL, "unsupported SSLv2-format record (SSLv2Hello is not accepted)");
        return finish(e, r, TB_CLOSED);
      }
      rec = avail; /* let OpenSSL judge the header and name the fault */
    }
    e->io.in = src + r->consumed;
    e->io.in_len = rec;
    e->io.in_pos = 0;
    rc = tb_hs_step(e);
    r->consumed += e->io.in_pos;
    e->stats.bytes_in += e->io.in_pos;
    e->stats.records_in++;
    if (rc < 0) {
      /* bytes that are no TLS record are a protocol error (SSLProtocolException,
       * as SunJSSE's "Unknown content type"), whatever OpenSSL calls them */
      if (scan < 0)
        e->err.kind = TB_ERR_PROTOCOL;
      return finish(e, r, TB_CLOSED);
    }
    if (scan < 0) {
      tb_engine_fail_msg(e, TB_ERR_PROTOCOL, "malformed TLS record header");
      return finish(e, r, TB_CLOSED);
    }
    if (rc != 0 || e->io.spill_len > 0 || e->io.in_pos == 0)
      break;
  }
  return finish(e, r, TB_OK);
}

static int unwrap_app(tb_engine *e, const uint8_t *src, size_t srclen, uint8_t *dst, size_t dstcap,
                      tb_result *r) {
  int bare = 0; /* a read gave no plaintext: a post-handshake message, perhaps a KeyUpdate */
  /* Plaintext OpenSSL kept from an earlier record comes out first; only
   * the unwrap that filled its destination can have left any (KEPT). */
  while ((e->flags & TB_F_KEPT) && SSL_pending(e->ssl) > 0 && r->produced < dstcap) {
    int n = SSL_read(e->ssl, dst + r->produced, (int)(dstcap - r->produced));
    if (n <= 0)
      break;
    r->produced += (size_t)n;
  }
  for (;;) {
    size_t rec = 0, avail = srclen - r->consumed;
    int type = 0, n, retry, scan = tb_record_scan(src + r->consumed, avail, &rec, &type);
    uint64_t t0;
    if (scan == 0) {
      if (r->consumed == 0 && r->produced == 0)
        return finish(e, r, TB_UNDERFLOW);
      break;
    }
    if (scan > 0 && type == 23 &&
        dstcap - r->produced < tb_record_plaintext_bound(rec - TB_RECORD_HEADER)) {
      if (r->consumed == 0 && r->produced == 0)
        return finish(e, r, TB_OVERFLOW);
      break;
    }
    if (scan < 0)
      rec = avail;
    e->io.in = src + r->consumed;
    e->io.in_len = rec;
    e->io.in_pos = 0;
    tb_err_reset_shared();
    t0 = tb_io_clock();
    n = SSL_read(e->ssl, dst + r->produced, (int)(dstcap - r->produced));
    /* Without SSL_MODE_AUTO_RETRY, an SSL_read that only finishes earlier
     * post-handshake work (the KeyUpdate we sent back) returns WANT_READ
     * before it looks at the record offered. Reporting that as OK with
     * nothing consumed stalls a caller whose input holds the next
     * KeyUpdate: it waits for bytes the peer already sent. */
    for (retry = 0; n <= 0 && retry < 2 && e->io.in_pos == 0 && e->io.spill_len == 0 &&
                    tb_ssl_error(e->ssl, n) == SSL_ERROR_WANT_READ; retry++)
      n = SSL_read(e->ssl, dst + r->produced, (int)(dstcap - r->produced));
    tb_io_clock_add(&e->stats.ns_read, t0);
    r->consumed += e->io.in_pos;
    e->stats.bytes_in += e->io.in_pos;
    e->stats.records_in++;
    if (n > 0) {
      r->produced += (size_t)n;
      e->stats.app_in += (size_t)n;
    } else {
      int se = tb_ssl_error(e->ssl, n);
      bare = 1;
      if (se == SSL_ERROR_ZERO_RETURN) {
        e->flags |= TB_F_PEER_CLOSED | TB_F_IN_DONE;
        tb_queue_close_notify(e);
        /* Plaintext that came before the close_notify is reported as OK:
         * callers commonly drop the data of a CLOSED result. The next
         * unwrap says CLOSED. */
        return finish(e, r, r->produced > 0 ? TB_OK : TB_CLOSED);
      }
      if (se == SSL_ERROR_WANT_X509_LOOKUP || se == SSL_ERROR_WANT_RETRY_VERIFY) {
        /* a post-handshake CertificateRequest: the KeyManager must answer */
        e->task = se == SSL_ERROR_WANT_X509_LOOKUP ? TB_TASK_CERT : TB_TASK_VERIFY;
        break;
      }
      if (se != SSL_ERROR_WANT_READ && se != SSL_ERROR_WANT_WRITE) {
        tb_engine_fail(e, TB_ERR_PROTOCOL, "cannot read TLS record");
        return finish(e, r, TB_CLOSED);
      }
      if (scan < 0) {
        tb_engine_fail_msg(e, TB_ERR_PROTOCOL, "malformed TLS record header");
        return finish(e, r, TB_CLOSED);
      }
    }
    if (e->io.spill_failed) {
      tb_engine_fail_msg(e, TB_ERR_SSL, "post-handshake output exceeds the engine's queue");
      return finish(e, r, TB_CLOSED);
    }
    if ((e->flags & TB_F_PHA) && !SSL_in_init(e->ssl)) {
      e->flags = (e->flags & ~TB_F_PHA) | TB_F_FIN_PENDING; /* the client's Finished is in */
      break;
    }
    if (e->io.in_pos == 0 || e->io.spill_len > 0)
      break; /* e.g. a KeyUpdate wants an answer: NEED_WRAP */
  }
  /* The peer's KeyUpdate asked for one back, which OpenSSL keeps for the
   * next SSL_write: it is queued now, so the caller sees NEED_WRAP, then
   * FINISHED from the wrap that sends it, as SunJSSE reports it. */
  if (bare && SSL_get_key_update_type(e->ssl) != SSL_KEY_UPDATE_NONE &&
      !(e->flags & (TB_F_OUT_CLOSING | TB_F_FAILED)) && tb_key_update(e, 0) < 0) {
    e->error_pending = 1; /* the answer could not be sent: this unwrap throws why */
    return finish(e, r, TB_CLOSED);
  }
  return finish(e, r, TB_OK);
}

/* Called after Java finished the delegated task: resume the handshake now so
 * the next status the caller sees is the real next step. */
int tb_engine_task_done(tb_engine *e) {
  int rc;
  if (e->task == TB_TASK_NONE)
    return 0;
  if (e->task == TB_TASK_CERT)
    e->cert_ready = 1;
  if (e->task == TB_TASK_HELLO)
    e->hello_ready = 1;
  e->task = TB_TASK_NONE;
  if (e->flags & (TB_F_FAILED | TB_F_OUT_CLOSING))
    return 0;
  if (e->flags & TB_F_SOCKET)
    return 0; /* the socket loop drives its own handshake */
  close_windows(e);
  rc = tb_hs_step(e);
  return rc < 0 ? -1 : 0;
}
