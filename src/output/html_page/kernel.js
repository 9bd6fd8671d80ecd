/* ---------- kernel side: off-CPU, CPU samples, run queue, io_uring ---------- */
/* Each of these sections is drawn only when the kernel-side data has its key,
 * that is when the trace holds such events; its link joins the navigation,
 * after the long polls'. */
var navAfter = null;
function navLink(id, label) {
	var nav = document.querySelector('nav.sections');
	if (!nav) return;
	if (!navAfter) navAfter = nav.querySelector('a[href="#long-polls"]');
	var a = h('a', { href: '#' + id, text: label });
	if (navAfter && navAfter.nextSibling) nav.insertBefore(a, navAfter.nextSibling);
	else nav.appendChild(a);
	navAfter = a;
}
/* What the recording lost, as the summary and `asyncscope blocking` say it:
 * these numbers undercount when events were lost or missed. */
function lossNote(sec) {
	var tot = obj(R.totals) || {};
	var lost = isNum(R.lost_events) ? R.lost_events : tot.lost_events;
	var missed = isNum(R.missed_events) ? R.missed_events : tot.missed_events;
	if (R.truncated === true)
		add(sec, h('div', { 'class': 'banner bad', text: 'The trace is truncated (no end record): the numbers below cover it up to its last event; ' +
			(R.loss_counts === 'lower_bound' ? 'at least ' + fmtCount(lost) + ' events lost, ' + fmtCount(missed) + ' missed.' : 'lost and missed events unknown.') }));
	else if (isNum(lost) && lost > 0 || isNum(missed) && missed > 0)
		add(sec, h('div', { 'class': 'banner bad', text: 'Events were dropped (' + fmtCount(lost || 0) + ' lost, ' + fmtCount(missed || 0) + ' missed): the numbers below undercount.' }));
	else
		add(sec, h('p', { 'class': 'hint', text: 'Lost events ' + fmtCount(lost) + ', missed events ' + fmtCount(missed) + '.' }));
}
function miniCards(list) {
	return h('div', { 'class': 'cards' }, list.map(function (c) {
		return h('div', { 'class': 'card' + (c[3] ? ' ' + c[3] : '') },
			[h('div', { 'class': 'k', text: c[0] }), h('div', { 'class': 'v', text: c[1] }), c[2] ? h('div', { 'class': 's', text: c[2] }) : null]);
	}));
}

/* Flame-graph colours: task frames blue (the scheduler, idle and threads
 * outside the runtime grey), Rust frames (with "::") warm, native frames
 * (the kernel, the C library) cool; the shade within a hue from the name, so
 * a function keeps its colour across the graph. */
function nameHash(str) {
	var x = 5381;
	for (var i = 0; i < str.length; i++) x = ((x * 33) ^ str.charCodeAt(i)) >>> 0;
	return (x % 1000) / 1000;
}
var FLAME_SPECIAL = { scheduler: '#c3cad4', idle: '#dde2e8', 'outside-runtime': '#b5bfcc' };
var FLAME_KERNEL = '#cdbbe8';
function flameColor(name, depth) {
	var f = nameHash(name);
	if (depth === 1) return FLAME_SPECIAL[name] || 'hsl(' + Math.round(212 + 14 * f) + ',62%,' + Math.round(70 + 8 * f) + '%)';
	if (name.indexOf('::') >= 0) return 'hsl(' + Math.round(8 + 40 * f) + ',' + Math.round(78 + 12 * f) + '%,' + Math.round(60 + 8 * nameHash(name + '.')) + '%)';
	return 'hsl(' + Math.round(168 + 28 * f) + ',' + Math.round(42 + 16 * f) + '%,' + Math.round(62 + 8 * nameHash(name + '.')) + '%)';
}
/* special: the CPU graph's scheduler / idle / outside rows; futures: the
 * async graphs, whose frames are all futures (no native frame). */
function flameLegend(noun, special, futures) {
	return h('div', { 'class': 'legend' }, [
		h('span', null, [h('span', { 'class': 'sw', style: 'background:' + flameColor('task', 1) }), 'task (root future)']),
		special ? h('span', null, [h('span', { 'class': 'sw', style: 'background:' + FLAME_SPECIAL.scheduler }), 'scheduler / idle / outside the runtime']) : null,
		h('span', null, [h('span', { 'class': 'sw', style: 'background:' + flameColor('a::b', 2) }), futures ? 'future (async fn, async block, impl Future)' : 'Rust frame']),
		futures ? null : h('span', null, [h('span', { 'class': 'sw', style: 'background:' + flameColor('do_sys', 2) }), 'native frame (C library)']),
		futures ? null : h('span', null, [h('span', { 'class': 'sw', style: 'background:' + FLAME_KERNEL }), 'kernel frame']),
		futures ? null : h('span', null, [h('span', { 'class': 'sw', style: 'background:#fff;border:1.5px solid #111827' }), "the program's own first frame"]),
		h('span', null, 'width: ' + noun + '; click a frame to zoom, hover for numbers')
	]);
}

