/* test_names.c - the analyses' table of names: dense ids, one per distinct string, strings that stay put as it grows */
#include <stdlib.h>

#include "check.h"
#include "analysis/names.h"

int main(void)
{
	struct hs_names t = { 0 };
	enum { N = 50000 };
	const char **first = calloc(N, sizeof(*first));
	char s[64], *big = malloc(200001);
	uint32_t id, again, empty_id, big_id;
	int dense = 1, same = 1, stable = 1, text = 1;

	if (!first || !big)
		return 1;
	/* enough names for the map to grow many times and the strings to fill several blocks */
	for (uint32_t i = 0; i < N; i++) {
		snprintf(s, sizeof(s), "frame_%u  file_%u.c:%u", i, i % 97, i * 7);
		if (hs_names_intern(&t, s, &id) < 0)
			return 1;
		dense &= id == i;
		first[i] = hs_names_str(&t, id);
	}
	CHECK("dense-ids", dense);
	CHECK("count", t.n == N);
	for (uint32_t i = 0; i < N; i += 7) {
		snprintf(s, sizeof(s), "frame_%u  file_%u.c:%u", i, i % 97, i * 7);
		if (hs_names_intern(&t, s, &again) < 0)
			return 1;
		same &= again == i;
		stable &= hs_names_str(&t, i) == first[i];
		text &= !strcmp(hs_names_str(&t, i), s);
	}
	CHECK("same-string-same-id", same);
	CHECK("no-new-ids-for-old-strings", t.n == N);
	CHECK("strings-stay-put", stable);
	CHECK("strings-kept-whole", text);

	/* a name longer than a block, then one that must not land inside it */
	memset(big, 'x', 200000);
	big[200000] = 0;
	CHECK("long-name", hs_names_intern(&t, big, &big_id) == 0 && big_id == N &&
				   strlen(hs_names_str(&t, big_id)) == 200000);
	CHECK("after-long-name", hs_names_intern(&t, "after", &id) == 0 && id == N + 1 &&
					 !strcmp(hs_names_str(&t, big_id), big) &&
					 !strcmp(hs_names_str(&t, id), "after"));
	CHECK("empty-name", hs_names_intern(&t, "", &empty_id) == 0 && !*hs_names_str(&t, empty_id) &&
				    hs_names_intern(&t, "", &again) == 0 && again == empty_id);
	/* prefixes and near-misses are other names */
	CHECK("prefix-is-other", hs_names_intern(&t, "frame_1", &id) == 0 && id == empty_id + 1);

	hs_names_free(&t);
	CHECK("free-empties", t.n == 0 && !t.of && !t.map && !t.blocks);
	CHECK("reuse-after-free", hs_names_intern(&t, "again", &id) == 0 && id == 0);
	hs_names_free(&t);
	free(first);
	free(big);
	return check_failures != 0;
}
