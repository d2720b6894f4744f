// newer.cpp - C++ allocations through operator new, whose site must be the user function, for tests/analysis/run.sh
#include <string>
#include <vector>

#define NOINLINE __attribute__((noinline))

static std::vector<int *> kept;

NOINLINE static void cxx_site()
{
	for (int i = 0; i < 10; i++)
		kept.push_back(new int[4]);
}

int main()
{
	kept.reserve(16);
	cxx_site();
	return 0;
}
