/* The `top` screen: an htop-like ncurses view of a live task model
 * (src/analysis/live.h). Drawing and key handling only; the caller owns the
 * terminal (initscr / endwin) and the refresh loop. */
#ifndef AS_OUTPUT_TUI_H
#define AS_OUTPUT_TUI_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/live.h"
#include "trace/event.h"

#define TUI_FINDINGS_MAX 24
#define TUI_FINDINGS_KEEP_NS 60000000000ull

enum tui_sort { TUI_SORT_BUSY, TUI_SORT_POLLS, TUI_SORT_WAKES, TUI_SORT_IDLE, TUI_SORT_SEQ,
		TUI_SORT__MAX };

struct tui_state {
	enum tui_sort sort;
	bool tree;            /* tasks under the task that spawned them */
	bool detail;          /* detail pane for the selected task */
	bool editing;         /* typing a filter */
	char filter[64];      /* substring of name or spawn location, "" = all */
	uint64_t selected;    /* seq of the selected task, 0 = first row */
	int top_row;          /* first task row shown */
	bool findings_all;    /* the findings block opened (key f): each with its advice */
	bool color;           /* colours (top --color, NO_COLOR) */
	bool wide;            /* full task names (top --wide) */
	const char *runtime;  /* for the findings' advice, NULL tokio */
	bool colors_ready;    /* private: colour pairs made */
	/* private: the findings seen lately, kept TUI_FINDINGS_KEEP_NS after
	 * the view stops showing them (a finished task leaves it in 5 s) */
	struct tui_finding {
		char kind[24];
		uint64_t seq;         /* its task, 0 none */
		uint32_t tid;         /* its thread, 0 none */
		int severity;
		char title[240], advice[240];
		uint64_t seen_ns;     /* last seen (the view's clock) */
		bool now;             /* in the view's findings now */
	} recent[TUI_FINDINGS_MAX];
	int n_recent;
};

/* Draws the whole screen: the header, the findings of the view
 * (analysis/findings.h: at most 3 lines, all with f), the workers, the
 * tasks. pid and target label the header. */
void tui_draw(struct tui_state *st, const struct live *l, const struct as_trace_meta *meta);
/* Applies one key; returns 1 when the user asked to quit. */
int tui_key(struct tui_state *st, int ch, const struct live *l);
const char *tui_sort__str(enum tui_sort s);

#endif
