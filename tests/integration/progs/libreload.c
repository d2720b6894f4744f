/* libreload: built as libreload_a.so and libreload_b.so with FRAME 200 and 600: the same code layout (both
 * frame sizes need a 32-bit immediate), so the same return addresses, with other unwind rules; libreload_c.so
 * with SHIFT too: all return addresses elsewhere */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(x) __asm__ volatile("" : : "r"(x) : "memory")

#ifdef SHIFT
/* built with SHIFT: 16 bytes of nops open each function, so every return address moves */
#define PAD() __asm__ volatile(".skip 16, 0x90")
#else
#define PAD() ((void)0)
#endif

/* a frame of FRAME bytes around one call: three of them, one inside the next */
#define FRAME_FN(name, call)              \
    NOINLINE static void *name(int n)     \
    {                                     \
        volatile char pad[FRAME];         \
        PAD();                            \
        pad[0] = (char)n;                 \
        void *p = call;                   \
        KEEP(p);                          \
        KEEP(pad);                        \
        return p;                         \
    }

FRAME_FN(leaf, malloc(16 + (size_t)n))
FRAME_FN(mid, leaf(n + 1))
FRAME_FN(top, mid(n + 1))

int work(void)
{
    PAD();
    for (int i = 0; i < 5; i++)
        free(top(i));
    return 0;
}
