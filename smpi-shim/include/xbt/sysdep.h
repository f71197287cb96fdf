/* xbt/sysdep.h — SimGrid's checked allocation for programs written for SMPI
 * (smpi-rs): xbt_malloc, xbt_malloc0, xbt_realloc, xbt_strdup, xbt_free and
 * the xbt_new/xbt_new0 macros. An allocation that fails ends the run (as a
 * failed xbt_assert) instead of returning NULL. They use malloc & co, so
 * they go through SMPI's allocation interceptor like the program's own. */
#ifndef SMPI_RS_XBT_SYSDEP_H
#define SMPI_RS_XBT_SYSDEP_H

#include <stdlib.h>
#include <string.h>
#include <xbt/asserts.h>
#include <xbt/base.h>
#include <xbt/log.h>

SG_BEGIN_DECL

static inline char* xbt_strdup(const char* s)
{
  if (s == NULL)
    return NULL;
  size_t n = strlen(s) + 1;
  char* res = (char*)malloc(n);
  xbt_assert(res, "memory allocation error (strdup of %lu bytes failed)", (unsigned long)n);
  memcpy(res, s, n);
  return res;
}

static inline void* xbt_malloc(size_t n)
{
  void* res = malloc(n);
  xbt_assert(res, "Memory allocation of %lu bytes failed", (unsigned long)n);
  return res;
}

static inline void* xbt_malloc0(size_t n)
{
  void* res = calloc(n, 1);
  xbt_assert(res, "Memory callocation of %lu bytes failed", (unsigned long)n);
  return res;
}

/* realloc(p, 0) frees p and returns NULL; realloc(NULL, s) allocates. */
static inline void* xbt_realloc(void* p, size_t s)
{
  if (s == 0) {
    free(p);
    return NULL;
  }
  if (p == NULL)
    return xbt_malloc(s);
  void* res = realloc(p, s);
  xbt_assert(res, "memory (re)allocation of %lu bytes failed", (unsigned long)s);
  return res;
}

#define xbt_free(p) free(p)

/* As functions, for use as callbacks. */
static inline void xbt_free_f(void* p) { free(p); }
static inline void xbt_free_ref(void* d) { free(*(void**)d); }

SG_END_DECL

#define xbt_new(type, count) ((type*)xbt_malloc(sizeof(type) * (count)))
#define xbt_new0(type, count) ((type*)xbt_malloc0(sizeof(type) * (count)))

#endif /* SMPI_RS_XBT_SYSDEP_H */
