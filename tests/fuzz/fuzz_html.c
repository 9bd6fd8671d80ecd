/* libFuzzer harness of the HTML page's reader of the report JSON
 * (src/output/html_bound.c), checked against the strict JSON checker
 * (json_check.h): a document the checker takes whole (256 levels deep at
 * most; html_bound takes 512), one object, is never refused, a refused one is never written
 * to, and what is written (the bounded report, the cuts) is valid JSON
 * whenever the input was. Limits scaled down (1/1000: a few elements and
 * bytes per array) so that small inputs get cut; a few task seqs named.
 * Seeds: the JSON files of tests/data/html and tests/integ/data. Build and run:
 * `make fuzz`, `make fuzz-run` (README, "Fuzzing"). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "json_check.h"
#include "output/html_bound.h"
#include "util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t keep[] = { 1, 2, 3, 5, 8, 13 };
	const char *json = (const char *)data;
	char *doc = NULL, *cuts = NULL;
	size_t dl = 0, cl = 0, i = 0;
	FILE *d = open_memstream(&doc, &dl), *c = open_memstream(&cuts, &cl);
	struct json_writer *w = c ? json_writer__new(c, false) : NULL;
	struct html_bound_opts o = { .keep = keep, .n_keep = 6, .scale = 0.001 };
	const char *why;
	bool valid, object;
	int err;

	if (!d || !w)
		abort();
	valid = !json_check(json, size, NULL);
	while (i < size && (json[i] == ' ' || json[i] == '\t' || json[i] == '\n' || json[i] == '\r'))
		i++;
	object = valid && i < size && json[i] == '{';
	err = html_bound(d, json, size, &o, w);
	if (!err)
		err = json_writer__finish(w);
	json_writer__free(w);
	if (fclose(d) || fclose(c))
		abort();
	if (err != 0 && err != -EINVAL) {
		fprintf(stderr, "fuzz_html: html_bound: %d\n", err);
		abort();
	}
	if (object && err == -EINVAL) {
		fprintf(stderr, "fuzz_html: a valid JSON object refused\n");
		abort();
	}
	if (err == -EINVAL && dl) {
		fprintf(stderr, "fuzz_html: a refused document was written (%zu bytes)\n", dl);
		abort();
	}
	if (!err && valid && (why = json_check(doc, dl, NULL))) {
		fprintf(stderr, "fuzz_html: the bounded report is not JSON: %s\n", why);
		abort();
	}
	if (!err && (why = json_check(cuts, cl, NULL))) {
		fprintf(stderr, "fuzz_html: the cuts are not JSON: %s\n", why);
		abort();
	}
	free(doc);
	free(cuts);
	return 0;
}
