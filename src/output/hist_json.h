/* A latency histogram (analysis/hist.h) as one JSON object, the same in every
 * output that writes one (report --format json, the HTML page's data):
 * {"count", "min", "max", "mean", "p50", "p90", "p99", "p999",
 *  "buckets": [[low, high, count], ...]} in ns, at most max_buckets buckets
 * (hist__buckets() merges neighbours past that). */
#ifndef AS_OUTPUT_HIST_JSON_H
#define AS_OUTPUT_HIST_JSON_H

#include <stddef.h>

#include "analysis/hist.h"
#include "util/json.h"

/* The largest max_buckets hist_json__write() takes. */
#define HIST_JSON_MAX_BUCKETS 200

/* Write key: {...} of h into w; h NULL or empty gives zeros and no buckets. */
void hist_json__write(struct json_writer *w, const char *key, const struct hist *h,
		      size_t max_buckets);

#endif
