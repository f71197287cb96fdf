/* xbt/log.h — SimGrid's logging for programs written for SMPI (smpi-rs).
 *
 * Define categories at file scope:
 *   XBT_LOG_NEW_DEFAULT_CATEGORY(app, "My application");      top-level, and the file's default
 *   XBT_LOG_NEW_SUBCATEGORY(app_io, app, "Input/output");     child of app (or of SimGrid's smpi, xbt, ...)
 *   XBT_LOG_NEW_DEFAULT_SUBCATEGORY(app_io, app, "...");       both
 *   XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(app);                    defined in another file
 * and log with XBT_INFO("x=%d", x) (DEBUG, VERB, INFO, WARN, ERROR, CRITICAL) in
 * the default category, or XBT_CINFO(app_io, ...) in a named one.
 *
 * A message is printed (on stderr, in SimGrid's layout:
 * "[host:rank:(pid) time] [app/INFO] x=3") when its priority reaches the
 * category's threshold: its own `smpirun --log=app.thres:debug`, else its
 * nearest ancestor's, else root's (info). */
#ifndef SMPI_RS_XBT_LOG_H
#define SMPI_RS_XBT_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <xbt/base.h>

SG_BEGIN_DECL

typedef enum {
  xbt_log_priority_none = 0,
  xbt_log_priority_trace = 1,
  xbt_log_priority_debug = 2,
  xbt_log_priority_verbose = 3,
  xbt_log_priority_info = 4,
  xbt_log_priority_warning = 5,
  xbt_log_priority_error = 6,
  xbt_log_priority_critical = 7,
  xbt_log_priority_infinite = 8,
  xbt_log_priority_uninitialized = -1
} e_xbt_log_priority_t;

typedef struct xbt_log_category_s s_xbt_log_category_t;
typedef s_xbt_log_category_t* xbt_log_category_t;

/* A category. Do not touch its fields: smpirun resolves `threshold` at the
 * first message (-1 until then). */
struct xbt_log_category_s {
  xbt_log_category_t parent;
  const char* name;
  const char* description;
  int threshold;
};

/* The variable holding category `cat`. */
#define _XBT_LOGV(cat) _XBT_CONCAT(_simgrid_log_category__, cat)
#define XBT_LOG_ROOT_CAT root

#define XBT_LOG_EXTERNAL_CATEGORY(cname) extern s_xbt_log_category_t _XBT_LOGV(cname)

