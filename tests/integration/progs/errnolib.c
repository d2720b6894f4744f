/* errnolib: a library that allocates and frees for errnokeep */
#include <stdlib.h>

void *errnolib_alloc(int n) { return malloc((size_t)n); }
void errnolib_free(void *p) { free(p); }
