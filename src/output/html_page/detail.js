/* ---------- the task detail view ---------- */
/* A panel over the page (#task=IDENT in the address, so the browser's back
 * button closes it) with everything the page knows of one task: its row,
 * its poll-duration and scheduling-delay histograms and its lane (the page
 * block's detailed tasks), who woke it and whom it woke (wake edges), its
 * long polls, stalls and starvation, where it is parked (record --futures),
 * its blocking causes and CPU samples (kernel-side data), the findings that
 * name it. Any task link of the page opens it. */
var IDX = null;
function taskIndex() {
	if (IDX) return IDX;
	IDX = { rows: {}, detail: {}, lanes: {}, bySeq: {} };
	(arr(R.tasks) || []).filter(obj).forEach(function (t) {
		var id = taskIdent(t);
		if (id != null) IDX.rows[id] = t;
		if (isNum(t.seq) && id != null) IDX.bySeq[t.seq] = id;
	});
	var Z = obj(P.zoom);
	(Z && arr(Z.tasks) || []).filter(obj).forEach(function (t) { var id = taskIdent(t); if (id != null) IDX.detail[id] = t; });
	return IDX;
}
function openTask(ident) {
	location.hash = '#task=' + encodeURIComponent(ident);
}
function closeTask() {
	var d = document.getElementById('task-detail');
	if (d) d.hidden = true;
	document.body.classList.remove('drawer-open');
	if (/^#task=/.test(location.hash)) {
		if (history.replaceState) history.replaceState(null, '', location.pathname + location.search);
		else location.hash = '';
	}
}
function detailSub(title, hint, kids) {
	return h('div', { 'class': 'dsub' }, [h('h3', { text: title }), hint ? h('p', { 'class': 'hint', text: hint }) : null, kids]);
}
/* A task's lane for its own timeline: the main timeline's, else one built
 * from its page-block entry. */
function taskLane(ident) {
	var z = taskIndex().detail[ident];
	if (!z || !obj(z.lane)) return null;
	var L = z.lane;
	if (!isNum(L.bucket_ns) || L.bucket_ns <= 0 || !isNum(L.buckets)) return null;
	var l = { kind: 'task', ident: ident, seq: z.seq, name: taskName(z), label: ident + ' ' + lastSeg(taskName(z)),
		start: isNum(L.start_ns) ? L.start_ns : 0, bns: L.bucket_ns, n: L.buckets, a: L.a || '', b: L.b || null };
	l.alive = [l.start, l.start + l.n * l.bns];
	return l;
}
/* Flame-graph lines whose root frame is the task's (the stacks are folded
 * per root future: every task of that future shares them). */
