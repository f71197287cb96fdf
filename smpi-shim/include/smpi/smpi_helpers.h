/* smpi/smpi_helpers.h — force-included by smpicc and smpicxx in every C and C++ file.
 * Routes a few libc calls to the simulator:
 *  - sleep/usleep/nanosleep become simulated sleeps;
 *  - gettimeofday/clock_gettime read the simulated clock;
 *  - exit ends the calling rank (not the whole simulation, unless the code is non-zero);
 *  - malloc/calloc/realloc/free go through the shared-malloc interceptor, which
 *    folds allocations above --cfg=smpi/auto-shared-malloc-thresh (off by default).
 * Define SMPI_NO_OVERRIDE_MALLOC (or SMPI_NO_HELPERS for all of it) to opt out. */
#ifndef SMPI_RS_HELPERS_H
#define SMPI_RS_HELPERS_H
#ifndef SMPI_NO_HELPERS

#include <stdlib.h>
#include <unistd.h>
#include <time.h>
#include <sys/time.h>

#ifdef __cplusplus
extern "C" {
#endif
unsigned int smpi_sleep(unsigned int seconds);
int smpi_usleep(useconds_t usec);
int smpi_nanosleep(const struct timespec *req, struct timespec *rem);
int smpi_gettimeofday(struct timeval *tv, void *tz);
int smpi_clock_gettime(clockid_t clk, struct timespec *tp);
void smpi_exit(int code) __attribute__((noreturn));
void *smpi_auto_malloc(size_t size);
void *smpi_auto_calloc(size_t n, size_t size);
void *smpi_auto_realloc(void *p, size_t size);
void smpi_auto_free(void *p);
#ifdef __cplusplus
}
/* The macros below also rewrite qualified calls (std::exit(0) becomes
 * std::smpi_exit(0)): make the replacements visible in std as well. */
namespace std {
using ::smpi_auto_calloc;
using ::smpi_auto_free;
using ::smpi_auto_malloc;
using ::smpi_auto_realloc;
using ::smpi_exit;
using ::smpi_nanosleep;
} // namespace std
#endif

#define sleep(s) smpi_sleep(s)
#define usleep(u) smpi_usleep(u)
#define nanosleep(r, m) smpi_nanosleep(r, m)
#define gettimeofday(t, z) smpi_gettimeofday(t, z)
#define clock_gettime(c, t) smpi_clock_gettime(c, t)
#define exit(c) smpi_exit(c)

#ifndef SMPI_NO_OVERRIDE_MALLOC
#define malloc(s) smpi_auto_malloc(s)
#define calloc(n, s) smpi_auto_calloc(n, s)
#define realloc(p, s) smpi_auto_realloc(p, s)
#define free(p) smpi_auto_free(p)
#endif

#endif /* SMPI_NO_HELPERS */
#endif /* SMPI_RS_HELPERS_H */
