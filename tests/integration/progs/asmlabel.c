/* asmlabel.c - allocations from a function written in assembly without a
 * .size, as hand-written assembly often is: libdw names its frames by the
 * closest symbol without a size, and so must every shortcut of ours */
#include <stdlib.h>

void *asm_sizeless_alloc(size_t n);

__asm__(".text\n"
        ".globl asm_sizeless_alloc\n"
        ".type asm_sizeless_alloc, @function\n"
        "asm_sizeless_alloc:\n"
        ".cfi_startproc\n"
        "    sub $8, %rsp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "    call malloc@PLT\n"
        "    add $8, %rsp\n"
        ".cfi_adjust_cfa_offset -8\n"
        "    ret\n"
        ".cfi_endproc\n");

static void *__attribute__((noinline)) sized_static(size_t n)
{
    void *volatile p = malloc(n);
    return p;
}

int main(void)
{
    for (int i = 0; i < 100; i++) {
        void *volatile p = asm_sizeless_alloc(16);
        void *volatile q = sized_static(8);
        free(p);
        free(q);
    }
    return 0;
}