function stacksOf(lines, name, ident) {
	return (arr(lines) || []).filter(function (l) {
		if (!Array.isArray(l) || typeof l[0] !== 'string') return false;
		var root = l[0].split(';', 1)[0];
		return root === name || (ident && root.indexOf(ident) >= 0);
	});
}
function edgeCols(end) {
	var other = end === 'from' ? 'to' : 'from';
	return [
		{ label: end === 'from' ? 'woke' : 'woken by', cls: 'name',
			get: function (e) {
				var k = e[other + '_kind'] != null ? String(e[other + '_kind']) : 'task';
				return k === 'task' ? (taskIdent(e, other + '_') || '?') + ' ' + taskName({ name: e[other + '_name'] }) : srcLabel(k);
			},
			fmt: function (v, e) {
				var k = e[other + '_kind'] != null ? String(e[other + '_kind']) : 'task', id = taskIdent(e, other + '_');
				if (k !== 'task' || id == null) return v;
				return h('span', null, [taskLink(id), ' ', shorten(taskName({ name: e[other + '_name'] }), 70)]);
			} },
		colNum('wakes', 'count'), colDur('delay p50', 'delay_p50_ns'), colDur('delay p99', 'delay_p99_ns'), colDur('delay max', 'delay_max_ns')
	];
}
function showTask(ident) {
	var ix = taskIndex(), row = ix.rows[ident], z = ix.detail[ident];
	var d = document.getElementById('task-detail');
	if (!d) {
		d = h('div', { id: 'task-detail', 'class': 'drawer', role: 'dialog', 'aria-label': 'task detail', hidden: 'hidden' });
		document.body.appendChild(d);
		document.addEventListener('keydown', function (ev) { if (ev.key === 'Escape' && !d.hidden) closeTask(); });
	}
	while (d.firstChild) d.removeChild(d.firstChild);
	var name = row ? taskName(row) : z ? taskName(z) : null;
	/* what other tables say of it: the name at least */
	var lps = (arr(R.long_polls) || []).filter(function (p) { return obj(p) && taskIdent(p) === ident; });
	var st = (arr(R.stalled) || []).filter(function (p) { return obj(p) && taskIdent(p) === ident; });
	var sv = (arr(R.starved) || []).filter(function (p) { return obj(p) && taskIdent(p) === ident; });
	var edges = (arr(R.wake_edges) || []).filter(obj);
	var woke = edges.filter(function (e) { return taskIdent(e, 'from_') === ident && (e.from_kind == null || e.from_kind === 'task'); });
	var wokenBy = edges.filter(function (e) { return taskIdent(e, 'to_') === ident; });
	if (name == null) {
		var any = lps[0] || st[0] || sv[0];
		name = any ? taskName(any) : wokenBy[0] ? taskName({ name: wokenBy[0].to_name }) : woke[0] ? taskName({ name: woke[0].from_name }) : '(unknown)';
	}
	var start = obj(P.zoom) && isNum(P.zoom.start_ns) ? P.zoom.start_ns : obj(R.timeline) && isNum(R.timeline.start_ns) ? R.timeline.start_ns : null;
	var hd = h('div', { 'class': 'dhd' }, [
		h('button', { type: 'button', 'class': 'close', title: 'close (Esc)', text: '\u00d7', onclick: closeTask }),
		h('div', { 'class': 'dident', text: ident }),
		h('div', { 'class': 'dname', text: name }),
		row ? h('div', { 'class': 'dmeta' }, [
			stateBadge(row.state), ' ', row.kind != null ? h('span', { 'class': 'badge st-idle', text: String(row.kind) }) : null,
			row.task_name != null ? ' named "' + row.task_name + '"' : null,
			row.spawn_location != null ? h('span', { 'class': 'loc', text: ' spawned at ' + row.spawn_location }) : null,
			isNum(row.parent) && ix.bySeq[row.parent] ? h('span', null, [' by ', taskLink(ix.bySeq[row.parent])]) : null,
			start !== null && isNum(row.first_seen_ns) ? ', seen +' + fmtNs(row.first_seen_ns - start) + ' ' + DASH + ' +' + fmtNs(row.last_seen_ns - start) : null,
			row.header != null ? ', header ' + row.header : null
		]) : null
	]);
	add(d, hd);
	var body = h('div', { 'class': 'dbody' }), after = [];
	add(d, body);
	if (!row) {
		var c = cutOf('tasks');
		add(body, h('p', { 'class': 'banner info', text: 'This task has no row in the page: ' + (c ? 'the page holds the ' + fmtCount(c.kept) + ' most notable of the report\'s ' +
			fmtCount(c.total) + ' tasks, or ' : '') + 'the report folded it into a task group (report --max-tasks lists more). What other tables say of it follows.' }));
	} else {
		add(body, miniCards([
			['Polls', fmtCount(row.polls), fmtCount(row.pending_polls) + ' Pending, ' + fmtCount(row.ready_polls) + ' Ready'],
			['Busy', fmtNs(row.busy_ns), 'mean poll ' + fmtNs(row.mean_poll_ns)],
			['Longest poll', fmtNs(row.max_poll_ns), fmtCount(row.long_polls) + ' long polls', row.long_polls > 0 ? 'bad' : null],
			['Poll p50 / p99', fmtNs(row.poll_p50_ns) + ' / ' + fmtNs(row.poll_p99_ns), null],
			['Scheduled', fmtNs(row.sched_ns), 'p50 ' + fmtNs(row.sched_p50_ns) + ', p99 ' + fmtNs(row.sched_p99_ns) + ', max ' + fmtNs(row.sched_max_ns)],
			['Idle', fmtNs(row.idle_ns), 'p50 ' + fmtNs(row.idle_p50_ns) + ', p99 ' + fmtNs(row.idle_p99_ns)],
			['Wakes', fmtCount(row.wakes), fmtCount(row.self_wakes) + ' by itself']
		]));
	}
	/* findings naming it */
	var fs = (arr(R.findings) || []).filter(function (f) { return obj(f) && obj(f.task) && taskIdent(f.task) === ident; });
	if (fs.length) add(body, detailSub('Findings', null, h('div', { 'class': 'findings' }, fs.map(findingBlock))));
	/* histograms */
	if (z && obj(z.poll) && obj(z.sched)) {
		add(body, detailSub('Poll duration and scheduling delay', 'Every poll of this task that ended, and every wait from a wake to the poll that followed it.',
			h('div', { 'class': 'hists' }, [['Poll duration', z.poll, HISTS[0][3]], ['Scheduling delay', z.sched, HISTS[1][3]]].map(function (x) {
				var card = h('div', { 'class': 'hist' }, h('h3', { text: x[0] }));
				if (!x[1].count) noData(card, 'no samples');
				else card.appendChild(histChart(x[1], x[2]));
				add(card, histStats(x[1]));
				return card;
			}))));
	} else if (row) {
		var Z = obj(P.zoom);
		add(body, detailSub('Poll duration and scheduling delay', null, h('p', { 'class': 'nodata', text: Z
			? 'Histograms are kept for the ' + fmtCount((arr(Z.tasks) || []).length) + ' most notable tasks (busiest, longest polls, most delayed, stalled, starved); this one is not among them: its percentiles are above.'
			: 'No per-task histograms in this page (made without the trace: asyncscope report --html writes them).' })));
	}
	/* its life on a timeline */
	var lane = taskLane(ident);
	if (lane) {
		var D = obj(P.zoom) && isNum(P.zoom.duration_ns) ? P.zoom.duration_ns : lane.start + lane.n * lane.bns;
		var tv = timelineView({ workers: [], runnable: null, tasks: [lane] }, { duration: D, fine: lane.bns, marks: lps, onTask: function () {}, limit: 1 });
		var goMain = mainTimeline ? h('button', { type: 'button', 'class': 'more', text: 'Show it in the main timeline', onclick: function () {
			closeTask();
			if (mainTimeline.focus(ident)) document.getElementById('timeline').scrollIntoView();
		} }) : null;
		add(body, detailSub('On the timeline', 'Its polls (running), its waits for a worker (scheduled) and its long polls over its life, ' +
			fmtNs(lane.bns) + ' buckets; zoom as in the main timeline.', [tv.el, goMain]));
		var pad = Math.max((lane.alive[1] - lane.alive[0]) * 0.02, 1000);
		after.push(function () { tv.setView(lane.alive[0] - pad, lane.alive[1] + pad); });
	}
	/* wakes */
	var ecut = cutOf('wake_edges');
	var enote = ecut ? 'The page holds the most frequent wake edges and up to 8 each way of each detailed task (' + fmtCount(ecut.kept) + ' of ' + fmtCount(ecut.total) + '): more may be missing here.' : null;
	add(body, detailSub('Woken by', enote, wokenBy.length ? table(edgeCols('to'), wokenBy, { sort: 1, desc: true, noun: 'edges', pageSize: 25 })
		: h('p', { 'class': 'nodata', text: R.wakes_recorded === false ? 'wakes not recorded (record --lite)' : 'no wake of this task in the page' })));
	add(body, detailSub('Woke', null, woke.length ? table(edgeCols('from'), woke, { sort: 1, desc: true, noun: 'edges', pageSize: 25 })
		: h('p', { 'class': 'nodata', text: 'it woke no task' })));
	if (lps.length)
		add(body, detailSub('Long polls', null, table([colAt('start', 'start_ns'), colDur('duration', 'duration_ns'), colId('tid', 'tid'),
			{ label: 'until end', get: function (r) { return r.until_end === true ? 'yes' : r.until_end === false ? 'no' : null; } }], lps, { sort: 1, desc: true, noun: 'long polls', pageSize: 25 })));
	if (st.length || sv.length)
		add(body, detailSub('Stalled and starved', null, h('ul', { 'class': 'plain' }, st.map(function (p) {
			return h('li', { text: 'stalled (pending, not woken) ' + fmtNs(p.stalled_ns) + ' from ' + fmtAt(p.since_ns) + (p.until_end === true ? ', never woken again' : '') + ' (' + fmtCount(p.count) + ' stalls)' });
		}).concat(sv.map(function (p) {
			return h('li', { text: 'starved: waited up to ' + fmtNs(p.max_wait_ns) + ' for a worker once woken (' + fmtCount(p.count) + ' times)' });
		})))));
	/* where it waits (record --futures) */
	var F = obj(R.futures);
	var parked = F ? (arr(F.parked) || []).filter(function (p) { return obj(p) && taskIdent(p) === ident; })[0] : null;
	if (parked)
		add(body, detailSub('Parked at', 'Its await chain when it was last polled (outermost first): waiting ' + fmtNs(parked.waiting_ns) + ' since ' + fmtAt(parked.since_ns) + '.', chainList(parked)));
	/* blocking (record --offcpu) */
	var bt = obj(R.blocking) ? (arr(R.blocking.tasks) || []).filter(function (t) { return obj(t) && taskIdent(t) === ident; })[0] : null;
	if (bt) {
		var causes = (arr(bt.causes) || []).filter(obj);
		add(body, detailSub('Blocking in its polls', fmtNs(bt.offcpu_ns) + ' off CPU in ' + fmtCount(bt.intervals) + ' intervals (' + fmtNs(bt.preempted_ns) + ' preempted).',
			table([colName('kernel function', 'kernel', 40), { label: 'user frame', cls: 'name', get: function (c) { return c.user != null ? String(c.user) : null; },
				fmt: function (v) { return v == null ? null : shorten(v, 70); } },
				{ label: 'at', cls: 'loc', get: function (c) { return fmtLoc(c.file, c.line); } },
				colDur('off CPU', 'ns'), colNum('intervals', 'count')], causes, { sort: 3, desc: true, noun: 'causes', pageSize: 25 })));
	}
	var kb = obj(K.blocking), bst = kb ? stacksOf(kb.stacks, name, ident) : [];
	if (bst.length)
		add(body, detailSub('Off-CPU flame graph of ' + shorten(lastSeg(name), 60), 'The stacks of every task of this future (the graph is folded per root future).', [flameLegend('off-CPU time', false), flameGraph(bst, fmtNs)]));
	/* CPU samples (record --sample) */
	var kc = obj(K.cpu), cr = kc ? (arr(kc.rows) || []).filter(function (r) { return obj(r) && r.kind === 'task' && taskIdent(r) === ident; })[0] : null;
	var cst = kc ? stacksOf(kc.stacks, name, ident) : [];
	if (cr || cst.length)
		add(body, detailSub('CPU samples', cr ? fmtCount(cr.samples) + ' samples in its polls' + (isNum(kc.samples) && kc.samples > 0 ? ' (' + fmtPct(cr.samples / kc.samples) + ' of all)' : '') + '.' : null,
			cst.length ? [h('p', { 'class': 'hint', text: 'The stacks of every task of this future:' }), flameLegend('samples', true),
				flameGraph(cst, function (v) { return fmtCount(v) + (v === 1 ? ' sample' : ' samples'); })] : null));
	d.hidden = false;
	document.body.classList.add('drawer-open');
	d.scrollTop = 0;
	d.dataset.task = ident;
	after.forEach(function (f) { f(); });
}
function routeTask() {
	var m = /^#task=(.+)$/.exec(location.hash);
	if (m) {
		var id;
		try { id = decodeURIComponent(m[1]); } catch (e) { id = m[1]; }
		showTask(id);
	} else {
		var d = document.getElementById('task-detail');
		if (d && !d.hidden) { d.hidden = true; document.body.classList.remove('drawer-open'); }
	}
}
window.addEventListener('hashchange', function () { safely('task detail', routeTask); });