/* A flame graph of folded stacks (lines: [["task;frame;...", weight], ...],
 * or [[["task", "frame", ...], weight], ...] when frame names come apart),
 * drawn from the root at the top down (an icicle): one row per depth, each
 * frame as wide as the weight of the stacks through it, callees under their
 * caller, heaviest first. Clicking a frame zooms to it (its callers stay
 * above it, faded); the search box highlights frames by name and says what
 * share of the weight they hold. fmtW says a weight; omitted, the weight of
 * the stacks the page was not given, gets a frame of its own, so the total
 * is the recording's. */
function flameGraph(lines, fmtW, omitted, omittedLabel) {
	var W = 1200, RH = 17, MINW = 0.6;
	function mk(name, parent) {
		return { name: name, v: 0, kids: [], map: new Map(), parent: parent, depth: parent ? parent.depth + 1 : 0 };
	}
	var root = mk('all', null);
	/* own, kernel: the indices of the program's first frame and of the
	 * first kernel frame in the line (-1 or absent: none) */
	function addStack(frames, v, own, kernel) {
		var node = root;
		root.v += v;
		frames.forEach(function (f, i) {
			var k = node.map.get(f);
			if (!k) { k = mk(f, node); node.map.set(f, k); node.kids.push(k); }
			k.v += v;
			if (i === own) k.own = true;
			if (isNum(kernel) && kernel >= 0 && i >= kernel) k.kernel = true;
			node = k;
		});
	}
	lines.forEach(function (l) {
		if (!Array.isArray(l) || !isNum(l[1]) || l[1] <= 0) return;
		var frames = typeof l[0] === 'string' ? l[0].split(';') : arr(l[0]) ? l[0].map(String) : null;
		if (frames && frames.length) addStack(frames, l[1], l[2], l[3]);
	});
	if (isNum(omitted) && omitted > 0) addStack([omittedLabel], omitted);
	(function order(n) {
		n.kids.sort(function (a, b) { return b.v - a.v || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0); });
		n.kids.forEach(order);
	})(root);
	var focus = root, query = '';
	var svgBox = h('div'), crumbs = h('div', { 'class': 'crumbs' }), found = h('span', { 'class': 'count' });
	var reset = h('button', { type: 'button', text: 'Reset zoom', disabled: 'disabled', onclick: function () { focus = root; draw(); } });
	var input = h('input', { type: 'search', placeholder: 'Highlight frames (name contains...)', 'aria-label': 'highlight frames',
		oninput: function () { query = input.value.trim().toLowerCase(); draw(); } });
	function pct(v, of) { return of > 0 ? (100 * v / of).toFixed(v / of >= 0.995 ? 0 : 1) + '%' : DASH; }
	function matches(n) { return query && n.depth > 0 && n.name.toLowerCase().indexOf(query) >= 0; }
	function label(name, w) {
		var fit = Math.floor((w - 6) / 6.3);
		if (fit < 5 && name.length > fit) return null; /* an ellipsis and a few letters say nothing */
		return name.length <= fit ? name : ELL + name.slice(name.length - fit + 1);
	}
	function frame(n, x, w, y, cls) {
		var hot = matches(n);
		var g = s('g', { 'class': cls, onclick: function () { focus = n; draw(); } }, [
			tip((n.depth === 0 ? 'all stacks' : n.name) + (n.own ? '\n(the program\'s own first frame)' : n.kernel ? '\n(kernel)' : '') +
				'\n' + fmtW(n.v) + ' (' + pct(n.v, root.v) + ' of all' +
				(n.parent && n.parent.depth > 0 ? ', ' + pct(n.v, n.parent.v) + ' of its caller' : '') + ')'),
			s('rect', { x: x, y: y, width: Math.max(w - 0.5, 0.3), height: RH - 1, rx: 1.5,
				fill: hot ? '#d946ef' : n.depth === 0 ? '#e5e9ef' : n.kernel ? FLAME_KERNEL : flameColor(n.name, n.depth),
				stroke: n.own ? '#111827' : null, 'stroke-width': n.own ? 1.5 : null })
		]);
		var t = label(n.depth === 0 ? 'all ' + DASH + ' ' + fmtW(n.v) : n.name, w);
		if (t) add(g, s('text', { x: x + 3, y: y + RH - 5, 'font-size': 11, fill: '#111827', text: t }));
		return g;
	}
	function draw() {
		var scale = W / (focus.v || 1), items = [], maxDepth = focus.depth, drawn = 0;
		var chain = [];
		for (var a = focus.parent; a; a = a.parent) chain.unshift(a);
		chain.forEach(function (a) { items.push(frame(a, 0, W, a.depth * RH, 'fr anc')); });
		(function walk(n, x) {
			var w = n.v * scale;
			if (w < MINW) return;
			drawn++;
			maxDepth = Math.max(maxDepth, n.depth);
			items.push(frame(n, x, w, n.depth * RH, 'fr'));
			var cx = x;
			n.kids.forEach(function (k) { walk(k, cx); cx += k.v * scale; });
		})(focus, 0);
		var H = (maxDepth + 1) * RH + 2;
		var svg = s('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img' }, items);
		while (svgBox.firstChild) svgBox.removeChild(svgBox.firstChild);
		svgBox.appendChild(svg);
		reset.disabled = focus === root;
		crumbs.textContent = focus === root ? 'all stacks: ' + fmtW(root.v)
			: chain.concat([focus]).slice(1).map(function (n) { return n.name; }).join(' \u203a ') + ' ' + DASH + ' ' + fmtW(focus.v) + ' (' + pct(focus.v, root.v) + ' of all)';
		if (query) {
			var hit = 0;
			(function sum(n) { if (matches(n)) { hit += n.v; return; } n.kids.forEach(sum); })(root);
			found.textContent = 'highlighted: ' + fmtW(hit) + ' (' + pct(hit, root.v) + ' of all)';
		} else {
			found.textContent = '';
		}
	}
	draw();
	return h('div', null, [h('div', { 'class': 'toolbar' }, [input, reset, found]), h('div', { 'class': 'flame' }, [crumbs, svgBox])]);
}

