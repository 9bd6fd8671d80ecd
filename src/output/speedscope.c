/* speedscope: the JSON writer (see speedscope.h). Frames are the profile's
 * functions (index = function id - 1); each type's samples are written as
 * stacks of them, root first. Sample:
 *   {"$schema": "https://www.speedscope.app/file-format-schema.json",
 *    "shared": {"frames": [{"name": "cpu_split::heavy"}, {"name":
 *      "cpu_split::burn", "file": "src/bin/cpu_split.rs"}, ...]},
 *    "profiles": [{"type": "sampled", "name": "cpu (nanoseconds)", "unit":
 *      "nanoseconds", "startValue": 0, "endValue": 1696969680,
 *      "samples": [[0, 2, 1], ...], "weights": [1161616150, ...]}, ...],
 *    "name": "...", "activeProfileIndex": 0, "exporter": "asyncscope"} */
#include "output/speedscope.h"

#include <errno.h>
#include <string.h>

#include "util/json.h"

struct pass {
	struct json_writer *w;
	int type;
	uint64_t total;
	bool write;
};

static int one_sample(void *ctx, const struct pprof_sample_view *s)
{
	struct pass *ps = ctx;
	int64_t v = s->values[ps->type];

	if (v <= 0 || !s->n)
		return 0;
	if (!ps->write) {
		ps->total += (uint64_t)v;
		return 0;
	}
	json_writer__begin_array(ps->w);
	for (size_t i = s->n; i-- > 0;)
		json_writer__u64(ps->w, s->functions[i] - 1);
	json_writer__end_array(ps->w);
	return 0;
}

static int one_weight(void *ctx, const struct pprof_sample_view *s)
{
	struct pass *ps = ctx;
	int64_t v = s->values[ps->type];

	if (v > 0 && s->n)
		json_writer__u64(ps->w, (uint64_t)v);
	return 0;
}

static const char *unit_of(const char *u)
{
	static const char *const time[] = { "nanoseconds", "microseconds", "milliseconds",
					    "seconds", "bytes", NULL };

	for (size_t i = 0; u && time[i]; i++)
		if (!strcmp(u, time[i]))
			return time[i];
	return "none";
}

int speedscope_write(FILE *out, const struct pprof *p, const char *name, uint64_t *profiles)
{
	struct json_writer *w;
	uint64_t np = 0;
	int err;

	if (profiles)
		*profiles = 0;
	if (!out || !p)
		return -EINVAL;
	if (!(w = json_writer__new(out, false)))
		return -ENOMEM;
	json_writer__begin_object(w);
	json_writer__kv_string(w, "$schema", "https://www.speedscope.app/file-format-schema.json");
	json_writer__key(w, "shared");
	json_writer__begin_object(w);
	json_writer__key(w, "frames");
	json_writer__begin_array(w);
	for (uint32_t f = 1; f <= pprof__functions(p); f++) {
		const char *file, *fn = pprof__function(p, f, &file);

		json_writer__begin_object(w);
		json_writer__kv_string(w, "name", fn ? fn : "?");
		if (file)
			json_writer__kv_string(w, "file", file);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__end_object(w);
	json_writer__key(w, "profiles");
	json_writer__begin_array(w);
	for (int t = 0; t < pprof__types(p); t++) {
		const char *unit, *type = pprof__type(p, t, &unit);
		struct pass ps = { .w = w, .type = t };
		char title[128];

		if ((err = pprof__each(p, one_sample, &ps)))
			goto out;
		if (!ps.total)
			continue;
		snprintf(title, sizeof(title), "%s (%s)", type, unit && *unit ? unit : "count");
		json_writer__begin_object(w);
		json_writer__kv_string(w, "type", "sampled");
		json_writer__kv_string(w, "name", title);
		json_writer__kv_string(w, "unit", unit_of(unit));
		json_writer__kv_u64(w, "startValue", 0);
		json_writer__kv_u64(w, "endValue", ps.total);
		json_writer__key(w, "samples");
		json_writer__begin_array(w);
		ps.write = true;
		if ((err = pprof__each(p, one_sample, &ps)))
			goto out;
		json_writer__end_array(w);
		json_writer__key(w, "weights");
		json_writer__begin_array(w);
		if ((err = pprof__each(p, one_weight, &ps)))
			goto out;
		json_writer__end_array(w);
		json_writer__end_object(w);
		np++;
	}
	json_writer__end_array(w);
	json_writer__kv_string(w, "name", name ? name : "asyncscope");
	json_writer__kv_u64(w, "activeProfileIndex", 0);
	json_writer__kv_string(w, "exporter", "asyncscope");
	json_writer__end_object(w);
	err = json_writer__finish(w);
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
out:
	json_writer__free(w);
	if (!err && profiles)
		*profiles = np;
	return err;
}
