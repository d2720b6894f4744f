/* rebuilt: leaks one block of 123 bytes from leak_site(). Built again with
 * -DOTHER it is another build (other code, another build-id) at the same
 * path: a trace of the first must not take the second's names and lines. */
#include "tp.h"
#include <stdlib.h>

#ifdef OTHER
int other_function(int x) { return x * 7 + 3; }
#endif

__attribute__((noinline)) static void leak_site(void)
{
    tp_sink = malloc(123); /* HS-REBUILT-LEAK */
}

int main(void)
{
    leak_site();
    return 0;
}