function renderBlocking() {
	var kb = obj(K.blocking), rb = obj(R.blocking);
	if (!kb && !rb) return;
	var sec = section('blocking', 'Blocking inside polls',
		'Time a worker thread spent off CPU (blocked in a system call, or preempted) while it polled a task (record --offcpu): that task held its worker, and every task queued behind it waited. ' +
		'The cause of each interval is the innermost kernel function below the scheduler and the first frame of the program\'s own code (std, core and the runtimes left out). ' +
		'Intervals while the worker was parked in the runtime, or in its own loop between polls, are not blocking and are counted apart.');
	navLink('blocking', 'Blocking');
	lossNote(sec);
	var sum = kb || rb;
	var cards = [
		['Off-CPU in polls', fmtNs(sum.offcpu_ns), fmtCount(sum.intervals) + ' intervals'],
		['Tasks', fmtCount(isNum(sum.tasks) ? sum.tasks : (arr(rb && rb.tasks) || []).length), 'with off-CPU time in their polls']
	];
	if (kb) cards.push(['Parked (not counted)', fmtNs(kb.parked_ns), fmtCount(kb.parked_intervals) + ' intervals']);
	if (kb && kb.runtime_intervals) cards.push(['Runtime loop (not counted)', fmtNs(kb.runtime_ns), fmtCount(kb.runtime_intervals) + ' intervals outside polls']);
	add(sec, miniCards(cards));
	var tasks = rb && arr(rb.tasks) ? rb.tasks.filter(obj) : [];
	if (!tasks.length) {
		noData(sec, 'no off-CPU time inside task polls');
	} else {
		var causes = [];
		tasks.forEach(function (t) {
			(arr(t.causes) || []).filter(obj).forEach(function (c) {
				causes.push({ task: t, ident: taskIdent(t), name: t.name, id: t.id, header: t.header, kernel: c.kernel, user: c.user, ns: c.ns, count: c.count,
					share: isNum(c.ns) && isNum(t.offcpu_ns) && t.offcpu_ns > 0 ? c.ns / t.offcpu_ns : null });
			});
		});
		add(sec, h('div', { 'class': 'sub' }, [h('h3', { text: 'By task' }), table([
			colTask(), colName('name', 'name', 70),
			colDur('off CPU', 'offcpu_ns'), colNum('intervals', 'intervals'), colDur('of which preempted', 'preempted_ns'),
			{ label: 'main cause', cls: 'name', get: function (t) {
				var c = obj((arr(t.causes) || [])[0]);
				return c ? String(c.kernel) + ' \u2190 ' + String(c.user) : null;
			}, fmt: function (v) { return v == null ? null : shorten(v, 90); }, title: function (t) {
				var c = obj((arr(t.causes) || [])[0]);
				return c ? String(c.kernel) + ' \u2190 ' + String(c.user) : null;
			} }
		], tasks, { sort: 2, desc: true, noun: 'tasks', cut: ['blocking.tasks', 'the most off-CPU time', [['offcpu_ns', 'off CPU', fmtNs], ['intervals', 'intervals']]] })]));
		if (causes.length) add(sec, h('div', { 'class': 'sub' }, [h('h3', { text: 'By cause' }),
			h('p', { 'class': 'hint', text: 'kernel function: where the thread went off CPU; user frame: the first frame of the program\'s own code on the way there ("?": none found, e.g. a release build without frame pointers).' }),
			table([
				colTask(function (c) { return c.ident; }), colName('name', 'name', 50), colName('kernel function', 'kernel', 40), colName('user frame', 'user', 70),
				colDur('off CPU', 'ns'), colNum('intervals', 'count'),
				{ label: 'share of the task', num: true, get: function (c) { return c.share; }, fmt: fmtPct }
			], causes, { sort: 4, desc: true, noun: 'causes' })]));
	}
	var st = kb && arr(kb.stacks);
	if (st && st.length) {
		add(sec, h('div', { 'class': 'sub' }, [h('h3', { text: 'Blocking flame graph' }),
			h('p', { 'class': 'hint', text: 'Off-CPU time inside polls by stack: the task at the top, then the user frames (outermost first), then the kernel frames down to where the thread left the CPU. Width: off-CPU time. The stacks start at the task\'s own code: the runtime\'s and std\'s frames between the task and its code are folded away (asyncscope blocking --folded --all-frames keeps them). The same stacks as asyncscope blocking --folded --unit ns.' }),
			flameLegend('off-CPU time', false),
			flameGraph(st, fmtNs, kb.stacks_omitted_ns, '(' + fmtCount((kb.stacks_total || 0) - st.length) + ' lighter stacks)')]));
		if (isNum(kb.stacks_total) && kb.stacks_total > st.length)
			add(sec, h('p', { 'class': 'hint', text: 'The graph holds the ' + fmtCount(st.length) + ' heaviest of ' + fmtCount(kb.stacks_total) + ' stacks; the others (' + fmtNs(kb.stacks_omitted_ns) + ') are one frame of their own.' }));
	}
}

