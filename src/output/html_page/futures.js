/* ---------- futures (record --futures): the report's "futures" key ---------- */
/* These sections (async flame graph, where tasks wait, future functions,
 * parked at) and the task table's "parked at" column are drawn only when the
 * report has that key (src/output/json.c gives its schema); their links join
 * the navigation after the kernel-side ones. */
/* Frames the future analysis could not follow, named as the text report's
 * FUTURES line names them. */
var FUT_LOSSES = [['exits_lost', 'exits lost (frames cut short)'], ['entries_lost', 'entries lost'],
	['unmatched_exits', 'exits without their entry'], ['bad', 'events of no future probe'],
	['too_deep', 'frames too deep to follow']];
function futuresLost(F) { return FUT_LOSSES.filter(function (k) { return isNum(F[k[0]]) && F[k[0]] > 0; }); }
/* What the recording lost (as lossNote says it) and what the future
 * analysis lost: a banner for each that lost anything, else one line of
 * zeros. */
function futuresNote(sec, F) {
	var tot = obj(R.totals) || {};
	var lost = isNum(R.lost_events) ? R.lost_events : tot.lost_events;
	var missed = isNum(R.missed_events) ? R.missed_events : tot.missed_events;
	var clean = R.truncated !== true && !(isNum(lost) && lost > 0 || isNum(missed) && missed > 0);
	var bad = futuresLost(F), line = [];
	if (!clean) lossNote(sec);
	else line.push('Lost events ' + fmtCount(lost) + ', missed events ' + fmtCount(missed) + '.');
	if (bad.length)
		add(sec, h('div', { 'class': 'banner bad', text: 'Future frames were lost: ' + bad.map(function (k) {
			return fmtCount(F[k[0]]) + ' ' + k[1];
		}).join(', ') + ': the numbers below undercount.' }));
	else
		line.push('Future frames lost: ' + fmtCount(F.exits_lost) + ' exits, ' + fmtCount(F.entries_lost) +
			' entries, ' + fmtCount(F.unmatched_exits) + ' exits without entry.');
	if (isNum(F.open_at_end) && F.open_at_end > 0)
		line.push(fmtCount(F.open_at_end) + ' future frames were still running at the end (closed there).');
	if (line.length) add(sec, h('p', { 'class': 'hint', text: line.join(' ') }));
}
/* The stacks of "oncpu_stacks" / "wait_stacks" ({"frames", "ns"}) as the
 * flame graph takes them. */
function futuresStacks(list) {
	return (arr(list) || []).filter(function (x) { return obj(x) && arr(x.frames); })
		.map(function (x) { return [x.frames, x.ns]; });
}
/* "file:line", "file", or null. */
function fmtLoc(file, line) {
	if (file == null) return isNum(line) && line > 0 ? '?:' + line : null;
	return String(file) + (isNum(line) && line > 0 ? ':' + line : '');
}
/* The innermost frame of a parked task's await chain, or null. */
function chainEnd(p) {
	var ch = (arr(p.chain) || []).filter(obj);
	return ch.length ? ch[ch.length - 1] : null;
}

function renderFuturesFlame() {
	var F = obj(R.futures);
	if (!F) return;
	var sec = section('async-flame', 'Async flame graph',
		'Where the tasks\' polls spent their time, future by future (record --futures): the task (its root future) at the top, then the futures it polled, outermost first. ' +
		'A frame is as wide as the time spent in its polls; what it holds beyond the futures below it is its self time (its own code, outside the futures it awaits). ' +
		'A task\'s row alone holds its polls\' time outside any probed future. The same stacks as asyncscope export --format folded-futures.');
	navLink('async-flame', 'Async flame graph');
	futuresNote(sec, F);
	var fns = (arr(F.functions) || []).filter(obj);
	add(sec, miniCards([
		['On-CPU in futures', fmtNs(F.oncpu_ns), 'time of the graph'],
		['Future polls', fmtCount(F.frames), fmtCount(F.ready) + ' Ready, ' + fmtCount(F.pending) + ' Pending' +
			(isNum(F.unknown) && F.unknown > 0 ? ', ' + fmtCount(F.unknown) + ' unknown' : '')],
		['Future functions', fmtCount(fns.length), 'polled at least once'],
		['Outside task polls', fmtCount(F.outside_tasks), 'frames (block_on, other threads)']
	]));
	var st = futuresStacks(F.oncpu_stacks), cut = cutOf('futures.oncpu_stacks');
	if (!st.length) return noData(sec, 'no future was polled inside a task poll');
	add(sec, h('div', { 'class': 'sub' }, [flameLegend('time in polls', false, true), flameGraph(st, fmtNs, cut && obj(cut.omitted) ? cut.omitted.ns : 0, '(' + (cut ? fmtCount(cut.total - cut.kept) : 0) + ' lighter stacks)')]));
}

