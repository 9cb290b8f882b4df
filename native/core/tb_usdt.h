/*
 * Header-only USDT (SystemTap SDT v3 note) probe sites with is-enabled
 * semaphores, so tools that read ".note.stapsdt" (libbpf, bpftrace, perf,
 * readelf -n) find our probes without sys/sdt.h at build time.
 *
 * Why each piece is there:
 *  - The probe site is a 5-byte nop (0f 1f 44 00 00). The kernel can turn a
 *    uprobe on that exact instruction into a jump (no trap, no single-step),
 *    about 1.4 us per hit here instead of 6-21 us, and that works with any
 *    libbpf since the kernel chooses it, not the loader.
 *  - Every site has a 16-bit semaphore in ".probes". The kernel increments it
 *    while a uprobe with ref_ctr_offset is attached, so TB_USDT_ENABLED() is a
 *    load and a not-taken branch when nobody listens and the argument set-up
 *    (clock reads, cipher look-ups) is skipped entirely.
 *  - Arguments are forced into registers ("r") and described as 8@%reg: the
 *    one form every USDT consumer parses; no RIP-relative or symbolic operand
 *    can appear.
 *  - ".stapsdt.base" lets consumers correct for prelinking; one shared copy
 *    per object through a COMDAT group.
 *
 * Define TB_NO_USDT to compile every site away (non-ELF or exotic targets).
 */
#ifndef TB_USDT_H
#define TB_USDT_H

#if !defined(TB_NO_USDT) && defined(__ELF__) && (defined(__x86_64__) || defined(__aarch64__))
#define TB_USDT_ON 1
#else
#define TB_USDT_ON 0
#endif

#if TB_USDT_ON

#if defined(__x86_64__)
#define TB_USDT_NOP_ ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
#define TB_USDT_ADDR_ ".8byte"
#else
#define TB_USDT_NOP_ "nop\n"
#define TB_USDT_ADDR_ ".8byte"
#endif

#define TB_USDT_SEMA_(prov, name) prov##_##name##_semaphore
#define TB_USDT_STR_(x) #x
#define TB_USDT_XSTR_(x) TB_USDT_STR_(x)

/* Declares (and, weakly, defines) the semaphore of one probe. Put it once at
 * file scope in each translation unit that fires or checks the probe. */
#define TB_USDT_SEMAPHORE(prov, name)                                                   \
  __attribute__((weak, used, section(".probes"), visibility("hidden")))             \
  volatile unsigned short TB_USDT_SEMA_(prov, name)

/* Non-zero while at least one tracer is attached to prov:name. */
#define TB_USDT_ENABLED(prov, name) __builtin_expect(TB_USDT_SEMA_(prov, name) != 0, 0)

#define TB_USDT_BASE_                                                                   \
  ".ifndef _.stapsdt.base\n"                                                            \
  ".pushsection .stapsdt.base, \"aG\", @progbits, .stapsdt.base, comdat\n"              \
  ".weak _.stapsdt.base\n"                                                              \
  ".hidden _.stapsdt.base\n"                                                            \
  "_.stapsdt.base: .space 1\n"                                                          \
  ".size _.stapsdt.base, 1\n"                                                           \
  ".popsection\n"                                                                       \
  ".endif\n"

/* The note: namesz, descsz, type 3, "stapsdt", then pc, base, semaphore and
 * the provider, name and argument strings, 4-byte aligned. */
#define TB_USDT_SITE_(prov, name, args, ...)                                            \
  __asm__ __volatile__(                                                                 \
      "990: " TB_USDT_NOP_                                                              \
      ".pushsection .note.stapsdt, \"\", @note\n"                                       \
      ".balign 4\n"                                                                     \
      ".4byte 992f-991f, 994f-993f, 3\n"                                                \
      "991: .asciz \"stapsdt\"\n"                                                       \
      "992: .balign 4\n"                                                                \
      "993: " TB_USDT_ADDR_ " 990b\n"                                                   \
      TB_USDT_ADDR_ " _.stapsdt.base\n"                                                 \
      TB_USDT_ADDR_ " " TB_USDT_XSTR_(TB_USDT_SEMA_(prov, name)) "\n"                   \
      ".asciz \"" #prov "\"\n"                                                          \
      ".asciz \"" #name "\"\n"                                                          \
      ".asciz \"" args "\"\n"                                                           \
      "994: .balign 4\n"                                                                \
      ".popsection\n" TB_USDT_BASE_ ::__VA_ARGS__)

#define TB_USDT_A_(x) "r"((unsigned long long)(x))

#define TB_USDT1(p, n, a) TB_USDT_SITE_(p, n, "8@%0", TB_USDT_A_(a))
#define TB_USDT2(p, n, a, b) TB_USDT_SITE_(p, n, "8@%0 8@%1", TB_USDT_A_(a), TB_USDT_A_(b))
#define TB_USDT3(p, n, a, b, c)                                                          \
  TB_USDT_SITE_(p, n, "8@%0 8@%1 8@%2", TB_USDT_A_(a), TB_USDT_A_(b), TB_USDT_A_(c))
#define TB_USDT4(p, n, a, b, c, d)                                                       \
  TB_USDT_SITE_(p, n, "8@%0 8@%1 8@%2 8@%3", TB_USDT_A_(a), TB_USDT_A_(b), TB_USDT_A_(c), \
                TB_USDT_A_(d))
#define TB_USDT6(p, n, a, b, c, d, e, f)                                                 \
  TB_USDT_SITE_(p, n, "8@%0 8@%1 8@%2 8@%3 8@%4 8@%5", TB_USDT_A_(a), TB_USDT_A_(b),    \
                TB_USDT_A_(c), TB_USDT_A_(d), TB_USDT_A_(e), TB_USDT_A_(f))
#define TB_USDT8(p, n, a, b, c, d, e, f, g, h)                                           \
  TB_USDT_SITE_(p, n, "8@%0 8@%1 8@%2 8@%3 8@%4 8@%5 8@%6 8@%7", TB_USDT_A_(a),          \
                TB_USDT_A_(b), TB_USDT_A_(c), TB_USDT_A_(d), TB_USDT_A_(e), TB_USDT_A_(f), \
                TB_USDT_A_(g), TB_USDT_A_(h))

#else /* !TB_USDT_ON */

#define TB_USDT_SEMAPHORE(prov, name) extern int tb_usdt_unused_##prov##_##name
#define TB_USDT_ENABLED(prov, name) 0
#define TB_USDT1(p, n, a) ((void)(a))
#define TB_USDT2(p, n, a, b) ((void)(a), (void)(b))
#define TB_USDT3(p, n, a, b, c) ((void)(a), (void)(b), (void)(c))
#define TB_USDT4(p, n, a, b, c, d) ((void)(a), (void)(b), (void)(c), (void)(d))
#define TB_USDT6(p, n, a, b, c, d, e, f)                                                 \
  ((void)(a), (void)(b), (void)(c), (void)(d), (void)(e), (void)(f))
#define TB_USDT8(p, n, a, b, c, d, e, f, g, h)                                           \
  ((void)(a), (void)(b), (void)(c), (void)(d), (void)(e), (void)(f), (void)(g), (void)(h))

#endif
#endif