var CPU_KINDS = { task: 'task', scheduler: 'scheduler', idle: 'idle (parked)', 'outside-runtime': 'outside the runtime' };
function renderCpu() {
	var c = obj(K.cpu);
	if (!c) return;
	var sec = section('cpu', 'CPU samples',
		'Where the CPU went (record --sample HZ): CPU-clock samples of the target, each given to the task polled on its thread at that moment. ' +
		'Samples of a worker between polls (and of the runtime\'s own tasks) go to the scheduler, of a parked worker to idle, and of threads that never polled to outside the runtime.');
	navLink('cpu', 'CPU samples');
	lossNote(sec);
	var total = isNum(c.samples) ? c.samples : 0;
	add(sec, miniCards([
		['Samples', fmtCount(c.samples), null],
		['In task polls', fmtCount(c.in_tasks), total > 0 && isNum(c.in_tasks) ? fmtPct(c.in_tasks / total) + ' of the samples' : null],
		['Tasks', fmtCount(c.tasks), 'with samples']
	]));
	var rows = (arr(c.rows) || []).filter(obj);
	if (!rows.length) noData(sec, 'no samples');
	else add(sec, h('div', { 'class': 'sub' }, [h('h3', { text: 'By task' }), table([
		colTask(function (r) { return r.kind === 'task' ? taskIdent(r) : null; }), colName('where', 'name', 70),
		{ label: 'kind', get: function (r) { return r.kind != null ? CPU_KINDS[r.kind] || String(r.kind) : null; } },
		colNum('samples', 'samples'),
		{ label: 'share', num: true, get: function (r) { return isNum(r.samples) && total > 0 ? r.samples / total : null; }, fmt: fmtPct }
	], rows, { sort: 3, desc: true, noun: 'rows' })]));
	if (isNum(c.rows_total) && c.rows_total > rows.length)
		add(sec, h('p', { 'class': 'hint', text: fmtCount(c.rows_total - rows.length) + ' more rows (' + fmtCount(c.rows_omitted_samples) + ' samples) are not listed.' }));
	var st = arr(c.stacks);
	if (st && st.length) {
		add(sec, h('div', { 'class': 'sub' }, [h('h3', { text: 'CPU flame graph, by task' }),
			h('p', { 'class': 'hint', text: 'Samples by stack: the task (or scheduler, idle, outside the runtime) at the top, then the user frames (outermost first), then the kernel frames. Width: samples. The stacks start at the task\'s own code: the runtime\'s and std\'s frames between the task and its code are folded away (asyncscope cpu --folded --all-frames keeps them). The same stacks as asyncscope cpu --folded.' }),
			flameLegend('samples', true),
			flameGraph(st, function (v) { return fmtCount(v) + (v === 1 ? ' sample' : ' samples'); }, c.stacks_omitted, '(' + fmtCount((c.stacks_total || 0) - st.length) + ' lighter stacks)')]));
		if (isNum(c.stacks_total) && c.stacks_total > st.length)
			add(sec, h('p', { 'class': 'hint', text: 'The graph holds the ' + fmtCount(st.length) + ' heaviest of ' + fmtCount(c.stacks_total) + ' stacks; the others (' + fmtCount(c.stacks_omitted) + ' samples) are one frame of their own.' }));
	}
}