#define XBT_LOG_NEW_SUBCATEGORY_helper(cname, parent, desc)                                                            \
  XBT_LOG_EXTERNAL_CATEGORY(parent);                                                                                   \
  s_xbt_log_category_t _XBT_LOGV(cname) = {&_XBT_LOGV(parent), #cname, (desc), xbt_log_priority_uninitialized}

#define XBT_LOG_NEW_SUBCATEGORY(cname, parent, desc) XBT_LOG_NEW_SUBCATEGORY_helper(cname, parent, (desc))
#define XBT_LOG_NEW_CATEGORY(cname, desc) XBT_LOG_NEW_SUBCATEGORY_helper(cname, XBT_LOG_ROOT_CAT, (desc))

#define XBT_LOG_DEFAULT_CATEGORY(cname)                                                                                \
  XBT_ATTRIB_UNUSED static xbt_log_category_t _XBT_LOGV(default) = &_XBT_LOGV(cname)

#define XBT_LOG_NEW_DEFAULT_CATEGORY(cname, desc)                                                                      \
  XBT_LOG_NEW_CATEGORY(cname, (desc));                                                                                 \
  XBT_LOG_DEFAULT_CATEGORY(cname)

#define XBT_LOG_NEW_DEFAULT_SUBCATEGORY(cname, parent, desc)                                                           \
  XBT_LOG_NEW_SUBCATEGORY(cname, parent, (desc));                                                                      \
  XBT_LOG_DEFAULT_CATEGORY(cname)

#define XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(cname)                                                                       \
  XBT_LOG_EXTERNAL_CATEGORY(cname);                                                                                    \
  XBT_LOG_DEFAULT_CATEGORY(cname)

XBT_LOG_EXTERNAL_CATEGORY(XBT_LOG_ROOT_CAT);

/* Implemented by smpirun: resolve (and cache) a category's threshold; print
 * a formatted message. */
int _xbt_log_cat_init(xbt_log_category_t category);
void _xbt_log_emit(xbt_log_category_t category, int priority, const char* file, int line, const char* message);

/* Formats `fmt` into `small` (of `n` bytes), or into a malloc'ed buffer when
 * it does not fit (the caller frees it when the result is not `small`). */
static inline char* _xbt_log_vformat(char* small, size_t n, const char* fmt, va_list ap)
{
  va_list again;
  va_copy(again, ap);
  int len = vsnprintf(small, n, fmt, ap);
  if (len < 0) {
    va_end(again);
    snprintf(small, n, "(bad format string: %s)", fmt);
    return small;
  }
  if ((size_t)len < n) {
    va_end(again);
    return small;
  }
  char* big = (char*)malloc((size_t)len + 1);
  if (big == NULL) {
    va_end(again);
    return small; /* truncated, better than nothing */
  }
  vsnprintf(big, (size_t)len + 1, fmt, again);
  va_end(again);
  return big;
}

static inline void _xbt_log_printf(xbt_log_category_t category, int priority, const char* file, int line,
                                   const char* fmt, ...) XBT_ATTRIB_PRINTF(5, 6);
static inline void _xbt_log_printf(xbt_log_category_t category, int priority, const char* file, int line,
                                   const char* fmt, ...)
{
  char small[1024];
  va_list ap;
  va_start(ap, fmt);
  char* text = _xbt_log_vformat(small, sizeof small, fmt, ap);
  va_end(ap);
  _xbt_log_emit(category, priority, file, line, text);
  if (text != small)
    free(text);
}

/* Whether a message of `priority` in category variable `catv` is printed. */
#define _XBT_LOG_ISENABLEDV(catv, priority)                                                                            \
  ((int)(priority) >= ((catv).threshold >= 0 ? (catv).threshold : _xbt_log_cat_init(&(catv))))
#define XBT_LOG_ISENABLED(cname, priority) _XBT_LOG_ISENABLEDV(_XBT_LOGV(cname), (priority))

#define XBT_CLOG(catv, priority, ...)                                                                                  \
  do {                                                                                                                 \
    if (_XBT_LOG_ISENABLEDV((catv), (priority)))                                                                       \
      _xbt_log_printf(&(catv), (priority), __FILE__, __LINE__, __VA_ARGS__);                                           \
  } while (0)
#define XBT_LOG(priority, ...) XBT_CLOG(*_XBT_LOGV(default), (priority), __VA_ARGS__)

#define XBT_CDEBUG(cname, ...) XBT_CLOG(_XBT_LOGV(cname), xbt_log_priority_debug, __VA_ARGS__)
#define XBT_CVERB(cname, ...) XBT_CLOG(_XBT_LOGV(cname), xbt_log_priority_verbose, __VA_ARGS__)
#define XBT_CINFO(cname, ...) XBT_CLOG(_XBT_LOGV(cname), xbt_log_priority_info, __VA_ARGS__)
#define XBT_CWARN(cname, ...) XBT_CLOG(_XBT_LOGV(cname), xbt_log_priority_warning, __VA_ARGS__)
#define XBT_CERROR(cname, ...) XBT_CLOG(_XBT_LOGV(cname), xbt_log_priority_error, __VA_ARGS__)
#define XBT_CCRITICAL(cname, ...) XBT_CLOG(_XBT_LOGV(cname), xbt_log_priority_critical, __VA_ARGS__)

#define XBT_DEBUG(...) XBT_LOG(xbt_log_priority_debug, __VA_ARGS__)
#define XBT_VERB(...) XBT_LOG(xbt_log_priority_verbose, __VA_ARGS__)
#define XBT_INFO(...) XBT_LOG(xbt_log_priority_info, __VA_ARGS__)
#define XBT_WARN(...) XBT_LOG(xbt_log_priority_warning, __VA_ARGS__)
#define XBT_ERROR(...) XBT_LOG(xbt_log_priority_error, __VA_ARGS__)
#define XBT_CRITICAL(...) XBT_LOG(xbt_log_priority_critical, __VA_ARGS__)

SG_END_DECL

#endif /* SMPI_RS_XBT_LOG_H */
