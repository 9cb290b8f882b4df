/*
 * The engine core: TLS over caller-owned memory, with no JNI in it, so the
 * native tests and the fuzzers drive exactly the code the JVM runs.
 */
#ifndef TB_CORE_H
#define TB_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/err.h>

#define TB_API __attribute__((visibility("default")))

/* Largest TLS record OpenSSL accepts with compression off (the contexts set
 * SSL_OP_NO_COMPRESSION): 2^14 plaintext + 320 (SSL3_RT_MAX_ENCRYPTED_OVERHEAD:
 * a CBC suite's IV, 48-byte MAC and 256 bytes of padding; TLS 1.3 allows
 * 256) + the 5-byte header. TLS 1.2's 2048 bytes of expansion are only
 * reachable with compression. 16709 is also SunJSSE's getPacketBufferSize,
 * and fits the network buffers Tomcat allocates (16921), which a larger
 * answer makes it replace on every connection. */
#define TB_MAX_PLAINTEXT 16384
#define TB_MAX_RECORD_BODY (TB_MAX_PLAINTEXT + 320)
#define TB_RECORD_HEADER 5
#define TB_MAX_RECORD (TB_RECORD_HEADER + TB_MAX_RECORD_BODY)
/* Largest certificate chain accepted from a peer, in bytes. */
#define TB_MAX_CERT_LIST (100u * 1024u)
/* Queued outbound bytes never grow past this: a peer or caller that never
 * drains them is an error, not a reason to eat memory. */
#define TB_SPILL_LIMIT (1u << 20)

/* Numbers shared with Java (SSLEngineResult enums are mapped there). */
enum tb_status { TB_OK = 0, TB_UNDERFLOW = 1, TB_OVERFLOW = 2, TB_CLOSED = 3 };
enum tb_hs {
  TB_HS_NOT = 0, TB_HS_FINISHED = 1, TB_HS_NEED_TASK = 2,
  TB_HS_NEED_WRAP = 3, TB_HS_NEED_UNWRAP = 4
};
/* What a delegated task must do in Java before the handshake can go on. */
enum tb_task { TB_TASK_NONE = 0, TB_TASK_VERIFY = 1, TB_TASK_CERT = 2, TB_TASK_HELLO = 3 };

/* Which Java exception an error becomes. */
enum tb_err_kind {
  TB_ERR_NONE = 0, TB_ERR_SSL = 1, TB_ERR_HANDSHAKE = 2, TB_ERR_PROTOCOL = 3,
  TB_ERR_ARGUMENT = 4, TB_ERR_STATE = 5, TB_ERR_MEMORY = 6, TB_ERR_IO = 7,
  TB_ERR_TIMEOUT = 8, TB_ERR_CLOSED = 9,
  /* sockets: java.net.SocketException, ConnectException, BindException */
  TB_ERR_SOCKET = 10, TB_ERR_CONNECT = 11, TB_ERR_BIND = 12,
  /* not an error: a no-wait socket call would wait (socket_park.c) */
  TB_ERR_BLOCKED = 13
};

typedef struct tb_error {
  int kind;
  unsigned long code; /* first OpenSSL error code, 0 if none */
  char msg[384];
} tb_error;

/* Counters the library keeps per connection; the probe reads them at close.
 * Append only: native/probe/probe.h mirrors this layout (tb_load checks it). */
typedef struct tb_stats {
  uint64_t bytes_in, bytes_out;      /* TLS bytes (records) */
  uint64_t app_in, app_out;          /* plaintext bytes */
  uint64_t records_in, records_out;
  uint64_t ns_read, ns_write, ns_handshake;
  uint64_t calls;                    /* engine operations (one JNI crossing each) */
  uint64_t hs_start_ns;
} tb_stats;

/* Windows over caller memory plus the spill queue for bytes OpenSSL writes
 * when no output window is open (handshake flights produced during unwrap,
 * alerts, close_notify). */
typedef struct tb_io {
  const uint8_t *in;
  size_t in_len, in_pos;
  uint8_t *out;
  size_t out_cap, out_pos;
  uint8_t *spill;
  size_t spill_off, spill_len, spill_cap;
  int spill_failed;
  uint64_t written;                  /* every byte OpenSSL wrote, for stats */
  struct tb_seal *seal;              /* sending keys OpenSSL handed over (seal.c), or NULL */
} tb_io;

