/* The text outputs' view (output/view.h) from the command line's --color,
 * --wide and --limit (cli/opts.h) for one output stream. */
#ifndef AS_CLI_TEXT_VIEW_H
#define AS_CLI_TEXT_VIEW_H

#include <stdio.h>

#include "cli/opts.h"
#include "output/view.h"

static inline struct text_view cli_text_view(FILE *out)
{
	return (struct text_view){ .color = cli_color(out), .wide = cli_view()->wide,
				   .limit = cli_view()->limit };
}

#endif
