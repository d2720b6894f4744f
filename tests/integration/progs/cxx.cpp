// cxx: operator new/delete, new[]/delete[], std::vector growth, and a
// leaked `new` made inside ns::Widget::make() (distinctive demangled name).
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <vector>

namespace ns {
struct Widget {
    char payload[120];
    __attribute__((noinline)) static void *make();
};
void *Widget::make()
{
    return new Widget(); // HS-CXX-LEAK-SITE
}
} // namespace ns

static void *volatile sink;

int main()
{
    for (int i = 0; i < 5; i++) {
        int *p = new int(i);
        sink = p;
        delete p;
    }
    for (int i = 0; i < 3; i++) {
        double *a = new double[100 + i];
        sink = a;
        delete[] a;
    }
    {
        std::vector<long> v;
        for (long i = 0; i < 1000; i++) v.push_back(i);  // 11 growths
        sink = v.data();
    }
    sink = ns::Widget::make();  // leaked: 120 bytes
    char buf[64];
    int n = snprintf(buf, sizeof buf, "cxx done\n");
    if (write(1, buf, (size_t)n) < 0) return 1;
    return 0;
}
