/* xbt/base.h — the small macros SimGrid's C headers are written with
 * (declaration blocks, attributes, token pasting), for programs written for
 * SMPI. Part of smpi-rs: only what our xbt/ and simgrid/ headers implement. */
#ifndef SMPI_RS_XBT_BASE_H
#define SMPI_RS_XBT_BASE_H

#ifdef __cplusplus
#define SG_BEGIN_DECL extern "C" {
#define SG_END_DECL }
#else
#define SG_BEGIN_DECL
#define SG_END_DECL
#endif

/* Symbols come from smpirun: nothing to import or export explicitly. */
#define XBT_PUBLIC
#define XBT_EXPORT_NO_IMPORT
#define XBT_PUBLIC_DATA extern
#define XBT_PRIVATE __attribute__((visibility("hidden")))

#define XBT_ATTRIB_NORETURN __attribute__((noreturn))
#define XBT_ATTRIB_UNUSED __attribute__((unused))
#define XBT_ATTRIB_PRINTF(format_idx, arg_idx) __attribute__((format(printf, (format_idx), (arg_idx))))
#define XBT_ATTRIB_CONSTRUCTOR(prio) __attribute__((constructor(prio)))
#define XBT_ATTRIB_DESTRUCTOR(prio) __attribute__((destructor(prio)))
#define XBT_ALWAYS_INLINE inline __attribute__((always_inline))

#define _XBT_GNUC_UNUSED XBT_ATTRIB_UNUSED
#define XBT_INLINE inline

/* Token pasting and stringification, through a level of expansion where the
 * name says so (CONCAT2..4). */
#define _XBT_STRINGIFY(a) #a
#define _XBT_CONCAT(a, b) a##b
#define _XBT_CONCAT2(a, b) _XBT_CONCAT(a, b)
#define _XBT_CONCAT3(a, b, c) _XBT_CONCAT2(_XBT_CONCAT2(a, b), c)
#define _XBT_CONCAT4(a, b, c, d) _XBT_CONCAT2(_XBT_CONCAT3(a, b, c), d)

/* _XBT_IF_ONE_ARG(one, many, args...): `one` when given a single argument,
 * else `many` (up to 32 arguments). */
#define _XBT_IF_ONE_ARG(one, many, ...)                                                                                \
  _XBT_PICK_33(__VA_ARGS__, many, many, many, many, many, many, many, many, many, many, many, many, many, many, many,  \
               many, many, many, many, many, many, many, many, many, many, many, many, many, many, many, many, one,     \
               _xbt_no_argument)
#define _XBT_PICK_33(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21,    \
                     a22, a23, a24, a25, a26, a27, a28, a29, a30, a31, a32, N, ...)                                    \
  N

#endif /* SMPI_RS_XBT_BASE_H */
