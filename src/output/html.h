/* html: the report as one self-contained HTML page (inline CSS and JS, no
 * network, opens from disk). It renders the JSON report of json.c: it takes
 * that document as bytes and embeds it, so it depends on no analysis type and
 * computes nothing; sections whose keys the JSON lacks say "no data in this
 * report". The page itself is src/output/html_template.html, embedded at
 * build time as src/output/html_assets.h (scripts/gen-html-assets.sh). */
#ifndef AS_OUTPUT_HTML_H
#define AS_OUTPUT_HTML_H

#include <stddef.h>
#include <stdio.h>

/* Writes the HTML page showing the JSON report json (len bytes, borrowed, need
 * not be NUL-terminated; as report_json() writes it) to out. The JSON is
 * embedded as it is except that "</" becomes "<\/" and "<!--" becomes
 * "\u003c!--", so that no string in it can end or derail the <script> block
 * (valid JSON stays valid and means the same). The JSON is not validated: an
 * empty one gives a page of empty sections, an invalid one a page that says
 * so. Returns 0, -EINVAL if out is NULL or json is NULL with len > 0, or -EIO
 * on a write error. */
int report_html(FILE *out, const char *json, size_t len);

#endif
