// Counts heap allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign) of a
// program run with LD_PRELOAD=libmalloc_count.so, for Scripts/bench's allocations-per-step figure.
//
// - A program that looks up `malloc_count` (dlsym) reads the running count, to count a span of
//   its own work (refreshd-bench layers: the steady state of a simulated year, per run);
// - with MALLOC_COUNT_OUT=PATH, "PID COUNT" is appended to PATH at exit (refreshd simulate; a
//   child it runs appends a line of its own).
//
// The allocations are glibc's own (__libc_*): only the calls are counted, nothing else changes.
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static _Atomic unsigned long long count;

static inline void counted(void) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); }

void *malloc(size_t size) { counted(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { counted(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { counted(); return __libc_realloc(p, size); }
void *memalign(size_t alignment, size_t size) { counted(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { counted(); return __libc_memalign(alignment, size); }

int posix_memalign(void **out, size_t alignment, size_t size) {
    counted();
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *p = __libc_memalign(alignment, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

/// The allocations counted so far.
unsigned long long malloc_count(void) { return atomic_load_explicit(&count, memory_order_relaxed); }

__attribute__((destructor)) static void report(void) {
    const char *path = getenv("MALLOC_COUNT_OUT");
    if (!path) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "%ld %llu\n", (long)getpid(), malloc_count());
    fclose(f);
}