typedef struct tb_engine {
  SSL *ssl;
  tb_io io;
  uint32_t flags;
  int task;
  int verify_result;                 /* -1 none yet, 0 rejected, 1 accepted */
  int verify_error;                  /* X509_V_ERR_* when rejected */
  int cert_ready;                    /* cert task done for this handshake */
  int hello_ready;                   /* client-hello task done */
  int error_pending;                 /* err holds an error not yet reported */
  STACK_OF(X509) *pending_chain;     /* peer chain awaiting the verify task, leaf first */
  /* What a server learns from the ClientHello before OpenSSL acts on it */
  uint16_t *cert_sigalgs;            /* the client's whole signature_algorithms_cert */
  int n_cert_sigalgs;                /* -1 when the extension was absent */
  int hello_seen;
  int sni_len;                       /* bytes in sni, -1 when no host_name was asked for */
  int sni_judge;                     /* the name is not plain LDH: Java judges it (TASK_HELLO) */
  unsigned char sni[TLSEXT_MAXLEN_host_name]; /* the host_name as sent */
  unsigned char *alpn_offer;         /* the client's whole ALPN list, wire format */
  size_t alpn_offer_len;
  /* ALPN and the ClientHello task (extensions.c) */
  unsigned char *alpn_accept;        /* protocols a server accepts, in its order, wire format */
  size_t alpn_accept_len;
  unsigned char alpn_choice[256];    /* a Java selector's answer */
  int alpn_choice_len;               /* its length; -1 no answer, 0 decline ALPN, -2 nothing usable */
  int hello_task;                    /* the ClientHello goes to Java (SNI matchers, ALPN selector) */
  int client_speaks_first;           /* server: the caller reads the peer's data before writing its own */
  int hello_alert;                   /* fatal alert Java asked for, 0 to go on */
  struct tb_keymat *offered[4];      /* keys installed for this handshake (references held) */
  char *peer_key;                    /* client: the session cache's key (peer and identity), NULL for none */
  int n_offered;
  /* Key limits (key_update.c): bytes of plaintext each write key may
   * protect, per AEAD (0: none), the negotiated cipher's, and what the
   * current write key may still protect (UINT64_MAX when unlimited), so a
   * write costs one compare and one subtract. */
  uint64_t key_limit_gcm, key_limit_chacha, key_limit, key_left;
  tb_error err;
  tb_stats stats;
  void *owner;                       /* the glue layer's handle on its peer object */
  void *glue;                        /* per-call context of the glue layer (JNIEnv) */
} tb_engine;

#define TB_F_CLIENT      0x0001u
#define TB_F_STARTED     0x0002u
#define TB_F_HS_DONE     0x0004u
#define TB_F_FIN_PENDING 0x0008u
#define TB_F_IN_DONE     0x0010u
#define TB_F_OUT_CLOSING 0x0020u
#define TB_F_FAILED      0x0040u
#define TB_F_PEER_CLOSED 0x0080u
#define TB_F_SOCKET      0x0100u /* SSL reads/writes a descriptor, not our BIO */
#define TB_F_PHA         0x0200u /* TLS 1.3 post-handshake client auth in progress */
#define TB_F_KEPT        0x0400u /* OpenSSL holds plaintext the last unwrap had no room for */
#define TB_F_FIN_AT_UNWRAP 0x0800u /* TLS 1.2 server, last flight out or queued: FINISHED from the next unwrap */
#define TB_F_POST_HS     0x1000u /* TLS 1.3 KeyUpdate queued (ours, or the answer to the peer's): FINISHED once out */

typedef struct tb_result {
  size_t consumed, produced;
  int status, hs;
  /* An unwrap given no bytes would now answer BUFFER_UNDERFLOW,
   * NOT_HANDSHAKING, 0/0 and change nothing: the caller may answer it
   * without calling (Tomcat unwraps an empty buffer after every read that
   * returned nothing). */
  int idle_in;
} tb_result;