function renderFuturesWait() {
	var F = obj(R.futures);
	if (!F) return;
	var sec = section('wait-flame', 'Where tasks wait',
		'The wait flame graph: for each task poll that returned Pending, the await chain polled last in it (outermost first; the innermost future with the line of the .await it is suspended at), ' +
		'as wide as the time the task then stayed pending (until its next poll, its drop, or the end of the trace). The same stacks as asyncscope export --format folded-wait.');
	navLink('wait-flame', 'Where tasks wait');
	futuresNote(sec, F);
	add(sec, miniCards([
		['Pending time', fmtNs(F.wait_ns), 'time of the graph'],
		['Parked for good', fmtCount(F.parked_tasks), 'tasks: last poll Pending, never polled again']
	]));
	var st = futuresStacks(F.wait_stacks), cut = cutOf('futures.wait_stacks');
	if (!st.length) return noData(sec, 'no task poll returned Pending');
	add(sec, h('div', { 'class': 'sub' }, [flameLegend('time pending', false, true), flameGraph(st, fmtNs, cut && obj(cut.omitted) ? cut.omitted.ns : 0, '(' + (cut ? fmtCount(cut.total - cut.kept) : 0) + ' lighter stacks)')]));
}

function renderFutureFns() {
	var F = obj(R.futures);
	if (!F) return;
	var sec = section('future-fns', 'Future functions',
		'One row per future function (async fn and async block state machines, impl Future poll functions) polled in the trace: where it is defined, its polls and their outcome, ' +
		'its self time (in its polls, minus the futures it awaits), total time (with them) and its longest poll. Click a column header to sort.');
	navLink('future-fns', 'Future functions');
	futuresNote(sec, F);
	var fns = (arr(F.functions) || []).filter(obj);
	if (!fns.length) return noData(sec, 'no future was polled');
	var cpu = isNum(F.oncpu_ns) && F.oncpu_ns > 0 ? F.oncpu_ns : null;
	var cols = [
		colName('function', 'name', 70),
		{ label: 'defined at', cls: 'loc', get: function (f) { return fmtLoc(f.file, f.line); },
			fmt: function (v) { return v == null ? null : v.length > 40 ? ELL + v.slice(v.length - 39) : v; },
			title: function (f) { return fmtLoc(f.file, f.line); } },
		colNum('polls', 'polls'), colNum('ready', 'ready'), colNum('pending', 'pending')
	];
	if (fns.some(function (f) { return isNum(f.unknown) && f.unknown > 0; })) cols.push(colNum('unknown', 'unknown'));
	cols.push(colDur('self', 'self_ns'),
		{ label: 'self share', num: true, title: function () { return 'share of the on-CPU time of the async flame graph'; },
			get: function (f) { return isNum(f.self_ns) && cpu ? f.self_ns / cpu : null; }, fmt: fmtPct },
		colDur('total', 'total_ns'), colDur('max poll', 'max_poll_ns'),
		{ label: 'mean poll', num: true, get: function (f) { return isNum(f.total_ns) && isNum(f.polls) && f.polls > 0 ? f.total_ns / f.polls : null; }, fmt: fmtNs });
	add(sec, h('div', { 'class': 'sub' }, table(cols, fns, { sort: cols.length - 5, desc: true, noun: 'functions', cut: ['futures.functions', 'the most self time', [['polls', 'polls'], ['self_ns', 'self time', fmtNs]]] })));
}

/* A parked task's await chain, outermost first, one line per future: its
 * name, "at FILE:LINE" of the .await it is suspended at ("in FILE:LINE (fn)"
 * when only the function's line is known) and, on the innermost, the future
 * it awaits (the others await the next line's). */
