/* html: writes the HTML report page: the embedded template (html_assets.h,
 * generated from html_template.html) with the report JSON between its two
 * halves, escaped for a <script> element. Formatting only; writes only to
 * the FILE* it is given. */
#include <errno.h>
#include <string.h>

#include "output/html.h"
#include "output/html_assets.h"

/* Writes the len bytes of json, with "</" as "<\/" and "<!--" as "\u003c!--".
 * In valid JSON "<" only occurs inside strings, where both forms are valid
 * escapes of the same characters. Without them, "</script>" in a task name
 * would end the script element, and "<!--" followed by "<script" would make
 * the parser overlook the real end tag. */
static int write_escaped(FILE *out, const char *json, size_t len)
{
	size_t start = 0;

	for (size_t i = 0; i < len; i++) {
		const char *esc = NULL;
		size_t skip = 0;

		if (json[i] != '<')
			continue;
		if (i + 1 < len && json[i + 1] == '/') {
			esc = "<\\/";
			skip = 2;
		} else if (len - i >= 4 && !memcmp(json + i, "<!--", 4)) {
			esc = "\\u003c!--";
			skip = 4;
		} else {
			continue;
		}
		if (fwrite(json + start, 1, i - start, out) != i - start || fputs(esc, out) == EOF)
			return -EIO;
		i += skip - 1;
		start = i + 1;
	}
	if (len > start && fwrite(json + start, 1, len - start, out) != len - start)
		return -EIO;
	return 0;
}

int report_html(FILE *out, const char *json, size_t len)
{
	int err;

	if (!out || (!json && len))
		return -EINVAL;
	if (fputs(html_head, out) == EOF)
		return -EIO;
	err = write_escaped(out, json, len);
	if (err)
		return err;
	if (fputs(html_tail, out) == EOF || fflush(out) == EOF || ferror(out))
		return -EIO;
	return 0;
}
