/* A latency histogram as one JSON object: see hist_json.h. */
#include "output/hist_json.h"

void hist_json__write(struct json_writer *w, const char *key, const struct hist *h,
		      size_t max_buckets)
{
	static const double q[] = { 0.5, 0.9, 0.99, 0.999 };
	struct hist_bucket b[HIST_JSON_MAX_BUCKETS];
	uint64_t qv[4] = { 0 };
	size_t n = 0;

	if (max_buckets > HIST_JSON_MAX_BUCKETS)
		max_buckets = HIST_JSON_MAX_BUCKETS;
	if (h && h->count) {
		n = hist__buckets(h, b, max_buckets);
		hist__quantiles(h, q, qv, 4);
	}
	json_writer__key(w, key);
	json_writer__begin_object(w);
	json_writer__kv_u64(w, "count", h ? h->count : 0);
	json_writer__kv_u64(w, "min", h && h->count ? h->min : 0);
	json_writer__kv_u64(w, "max", h && h->count ? h->max : 0);
	json_writer__kv_u64(w, "mean", h && h->count ? hist__mean(h) : 0);
	json_writer__kv_u64(w, "p50", qv[0]);
	json_writer__kv_u64(w, "p90", qv[1]);
	json_writer__kv_u64(w, "p99", qv[2]);
	json_writer__kv_u64(w, "p999", qv[3]);
	json_writer__key(w, "buckets");
	json_writer__begin_array(w);
	for (size_t i = 0; i < n; i++) {
		json_writer__begin_array(w);
		json_writer__u64(w, b[i].low);
		json_writer__u64(w, b[i].high);
		json_writer__u64(w, b[i].count);
		json_writer__end_array(w);
	}
	json_writer__end_array(w);
	json_writer__end_object(w);
}