/* errors.c */
void tb_err_set(tb_error *err, int kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void tb_err_from_openssl(tb_error *err, int kind, const char *what);
void tb_err_clear(tb_error *err);
/* Empties OpenSSL's error queue before a call whose failure we classify.
 * Peeking first: ERR_clear_error walks all 16 slots even when the queue is
 * empty, which it almost always is (failures drain it). */
static inline void tb_err_reset(void) {
  if (ERR_peek_error() != 0)
    ERR_clear_error();
}
/* The same where only another library can have left an entry: before
 * SSL_read/SSL_write of an established connection and each handshake step.
 * A shared libcrypto (the system flavours) also serves other code, and an
 * entry it leaves on this thread's queue SSL_get_error would read as our
 * failure. The bundled flavour's libcrypto is private to this library
 * (TB_OPENSSL_PRIVATE, set by native/CMakeLists.txt): only our own calls
 * reach its queue, and no entry point leaves anything on it (failures drain
 * it into their message, the exception function and tb_hs_step drain the
 * rest; the fuzzers and native tests check it after every call), so the
 * peek, ~150 instructions a call on OpenSSL 3.5, is skipped there. */
static inline void tb_err_reset_shared(void) {
#ifndef TB_OPENSSL_PRIVATE
  tb_err_reset();
#endif
}
/* SSL_get_error, except that a retry OpenSSL is parked on (its rwstate and
 * the BIO's retry flag, which SSL_get_error reads only after the queue) is
 * answered first: an entry left on the queue can then never turn a
 * WANT_READ/WANT_WRITE into a failed connection, only reword a real one. */
static inline int tb_ssl_error(const SSL *ssl, int rc) {
  int se;
  if (rc <= 0) {
    int w = SSL_want(ssl);
    BIO *b = w == SSL_READING ? SSL_get_rbio(ssl) : w == SSL_WRITING ? SSL_get_wbio(ssl) : NULL;
    if (b && BIO_should_read(b))
      return SSL_ERROR_WANT_READ;
    if (b && BIO_should_write(b))
      return SSL_ERROR_WANT_WRITE;
  }
  se = SSL_get_error(ssl, rc);
  /* The peer's close_notify after its TLS 1.3 user_canceled (SunJSSE's
   * SSLSocket.close() sends both): OpenSSL 3.5 and 4.0 keep user_canceled
   * as the last warning alert, and SSL_get_error then calls the close a
   * SYSCALL failure with nothing on the queue. */
  if (se == SSL_ERROR_SYSCALL && rc <= 0 && (SSL_get_shutdown(ssl) & SSL_RECEIVED_SHUTDOWN) &&
      ERR_peek_error() == 0)
    return SSL_ERROR_ZERO_RETURN;
  return se;
}

/* bio_buffer.c */
int tb_bio_init(void);
BIO *tb_bio_new(tb_io *io);
size_t tb_io_drain_records(tb_io *io);
int tb_io_unwrite(tb_io *io, size_t n);
void tb_io_free(tb_io *io);

/* record.c: 1 complete record of *len bytes, 0 incomplete, -1 not a TLS record header. */
int tb_record_scan(const uint8_t *p, size_t avail, size_t *len, int *type);
size_t tb_record_plaintext_bound(size_t body_len);

/* context.c */
TB_API SSL_CTX *tb_ctx_new(tb_error *err);
TB_API void tb_ctx_free(SSL_CTX *ctx);
/* SSLContext.init again: ctx (new) takes prev's session store and ticket
 * keys, as tb_ctx_new installed both. 0, or -1 (OpenSSL's error queue says why). */
TB_API int tb_ctx_share(SSL_CTX *ctx, SSL_CTX *prev);
int tb_engine_ex_index(void);

/* engine.c */
TB_API tb_engine *tb_engine_new(SSL_CTX *ctx, int client, tb_error *err);
TB_API void tb_engine_free(tb_engine *e);
TB_API int tb_engine_wrap(tb_engine *e, const uint8_t *src, size_t srclen,
                          uint8_t *dst, size_t dstcap, tb_result *r);
TB_API int tb_engine_unwrap(tb_engine *e, const uint8_t *src, size_t srclen,
                            uint8_t *dst, size_t dstcap, tb_result *r);
TB_API int tb_engine_task_done(tb_engine *e);
/* The engine fails, with OpenSSL's reason (fail) or a message of ours
 * (fail_msg, which drops OpenSSL's queue): the error is thrown from the
 * call that found it, and both directions are done. */
void tb_engine_fail(tb_engine *e, int kind, const char *what);
void tb_engine_fail_msg(tb_engine *e, int kind, const char *msg);

/* handshake.c */
TB_API int tb_engine_begin(tb_engine *e);
TB_API int tb_engine_hs_status(tb_engine *e, int consume_finished);
TB_API int tb_engine_request_pha(tb_engine *e, int need);
/* key_update.c: a TLS 1.3 KeyUpdate of our own, written at once (request_peer:
 * the peer must update its keys too). 0, or -1 with e->err set; when the
 * KeyUpdate could not be sent, the engine is also failed (TB_F_FAILED). */
int tb_key_update(tb_engine *e, int request_peer);
/* The byte limits per write key for AES-GCM and ChaCha20-Poly1305 suites
 * (jdk.tls.keyLimits; 0 for none), set before the handshake. */
TB_API void tb_key_limits(tb_engine *e, uint64_t aes_gcm, uint64_t chacha20);
/* The handshake is done: the negotiated cipher's limit applies (TLS 1.3 only). */
void tb_key_limit_start(tb_engine *e);
/* A write of n bytes would take the key past its limit (n > e->key_left):
 * re-keys first when the key is spent. How many bytes the next write may
 * take (at most n), or 0 when the KeyUpdate failed (e->err says why) or
 * waits in the engine's queue. */
size_t tb_key_budget(tb_engine *e, size_t n);
TB_API void tb_engine_set_verify_result(tb_engine *e, int ok, int x509_err);
int tb_hs_step(tb_engine *e);

/* close.c */
TB_API void tb_engine_close_outbound(tb_engine *e);
TB_API int tb_engine_close_inbound(tb_engine *e);
void tb_queue_close_notify(tb_engine *e);
/* Outbound is done (close_notify wrapped out, nothing queued): lets go of
 * what only writing or handshaking needed. Inbound may still be read. */
void tb_shed_closed_out(tb_engine *e);

static inline tb_engine *tb_engine_of(const SSL *ssl) {
  return (tb_engine *)SSL_get_ex_data(ssl, tb_engine_ex_index());
}
static inline int tb_outbound_done(const tb_engine *e) {
  return (e->flags & TB_F_OUT_CLOSING) && e->io.spill_len == 0;
}

/* callbacks.c: installed on every context, acting on one engine at a time */
typedef struct tb_hooks {
  /* Synchronous peer-chain check (leaf first) for servers: 1 trusted, else 0
   * with *x509_err set. Runs inside the OpenSSL call, on the caller's thread. */
  int (*verify_peer)(tb_engine *e, STACK_OF(X509) *chain, int *x509_err);
} tb_hooks;
TB_API void tb_set_hooks(const tb_hooks *h);
void tb_install_callbacks(SSL_CTX *ctx);

/* extensions.c: ClientHello inspection, ALPN, OCSP stapling */
void tb_install_extensions(SSL_CTX *ctx);
/* Server: protocols it accepts (wire format, copied). Client: protocols it offers. */
int tb_set_alpn(tb_engine *e, const unsigned char *wire, size_t len);
void tb_extensions_free(tb_engine *e);

/* groups.c: key-exchange groups */
/* The group this handshake's key exchange used, as OpenSSL names it (its
 * TLS name: "x25519", "X25519MLKEM768", ...), or NULL: none yet, a resumed
 * TLS 1.2 session (no key exchange), a TLS 1.2 RSA or DHE suite. *nid gets
 * OpenSSL's id for it (0 with NULL). */
const char *tb_negotiated_group(SSL *ssl, int *nid);
/* Whether this OpenSSL implements a group, by a name SSL_set1_groups_list takes. */
int tb_group_supported(SSL_CTX *scratch, const char *name);

/* time */
uint64_t tb_now_ns(void);

#endif