function renderRunq() {
	var q = obj(K.runq);
	if (!q) return;
	var sec = section('runq', 'Run-queue delay',
		'How long the target\'s threads waited for a CPU once runnable (woken, or preempted, until running again; record --runq or --offcpu). ' +
		'A worker that waits long here is starved by the operating system (other processes, CPU limits), not by the runtime: compare with its tasks\' scheduling delay.');
	navLink('runq', 'Run queue');
	lossNote(sec);
	var th = (arr(q.threads) || []).filter(obj);
	if (!th.length) return noData(sec, 'no run-queue waits');
	add(sec, table([
		colId('tid', 'tid'), colName('thread', 'name', 40),
		{ label: 'kind', get: function (t) { return t.worker === true ? 'worker' : t.worker === false ? 'other' : null; } },
		colNum('waits', 'waits'), colNum('in a poll', 'in_poll'),
		colDur('p50', 'p50_ns'), colDur('p99', 'p99_ns'), colDur('max', 'max_ns'), colDur('total', 'total_ns')
	], th, { sort: 2, desc: true, noun: 'threads', rowClass: function (t) { return t.worker === false ? 'worker' : null; } }));
	if (isNum(q.threads_total) && q.threads_total > th.length)
		add(sec, h('p', { 'class': 'hint', text: fmtCount(q.threads_total - th.length) + ' more threads are not listed.' }));
}

function renderUring() {
	var u = obj(K.uring);
	if (!u) return;
	var sec = section('uring', 'io_uring requests',
		'io_uring submissions made inside each task\'s polls (record --uring), their completions and the completion latency (from submission to completion). Requests submitted outside any poll have a row of their own.');
	navLink('uring', 'io_uring');
	lossNote(sec);
	add(sec, miniCards([
		['Submitted', fmtCount(u.submitted), null],
		['Completed', fmtCount(u.completed), null],
		['Failed', fmtCount(u.failed), 'completed with an error', isNum(u.failed) && u.failed > 0 ? 'bad' : null]
	]));
	var tasks = (arr(u.tasks) || []).filter(obj);
	if (!tasks.length) return noData(sec, 'no io_uring request');
	add(sec, h('div', { 'class': 'sub' }, table([
		colTask(function (r) { return r.header != null || isNum(r.id) ? taskIdent(r) || r.header : null; }), colName('name', 'name', 70),
		colNum('submitted', 'submitted'), colNum('completed', 'completed'), colNum('failed', 'failed'),
		colDur('latency p50', 'p50_ns'), colDur('latency p99', 'p99_ns'), colDur('latency max', 'max_ns')
	], tasks, { sort: 2, desc: true, noun: 'rows' })));
	if (isNum(u.tasks_total) && u.tasks_total > tasks.length)
		add(sec, h('p', { 'class': 'hint', text: fmtCount(u.tasks_total - tasks.length) + ' more rows are not listed.' }));
}
