/* family: every allocator entry point, plus the realloc edge cases.
 * Counting rules (valgrind's): every call returning a new block is one
 * alloc of the requested size; realloc/reallocarray of a non-NULL pointer
 * to a non-zero size is 1 alloc + 1 free; free(NULL) counts nothing. */
#include "tp.h"
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

static unsigned long A, F, B, LC, LB;
#define ALLOC(n) (A++, B += (n))
#define FREE() (F++)

int main(void)
{
    void *p, *q, *r;

    p = malloc(10); ALLOC(10);
    free(p); FREE();

    p = malloc(0); ALLOC(0);            /* malloc(0) returns a unique block */
    free(p); FREE();

    p = calloc(3, 7); ALLOC(21);
    free(p); FREE();

    free(NULL);                          /* no-op: not a free */

    p = realloc(NULL, 50); ALLOC(50);    /* realloc(NULL,n) == malloc(n) */
    p = realloc(p, 200); ALLOC(200); FREE();   /* grow */
    p = realloc(p, 20); ALLOC(20); FREE();     /* shrink (in place natively) */
    free(p); FREE();

    /* a realloc that must move: a blocker sits right after the block */
    p = malloc(64); ALLOC(64);
    q = malloc(64); ALLOC(64);
    r = realloc(p, 100000); ALLOC(100000); FREE();
    if (r == p) tp_out("realloc did not move\n");
    free(q); FREE();
    free(r); FREE();

    /* realloc(p, 0) with p != NULL: see REALLOC0 below */
    p = malloc(40); ALLOC(40);
#ifndef NO_REALLOC0
    q = realloc(p, 0);
    /* glibc: frees p and returns NULL -> 1 free, no new block */
    FREE();
    if (q) { free(q); tp_out("realloc(p,0) returned a block\n"); }
#else
    free(p); FREE();
#endif

    p = reallocarray(NULL, 4, 25); ALLOC(100);
    p = reallocarray(p, 8, 25); ALLOC(200); FREE();
    free(p); FREE();

    if (posix_memalign(&p, 64, 200) != 0) return 2;
    ALLOC(200);
    if ((uintptr_t)p % 64) return 3;
    free(p); FREE();

    p = aligned_alloc(128, 256); ALLOC(256);
    if ((uintptr_t)p % 128) return 3;
    free(p); FREE();

    p = memalign(32, 100); ALLOC(100);
    tp_out("usable>=100: %d\n", malloc_usable_size(p) >= 100);
    free(p); FREE();

    p = valloc(100); ALLOC(100);
    if ((uintptr_t)p % 4096) return 3;
    free(p); FREE();

    /* pvalloc rounds the request up to a whole page: the block *is* 4096
     * bytes (that is its documented semantics), and valgrind records 4096 */
#ifndef NO_PVALLOC
    /* valgrind 3.19 does not implement pvalloc (memcheck aborts the program
     * with "Program aborting because of call to pvalloc"), so the valgrind
     * oracle runs a -DNO_PVALLOC build; the full build is checked against
     * this program's own figures. */
    p = pvalloc(100); ALLOC(4096);
    free(p); FREE();
#endif

    /* leaks: one of each kind */
    void *l1 = malloc(11); ALLOC(11); LC++; LB += 11;
    void *l2 = calloc(2, 13); ALLOC(26); LC++; LB += 26;
    void *l3 = aligned_alloc(64, 128); ALLOC(128); LC++; LB += 128;
    tp_sink = l1; tp_sink = l2; tp_sink = l3;

    TP_FIGURES(A, F, B, LC, LB);
    return 0;
}
