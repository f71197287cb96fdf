/* xbt/asserts.h — SimGrid's assertions for programs written for SMPI (smpi-rs).
 *
 *   xbt_assert(cond);                      "Assertion cond failed"
 *   xbt_assert(cond, "fmt", args...);      the formatted message
 *   xbt_die("fmt", args...);               always
 *   xbt_abort();                           always, without a message
 *
 * A failure prints a root/CRITICAL log line and ends the whole run as a
 * failure of the calling rank, with exit status 134 (SimGrid aborts).
 * Never disabled, not even with NDEBUG: a condition with side effects is fine. */
#ifndef SMPI_RS_XBT_ASSERTS_H
#define SMPI_RS_XBT_ASSERTS_H

#include <xbt/base.h>
#include <xbt/log.h>

SG_BEGIN_DECL

XBT_ATTRIB_NORETURN void xbt_abort(void);
XBT_ATTRIB_NORETURN void _xbt_assert_failed(const char* file, int line, const char* message);
XBT_ATTRIB_NORETURN void _xbt_die_at(const char* file, int line, const char* message);

static inline XBT_ATTRIB_NORETURN void _xbt_assert_printf(const char* file, int line, const char* fmt, ...)
    XBT_ATTRIB_PRINTF(3, 4);
static inline XBT_ATTRIB_NORETURN void _xbt_assert_printf(const char* file, int line, const char* fmt, ...)
{
  char small[1024];
  va_list ap;
  va_start(ap, fmt);
  char* text = _xbt_log_vformat(small, sizeof small, fmt, ap);
  va_end(ap);
  _xbt_assert_failed(file, line, text);
}

static inline XBT_ATTRIB_NORETURN void _xbt_die_printf(const char* file, int line, const char* fmt, ...)
    XBT_ATTRIB_PRINTF(3, 4);
static inline XBT_ATTRIB_NORETURN void _xbt_die_printf(const char* file, int line, const char* fmt, ...)
{
  char small[1024];
  va_list ap;
  va_start(ap, fmt);
  char* text = _xbt_log_vformat(small, sizeof small, fmt, ap);
  va_end(ap);
  _xbt_die_at(file, line, text);
}

#define xbt_die(...) _xbt_die_printf(__FILE__, __LINE__, __VA_ARGS__)

#define xbt_assert(...) _XBT_IF_ONE_ARG(_xbt_assert_ARG1, _xbt_assert_ARGN, __VA_ARGS__)(__VA_ARGS__)
#define _xbt_assert_ARG1(cond) _xbt_assert_ARGN((cond), "Assertion %s failed", #cond)
#define _xbt_assert_ARGN(cond, ...)                                                                                    \
  do {                                                                                                                 \
    if (!(cond))                                                                                                       \
      _xbt_assert_printf(__FILE__, __LINE__, __VA_ARGS__);                                                             \
  } while (0)

SG_END_DECL

#endif /* SMPI_RS_XBT_ASSERTS_H */
