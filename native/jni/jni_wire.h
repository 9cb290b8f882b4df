/*
 * How the JNI layer packs numbers for Java beyond the core's enums: the
 * result of a wrap/unwrap and the engine state, each in one integer, and the
 * mode and flag arguments Java passes in. Java decodes them with the
 * same-named fields of NativeConstants.java; jni_constants.c exports these
 * names so the loader refuses a library that disagrees.
 */
#ifndef TB_JNI_WIRE_H
#define TB_JNI_WIRE_H

/* wrap/unwrap result (a jlong): consumed in bits 0-28, produced in 29-57,
 * status 58-59, handshake status 60-62, tb_result.idle_in in 63. */
#define TB_RES_LEN_BITS 29
#define TB_RES_STATUS_SHIFT 58
#define TB_RES_STATUS_MASK 3
#define TB_RES_HS_SHIFT 60
#define TB_RES_HS_MASK 7
#define TB_RES_IDLE_SHIFT 63

/* Engine state (a jint): handshake status in bits 0-2, task in 8-10, and flags. */
#define TB_ST_HS_MASK 7
#define TB_ST_IN_DONE (1 << 3)
#define TB_ST_OUT_DONE (1 << 4)
#define TB_ST_HS_DONE (1 << 5)
#define TB_ST_FAILED (1 << 6)
#define TB_ST_STARTED (1 << 7)
#define TB_ST_TASK_SHIFT 8
#define TB_ST_TASK_MASK 7
#define TB_ST_PEER_CLOSED (1 << 11)
#define TB_ST_PHA (1 << 12)

/* configure(): client authentication a server asks for. */
#define TB_AUTH_NONE 0
#define TB_AUTH_WANT 1
#define TB_AUTH_NEED 2

/* configureExtensions() flags: the ClientHello goes to a Java task (server);
 * request an OCSP staple (client). */
#define TB_EXT_HELLO_TASK 1
#define TB_EXT_OCSP 2
#define TB_EXT_CLIENT_FIRST 4

/* sessionFacts(): what a session reports, in one byte array. A fixed
 * header (flags byte, SSL_version and cipher id as u16, session time in ms,
 * local key handle and the group's NID as big-endian integers) and then
 * length-prefixed (u32) fields in TB_SF_* order: protocol name, cipher name,
 * session id, origin token, group name, SNI as sent, selected ALPN, the
 * peer's certificate signature schemes (u16 each), OCSP staple. */
#define TB_SF_REUSED 1
#define TB_SF_PEER_CERT 2
#define TB_SF_ORIGIN 4
/* where each header value starts (Java reads them by these offsets) */
#define TB_SF_AT_VERSION 1
#define TB_SF_AT_SUITE 3
#define TB_SF_AT_TIME 5
#define TB_SF_AT_KEY 13
#define TB_SF_AT_GROUP 21
#define TB_SF_HEADER 25
/* the fields' order after the header */
#define TB_SF_F_PROTOCOL 0
#define TB_SF_F_SUITE 1
#define TB_SF_F_ID 2
#define TB_SF_F_ORIGIN 3
#define TB_SF_F_GROUP 4
#define TB_SF_F_SNI 5
#define TB_SF_F_ALPN 6
#define TB_SF_F_SCHEMES 7
#define TB_SF_F_OCSP 8
#define TB_SF_FIELDS 9

#endif