function chainList(p) {
	var ch = (arr(p.chain) || []).filter(obj);
	if (!ch.length) return h('p', { 'class': 'nodata', text: 'no future frame returned Pending in its last poll' });
	return h('ol', { 'class': 'chain' }, ch.map(function (l, i) {
		var last = i === ch.length - 1, loc = fmtLoc(l.file, l.line), name = l.name != null ? String(l.name) : '?';
		var kids = [i ? h('span', { 'class': 'tree', text: '\u2514\u2500 ' }) : null,
			h('span', { 'class': 'fn', title: name, text: shorten(name, 90) })];
		if (loc) kids.push(' ', l.at_await === true ? 'at ' : 'in ', h('span', { 'class': 'at', text: loc }), l.at_await === true ? null : ' (fn)');
		if (last && l.awaiting != null)
			kids.push(' ', h('span', { 'class': 'awaiting', title: String(l.awaiting) }, ['awaiting ', h('b', { text: shorten(String(l.awaiting), 100) })]));
		return h('li', { 'class': last ? 'last' : null, style: 'padding-left:' + (i * 20) + 'px' }, kids);
	}));
}
function parkedBlock(p) {
	var id = isNum(p.seq) ? 'parked-' + p.seq : null;
	return h('div', { 'class': 'parked', id: id }, [
		h('div', { 'class': 'hd' }, [
			h('span', { 'class': 'seq', text: taskIdent(p) || '?' }),
			h('span', { 'class': 'name', title: taskName(p), text: shorten(taskName(p), 90) }),
			h('span', { text: 'waiting ' + fmtNs(p.waiting_ns) + ' since ' + fmtAt(p.since_ns) }),
			p.until_end === true ? h('span', { 'class': 'yes', text: 'still pending at the end' })
				: p.until_end === false ? h('span', { 'class': 'nil', text: 'dropped while pending' }) : null
		]),
		chainList(p)
	]);
}
function renderParked() {
	var F = obj(R.futures);
	if (!F) return;
	var sec = section('parked', 'Parked at',
		'Tasks parked for good: their last poll returned Pending and they were never polled again (still pending at the end of the trace, or dropped while pending, as every task is when the runtime shuts down). ' +
		'Each with its await chain where it was parked, outermost first: every future with the file:line of the .await it is suspended at, and what the innermost one awaits. Longest waiting first.');
	navLink('parked', 'Parked at');
	futuresNote(sec, F);
	var ps = (arr(F.parked) || []).filter(obj);
	if (isNum(F.parked_tasks) && F.parked_tasks > ps.length)
		add(sec, h('p', { 'class': 'hint', text: fmtCount(F.parked_tasks) + ' tasks parked for good; the ' + fmtCount(ps.length) + ' longest waiting are listed.' }));
	if (!ps.length) return noData(sec, 'no task was parked for good');
	var LIMIT = 30, box = h('div'), query = '', shown = LIMIT, countEl = h('span', { 'class': 'count' });
	function text(p) {
		return [taskName(p), taskIdent(p) || ''].concat((arr(p.chain) || []).filter(obj).map(function (l) {
			return [l.name, fmtLoc(l.file, l.line), l.awaiting].join(' ');
		})).join(' ').toLowerCase();
	}
	function draw() {
		while (box.firstChild) box.removeChild(box.firstChild);
		var hits = ps.filter(function (p) { return !query || text(p).indexOf(query) >= 0; });
		hits.slice(0, shown).forEach(function (p) { box.appendChild(parkedBlock(p)); });
		countEl.textContent = (hits.length === ps.length ? '' : hits.length + ' of ') + ps.length + (ps.length === 1 ? ' task' : ' tasks');
		if (hits.length > shown)
			box.appendChild(h('button', { 'class': 'more', text: 'Show all ' + hits.length + ' tasks (' + (hits.length - shown) + ' more)',
				onclick: function () { shown = Infinity; draw(); } }));
	}
	var bar = [countEl];
	if (ps.length > 10) {
		var input = h('input', { type: 'search', placeholder: 'Filter tasks (name, future, file, awaited type...)', 'aria-label': 'filter parked tasks',
			oninput: function () { query = input.value.trim().toLowerCase(); draw(); } });
		bar.unshift(input);
	}
	add(sec, [h('div', { 'class': 'toolbar' }, bar), box]);
	draw();
	/* a link to #parked-SEQ (the task table's "parked at") opens the block even past the first ones */
	function reveal() {
		var m = /^#parked-(\d+)$/.exec(location.hash);
		if (m && !document.getElementById('parked-' + m[1]) && shown !== Infinity) {
			shown = Infinity; query = '';
			if (input) input.value = '';
			draw();
			var el = document.getElementById('parked-' + m[1]);
			if (el) el.scrollIntoView();
		}
	}
	window.addEventListener('hashchange', reveal);
	reveal();
}
